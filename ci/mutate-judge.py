#!/usr/bin/python3
"""Who judges the judge (issue 26): the judge's mutant campaign.

Two kinds of hand-written mutants of the code that decides PASS or FAIL for other people's
kernels, each named after the rule it breaks:
  * C++ switches (reference/include/ixo/judge_mutants.hpp: verdict tiers, tau, decoding, .npy,
    exec:, fuzz/suite), compiled into test builds and selected at run time by
    IXO_JUDGE_MUTANT=<id>: no rebuild per mutant;
  * Python text patches of python/indexer_oracle (PY_MUTANTS below), applied to a scratch copy
    of the built package.
Each mutant runs its killer first (a test executable with an optional gtest filter, a ctest
regex or a pytest node), then the area's wider tests; the first failing one kills it. A kill
counts only if that test passes without the mutant (checked once per test, when it first
kills). Prints the kill matrix per area, writes JSON / markdown; exit 0 when every mutant is
killed, 1 otherwise (or when nothing ran), 2 on bad arguments.

  /usr/bin/python3 ci/mutate-judge.py --build build [--only ID ...] [--shard I/N]
      [--json FILE] [--markdown FILE] [--no-fallback]
"""
import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "reference", "include", "ixo", "judge_mutants.hpp")

# The wider tests of each area, run when the killer lets a mutant live (ctest regexes).
FALLBACK = {
    "reference": "ctest:^(Verdict|Quantized|Oracle|Handworked|Decode|Npy|BadInput|NewDtype|Paged|cli\\.)",
    "external": "ctest:^python\\.test_exec_backend",
    "suite": "ctest:^(python\\.test_fuzz_and_suite|python\\.test_suite_python|cli\\.fuzz)",
    "python": "ctest:^python\\.test_(api|fuzz_and_suite|new_dtypes|paged)",
}

# Python-source mutants: (id, key, file, old text, new text, rule, killer).
PY_MUTANTS = [
    ("P1", "ids_int32_wrap", "_verdict.py",
     "if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):",
     "if False:", "topk_idx values outside int32 are a ValueError, never wrapped",
     "pytest:test_api.py::test_bad_input_raises_value_error_naming_the_field"),
    ("P2", "rht_layout_not_transposed", "_verdict.py", "        a = a.transpose(1, 0, 2)\n", "        a = a\n",
     "layout 'rht' ([R, Hq, topk]) is transposed to [Hq, R, topk]",
     "pytest:test_api.py::test_check_passes_the_reference_and_accepts_the_rht_layout"),
    ("P3", "scores_dtype_unchecked", "_verdict.py", "    if a.dtype != np.float32:\n", "    if False:\n",
     "scores must be float32 (a float64 buffer is a ValueError)",
     "pytest:test_api.py::test_bad_input_raises_value_error_naming_the_field"),
    ("P4", "assert_indexer_silent", "_verdict.py", "    if not v.passed:\n        raise AssertionError(v.report)",
     "    if False:\n        raise AssertionError(v.report)",
     "assert_indexer raises AssertionError on a failing verdict",
     "pytest:test_api.py::test_a_wrong_selection_fails_with_structured_failures"),
    ("P5", "unsupported_is_ok", "_kernels.py",
     '            return ("unsupported", str(e) or "kernel raised Unsupported")',
     '            raise', "io.Unsupported declines a case (a skip), it is not a kernel error",
     "pytest:test_fuzz_and_suite.py::test_a_kernel_that_declines_everything_judged_nothing_and_does_not_pass"),
    ("P6", "nothing_judged_passes", "_kernels.py", '        return self.outcome == "PASS"',
     '        return self.outcome in ("PASS", "NOTHING JUDGED")', "NOTHING JUDGED is not a pass",
     "pytest:test_fuzz_and_suite.py::test_a_kernel_that_declines_everything_judged_nothing_and_does_not_pass"),
    ("P7", "case_int_wrap", "_case.py", "        if bad.any():\n", "        if False:\n",
     "integer case arrays outside the target type are a ValueError naming the value, never wrapped",
     "pytest:test_api.py::test_req_to_token_out_of_int32_range_is_refused_not_wrapped"),
]


def cpp_mutants():
    text = open(HEADER).read().replace("\\\n", " ")  # the X-macro's line continuations
    out = []
    for m in re.finditer(r'X\((\d+),\s*(\w+),\s*"(\w+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+),\s*"([^"]+)"\)', text):
        rule = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(4)))
        out.append({"id": m.group(1), "key": m.group(2), "area": m.group(3), "rule": rule, "killer": m.group(5),
                    "kind": "switch"})
    return out


@functools.lru_cache(maxsize=None)  # one walk of the build tree per executable, not per mutant
def find_exe(build, name):
    """The build's own executable (tools/ixo/ixo, tests/<dir>/<name>), never a staged install copy."""
    if name == "ixo" and os.access(os.path.join(build, "tools", "ixo", "ixo"), os.X_OK):
        return os.path.join(build, "tools", "ixo", "ixo")
    for d, dirs, fs in os.walk(build):
        dirs[:] = [x for x in dirs if x not in ("stage", "install", "_deps")]
        if name in fs and os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def run(cmd, env, cwd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout)
        return p.returncode, p.stdout, time.time() - t0
    except subprocess.TimeoutExpired:
        return "timeout", "", time.time() - t0


class Campaign:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.baseline = {}  # test spec -> (passes, output tail)
        self.pkg = os.path.join(self.build, "python", "indexer_oracle")
        self.ixo = find_exe(self.build, "ixo")

    def env(self, mutant_id=None, pythonpath=None):
        e = dict(os.environ)
        e.pop("IXO_JUDGE_MUTANT", None)
        if mutant_id:
            e["IXO_JUDGE_MUTANT"] = mutant_id
        e["OMP_NUM_THREADS"] = "2"
        e["PYTHONDONTWRITEBYTECODE"] = "1"
        e["PYTHONPATH"] = (pythonpath or os.path.join(self.build, "python")) + os.pathsep + os.path.join(ROOT, "examples")
        if self.ixo:
            e["IXO"] = self.ixo
        e["IXO_EXAMPLES"] = os.path.join(ROOT, "examples")
        return e

    def command(self, spec):
        """(argv, cwd) of a test spec: BINARY[:FILTER], ctest:REGEX or pytest:FILE[::NODE]."""
        if spec.startswith("ctest:"):
            return ["ctest", "-R", spec[6:], "-j", str(self.a.jobs), "--stop-on-failure", "--output-on-failure",
                    "-LE", "cuda"], self.build
        if spec.startswith("pytest:"):
            return [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                    os.path.join(ROOT, "python", "tests", spec[7:])], os.path.join(ROOT, "python", "tests")
        name, _, filt = spec.partition(":")
        exe = find_exe(self.build, name)
        if exe is None:
            raise SystemExit(f"mutate-judge: no test executable '{name}' in {self.build} (build it first)")
        return [exe] + ([f"--gtest_filter={filt}"] if filt else []), self.build

    def passes(self, spec, mutant_id=None, pythonpath=None):
        argv, cwd = self.command(spec)
        rc, out, dt = run(argv, self.env(mutant_id, pythonpath), cwd, self.a.timeout)
        return rc == 0, out, dt

    def passes_unmutated(self, spec):
        if spec not in self.baseline:
            ok, out, _ = self.passes(spec)
            self.baseline[spec] = (ok, out[-2000:])
        return self.baseline[spec][0]

    def scratch_package(self, m):
        d = tempfile.mkdtemp(prefix="ixo-judge-py-")
        shutil.copytree(self.pkg, os.path.join(d, "indexer_oracle"))
        path = os.path.join(d, "indexer_oracle", m["file"])
        text = open(path).read()
        if text.count(m["old"]) != 1:
            shutil.rmtree(d)
            raise SystemExit(f"mutate-judge: {m['id']} ({m['key']}): the text to patch is not in {m['file']} exactly once")
        open(path, "w").write(text.replace(m["old"], m["new"]))
        return d

    def run_mutant(self, m):
        specs = [m["killer"]] + ([] if self.a.no_fallback else [FALLBACK[m["area"]]])
        scratch = self.scratch_package(m) if m["kind"] == "patch" else None
        t0 = time.time()
        try:
            for spec in specs:
                ok, out, _ = self.passes(spec, None if scratch else m["id"], scratch)
                if not ok:
                    if not self.passes_unmutated(spec):
                        raise SystemExit(f"mutate-judge: {spec} fails WITHOUT a mutant (not a kill):\n"
                                         f"{self.baseline[spec][1]}")
                    return "killed", spec, time.time() - t0
            return "SURVIVED", "-", time.time() - t0
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", nargs="*", help="mutant ids (1, 2, ... P1, ...)")
    ap.add_argument("--shard", default="0/1", help="I/N: the I-th of N shards (whole groups of one killer each)")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--no-fallback", action="store_true", help="only each mutant's own killer")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per test command (a hang guard)")
    a = ap.parse_args()
    m = re.fullmatch(r"(\d+)/(\d+)", a.shard)
    if not m or int(m.group(2)) < 1 or int(m.group(1)) >= int(m.group(2)):
        print(f"mutate-judge: --shard: expected I/N with 0 <= I < N, got {a.shard!r}")
        return 2
    if not os.path.isdir(a.build):
        print(f"mutate-judge: --build: no directory {a.build}")
        return 2
    mutants = cpp_mutants() + [{"id": i, "key": k, "area": "python", "file": f, "old": o, "new": n, "rule": r,
                                "killer": kl, "kind": "patch"} for i, k, f, o, n, r, kl in PY_MUTANTS]
    if a.only:
        mutants = [x for x in mutants if x["id"] in a.only]
    # Shards take whole killer groups: a killer's unmutated baseline then runs in one shard only.
    i, n = int(m.group(1)), int(m.group(2))
    groups = {}
    for x in mutants:
        groups.setdefault(x["killer"], []).append(x)
    mutants = [x for j, g in enumerate(groups.values()) if j % n == i for x in g]
    if not mutants:
        print("mutate-judge: NOTHING JUDGED: no mutant selected")
        return 1
    c = Campaign(a)
    print(f"{'id':>3} {'mutant':<32} {'area':<9} {'result':<9} {'killed by':<44} seconds", flush=True)
    for x in mutants:
        x["result"], x["killed_by"], x["seconds"] = c.run_mutant(x)
        print(f"{x['id']:>3} {x['key']:<32} {x['area']:<9} {x['result']:<9} {x['killed_by']:<44} {x['seconds']:7.1f}",
              flush=True)
    areas = {}
    for x in mutants:
        k = areas.setdefault(x["area"], [0, 0])
        k[0] += x["result"] == "killed"
        k[1] += 1
    print()
    for area, (k, t) in areas.items():
        print(f"{area:<10} {k}/{t} killed ({100.0 * k / t:.1f} %)")
    killed = sum(x["result"] == "killed" for x in mutants)
    print(f"judge mutants: {killed}/{len(mutants)} killed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"mutants": [{k: v for k, v in x.items() if k not in ("old", "new")} for x in mutants],
                       "areas": {k: {"killed": v[0], "total": v[1]} for k, v in areas.items()}}, f, indent=1)
    if a.markdown:
        rows = ["| id | mutant | area | rule | result | killed by | s |", "|---|---|---|---|---|---|---|"]
        rows += [f"| {x['id']} | `{x['key']}` | {x['area']} | {x['rule']} | {x['result']} | `{x['killed_by']}` | "
                 f"{x['seconds']:.1f} |" for x in mutants]
        with open(a.markdown, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0 if killed == len(mutants) else 1


if __name__ == "__main__":
    sys.exit(main())

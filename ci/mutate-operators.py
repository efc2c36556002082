#!/usr/bin/python3
"""Automatic operator mutator for the kernel formulas (a report, not a gate).

Files (--files, default all): kernels/common/indexer_common.hpp, plans.hpp, cp_common.hpp,
cp_plan.hpp and kernels/cpu/*.cpp (the CPU twin and the CP twin). --max N takes an even
spread of N mutants from EACH file (0: all); mutants are numbered over the files in order.

Generates operator mutants of the shared formulas -- relational flips (< <= > >= == !=),
arithmetic flips (+ - * /), +-1 on integer constants and bounds, swapped call arguments --
builds each one in a scratch copy of the tree (CPU only, target `ixo`, one incremental build
directory: the header is mutated, rebuilt, run, then restored) and runs

    ixo mutate --no-mutants --backend cpu-rows --backend cpu-packed --backend cpu-cp

A nonzero exit (or a timeout / crash) kills the mutant; a mutant that does not compile is
'stillborn' (neither killed nor surviving). Lines that hold IXO_MUTANT switches, comments and
preprocessor lines are not mutated. Writes a markdown table and a JSON file.

  /usr/bin/python3 ci/mutate-operators.py [--max N] [--scratch DIR] [--out FILE.md]
      [--json FILE.json] [--list] [--only ID ...] [--property-cases N] [--timeout S]
      [--tests TARGET ...]

--tests names host test executables (CMake targets, e.g. test_common test_cp; TARGET:FILTER
runs it with --gtest_filter=FILTER): each mutant that the ixo suite lets survive is then
built into those tests and they run (all must pass unmutated); a failing test kills it,
"killed by" reads `test:TARGET`. Without --tests the report is the ixo suite's alone.

The judge (issue 26): --tests-only judges each mutant by its killers alone (no ixo suite
run): --tests host executables, then --pytest NODE ... (python/tests FILE or FILE::TEST, run
with /usr/bin/python3 -m pytest -x -q against the scratch build's package; with --pytest a
C++ mutant also rebuilds `ixo` and the module `_core`). A mutant survives only if every
killer passes; every killer must pass unmutated first, or nothing is reported. Python files
(.py) get Python operator mutants (ci/opmut_py.py) and need no rebuild. --equivalent FILE
names survivors shown equivalent (ci/judge-ops-equivalent.json): they are reported as such.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmut_py  # noqa: E402  (Python mutants, pytest killers)
import opmut_report  # noqa: E402  (equivalence list, per-file scores, markdown)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["kernels/common/indexer_common.hpp", "kernels/common/plans.hpp", "kernels/common/cp_common.hpp",
           "kernels/cp_plan.hpp", "kernels/cpu/cpu_twin.cpp", "kernels/cpu/cp_twin.cpp"]


STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')


def code_part(line):
    """The code of a line without a trailing // comment; the text of string literals (error
    messages) is blanked, column for column, so that nothing inside a string is mutated."""
    line = STRING_RE.sub(lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', line)
    i = line.find("//")
    return line if i < 0 else line[:i]


def spaced(code, a, b):
    """A binary operator in this code base's style has a blank on both sides; template
    brackets (vector<float>, static_cast<int>(x)), pointer declarators (float* p) and
    dereferences (*a.c), unary minus (-1) do not."""
    return a > 0 and code[a - 1] in " \t" and b < len(code) and code[b] in " \t"


def mutable_line(line):
    s = line.strip()
    if not s or s.startswith("//") or s.startswith("#") or s.startswith("*") or s.startswith("/*"):
        return False
    if "IXO_MUTANT" in line or "IXO_JUDGE_MUTANT" in line or "mutants::" in line:
        return False
    return True


# Operator tokens with the replacement(s) each gets; matched only where the neighbours do
# not extend the token (<<, >>, ->, ++, +=, template brackets are excluded below).
REL = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"], "==": ["!="], "!=": ["=="]}
ARITH = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"]}
TOKEN_RE = re.compile(r"<<=|>>=|<<|>>|<=|>=|==|!=|->|\+\+|--|\+=|-=|\*=|/=|&&|\|\||[<>+\-*/]")


def operator_mutants(lineno, line):
    out = []
    code = code_part(line)
    for m in TOKEN_RE.finditer(code):
        tok = m.group(0)
        a, b = m.start(), m.end()
        before = code[:a].rstrip()
        after = code[b:].lstrip()
        if tok in ("<", ">", "*", "/", "+", "-") and not spaced(code, a, b):
            continue
        if tok in REL:
            # skip template brackets / casts: static_cast<...>, std::int64_t> etc.
            if tok in ("<", ">") and (re.search(r"(cast|template|std::\w+)\s*$", before) or before.endswith("_cast")):
                continue
            if tok == ">" and re.search(r"static_cast<[^>]*$", code[:a]):
                continue
            if tok == "<" and re.match(r"\s*(std::)?u?int\d+_t\s*>", code[b:]):
                continue
            for r in REL[tok]:
                out.append(("relational", lineno, a, tok, r))
        elif tok in ARITH:
            if tok == "*" and (re.search(r"(float|int|std::\w+|const)\s*$", before) or after.startswith(")")):
                continue  # pointer declarators / casts
            if tok == "-" and (not before or before[-1] in "(=,?:<>!&|+-*/" or before.endswith("return")):
                continue  # unary minus
            if tok == "+" and (not before or before[-1] in "(=,?:"):
                continue
            if tok == "+" and (before.endswith('"') or after.startswith('"')):
                continue  # string concatenation (error messages): `-` would not compile
            for r in ARITH[tok]:
                out.append(("arithmetic", lineno, a, tok, r))
    return out


INT_RE = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


def constant_mutants(lineno, line):
    out = []
    code = code_part(line)
    for m in INT_RE.finditer(code):
        v = int(m.group(1))
        # array sizes / shifts of bit patterns are fine to mutate too; hex literals are skipped by the regex
        out.append(("constant", lineno, m.start(), m.group(1), str(v + 1)))
        if v > 0:
            out.append(("constant", lineno, m.start(), m.group(1), str(v - 1)))
    return out


CALL_RE = re.compile(r"\b(\w+)\(([A-Za-z_][\w.\[\]]*), ([A-Za-z_][\w.\[\]]*)\)")
TERNARY_RE = re.compile(r"\? ([^:;?]+?) : ([^;?]+?)(;|\)$|\);)")


def balanced(expr):
    depth = 0
    for ch in expr:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def swap_mutants(lineno, line):
    out = []
    code = code_part(line)
    for m in CALL_RE.finditer(code):
        if m.group(1) in ("if", "while", "for", "return", "sizeof", "__builtin_memcpy"):
            continue
        a, b = m.group(2), m.group(3)
        if a == b:
            continue
        orig = m.group(0)
        new = f"{m.group(1)}({b}, {a})"
        out.append(("swap", lineno, m.start(), orig, new))
    for m in TERNARY_RE.finditer(code):
        x, y = m.group(1).strip(), m.group(2).strip()
        if x == y or not (balanced(x) and balanced(y)):
            continue  # a branch cut short by the pattern would not compile (or would be a different swap)
        # the text of the original line (string literals are blanked in `code`)
        g1, g2 = line[m.start(1):m.end(1)], line[m.start(2):m.end(2)]
        orig = f"? {g1} : {g2}"
        new = f"? {g2} : {g1}"
        out.append(("swap", lineno, m.start(), orig, new))
    return out


def generate(lines):
    muts = []
    in_block_comment = False
    switch_depth = 0  # > 0 inside the braces of an `if (IXO_MUTANT(...)) {` block: dead code unmutated
    for i, line in enumerate(lines):
        if "/*" in line and "*/" not in line:
            in_block_comment = True
        if in_block_comment:
            if "*/" in line:
                in_block_comment = False
            continue
        code = code_part(line)
        if switch_depth > 0:
            switch_depth += code.count("{") - code.count("}")
            continue
        if "IXO_MUTANT" in code and code.rstrip().endswith("{"):
            switch_depth = code.count("{") - code.count("}")
            continue
        if not mutable_line(line):
            continue
        # `int mutant = 0` defaults select no mutant; other ids on a default are equivalent too.
        cm = [m for m in constant_mutants(i, line) if not re.search(r"mutant = $", code_part(line)[:m[2]])]
        muts += operator_mutants(i, line) + cm + swap_mutants(i, line)
    # Deduplicate identical resulting lines.
    seen, uniq = set(), []
    for kind, ln, col, orig, rep in muts:
        key = (ln, col, orig, rep)
        if key in seen:
            continue
        seen.add(key)
        uniq.append({"kind": kind, "line": ln + 1, "col": col, "orig": orig, "repl": rep})
    return uniq


def apply(lines, m):
    i = m["line"] - 1
    line = lines[i]
    col = m["col"]
    assert line[col:col + len(m["orig"])] == m["orig"], (m, line)
    new = line[:col] + m["repl"] + line[col + len(m["orig"]):]
    return lines[:i] + [new] + lines[i + 1:]


def pick(muts, n):
    """A deterministic spread over the file: round-robin over kinds, in file order."""
    if n <= 0 or n >= len(muts):
        return muts
    by_kind = {}
    for m in muts:
        by_kind.setdefault(m["kind"], []).append(m)
    # take evenly spaced mutants of each kind, in proportion but at least a few per kind
    share = {k: max(6, round(n * len(v) / len(muts))) for k, v in by_kind.items()}
    while sum(share.values()) > n:
        k = max(share, key=lambda k: share[k])
        share[k] -= 1
    chosen = []
    for k, v in by_kind.items():
        s = min(share[k], len(v))
        if s <= 0:
            continue
        step = len(v) / s
        chosen += [v[int((j + 0.5) * step)] for j in range(s)]  # the middle of each stride
    chosen.sort(key=lambda m: (m["line"], m["col"], m["repl"]))
    return chosen


def sh(cmd, cwd, timeout=None, log=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           text=True, errors="replace")
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.stdout or "") if isinstance(e.stdout, str) else ""
    if log:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(cmd)}  (rc {rc}, {time.time() - t0:.1f} s)\n{out[-4000:]}\n")
    return rc, out, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=16, help="mutants per file (0: all generated)")
    ap.add_argument("--files", nargs="*", default=TARGETS, help="files to mutate (repository paths)")
    ap.add_argument("--scratch", default="/tmp/ixo-opmut")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "mutation-operators.md"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--list", action="store_true", help="only list the generated mutants")
    ap.add_argument("--only", type=int, nargs="*", help="run only these mutant numbers")
    ap.add_argument("--property-cases", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=240, help="seconds per ixo run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tests", nargs="*", default=[], help="host test targets (TARGET[:GTEST_FILTER]) run on the ixo suite's survivors")
    ap.add_argument("--pytest", nargs="*", default=[], help="pytest killers: python/tests FILE or FILE::TEST")
    ap.add_argument("--equivalent", default=None, help="JSON list of survivors shown equivalent, with arguments")
    ap.add_argument("--tests-only", action="store_true",
                    help="judge each mutant by the --tests alone (no ixo build, no suite run): the judge's files "
                         "(reference/src, suite/src, kernels/external), whose killers are host tests")
    a = ap.parse_args()

    sources = {f: open(os.path.join(ROOT, f)).read().split("\n") for f in a.files}
    muts, generated = [], {}
    for f in a.files:
        every = opmut_py.generate(sources[f]) if f.endswith(".py") else generate(sources[f])
        generated[f] = len(every)
        for m in pick(every, a.max):
            m["file"] = f
            muts.append(m)
    for n, m in enumerate(muts, 1):
        m["n"] = n
        m["code"] = sources[m["file"]][m["line"] - 1].strip()
    if a.list:
        for m in muts:
            print(f"{m['n']:3} {m['file']:<34} {m['kind']:<10} L{m['line']:<4} {m['orig']!r} -> {m['repl']!r}: {m['code']}")
        return 0
    if a.only:
        muts = [m for m in muts if m["n"] in a.only]

    a.scratch = os.path.abspath(a.scratch)  # test binaries run with the build folder as their cwd
    src, build = os.path.join(a.scratch, "src"), os.path.join(a.scratch, "build")
    log = os.path.join(a.scratch, "log.txt")
    os.makedirs(a.scratch, exist_ok=True)
    # Scratch copy of the tracked + untracked source files (no build folders, no .git).
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split("\n")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        d = os.path.join(src, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not os.path.exists(d) or open(os.path.join(ROOT, f), "rb").read() != open(d, "rb").read():
            shutil.copy2(os.path.join(ROOT, f), d)
    def restore_all():
        for fn, lines in sources.items():
            with open(os.path.join(src, fn), "w") as f:
                f.write("\n".join(lines))
    restore_all()
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
        rc, out, _ = sh(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DIXO_CUDA=OFF",
                         "-DIXO_WERROR=OFF"] + launcher, ROOT, log=log)
        if rc != 0:
            print(out[-3000:])
            return 2
    if (a.tests_only and not (a.tests or a.pytest)) or (any(f.endswith(".py") for f in a.files) and not a.pytest):
        print("--tests-only needs --tests TARGET ... or --pytest NODE ...; a .py file needs --pytest NODE ...")
        return 2
    test_targets = list(dict.fromkeys(t.partition(":")[0] for t in a.tests))
    py_targets = ["ixo", "_core"] if a.pytest else []
    build_cmd = ["cmake", "--build", build, "-j", str(a.jobs), "--target"] + \
        ((test_targets + py_targets) if a.tests_only else ["ixo"] + py_targets)
    ixo = os.path.join(build, "tools", "ixo", "ixo")
    run_cmd = [ixo, "mutate", "--no-mutants", "--backend", "cpu-rows", "--backend", "cpu-packed", "--backend", "cpu-cp",
               "--property-cases", str(a.property_cases)]
    rc, out, t = sh(build_cmd, ROOT, log=log)
    if rc != 0:
        print("pristine build failed:\n" + out[-3000:])
        return 2
    rc, out, t = (0, "", 0.0) if a.tests_only else sh(run_cmd, ROOT, timeout=a.timeout * 2, log=log)
    if rc != 0:
        print("the unmutated run fails:\n" + out[-3000:])
        return 2
    def find_binary(name):
        for d, _, fs in os.walk(build):
            if name in fs and os.access(os.path.join(d, name), os.X_OK):
                return os.path.join(d, name)
        return None

    def run_tests(built=False):
        """(None, "") when every --tests binary passes, else (killed-by, output). built: the
        --tests targets were just built by build_cmd (--tests-only), so no second build."""
        if not built and test_targets:
            rc, out, _ = sh(["cmake", "--build", build, "-j", str(a.jobs), "--target"] + test_targets, ROOT, log=log)
            if rc != 0:
                return "tests do not compile", out
        for spec in a.tests:
            name, _, filt = spec.partition(":")
            exe = find_binary(name)
            if exe is None:
                return f"no executable {name} in {build}", ""
            rc, out, _ = sh([exe] + ([f"--gtest_filter={filt}"] if filt else []), build, timeout=a.timeout, log=log)
            if rc != 0:
                return f"test:{spec}", out
        return run_py()

    def run_py():
        if not a.pytest:
            return None, ""
        return opmut_py.run_pytest(a.pytest, src, build, a.timeout, log=log)

    print(f"pristine: builds and passes ({t:.1f} s); {len(muts)} mutants", flush=True)
    if a.tests or a.pytest:
        by, out = run_tests(built=a.tests_only)
        if by:
            print(f"the unmutated killers fail ({by}): no report\n" + out[-3000:])
            return 2
        print(f"pristine killers pass: {' '.join(a.tests + a.pytest)}", flush=True)

    env_note = []
    results = []
    t_all = time.time()
    try:
        for m in muts:
            target = os.path.join(src, m["file"])
            mutated = "\n".join(apply(sources[m["file"]], m))
            is_py = m["file"].endswith(".py")
            if is_py:
                opmut_py.install_py(src, build, m["file"], mutated)
                rc, tb = (0 if opmut_py.compiles(mutated, m["file"]) else 1), 0.0
            else:
                with open(target, "w") as f:
                    f.write(mutated)
                rc, out, tb = sh(build_cmd, ROOT, log=log)
            if rc != 0:
                m.update(status="stillborn", build_s=round(tb, 1), run_s=0, by="compile error")
            elif is_py:
                t0 = time.time()
                by, _ = run_py()
                m["build_s"], m["run_s"] = 0.0, round(time.time() - t0, 1)
                m.update(status="killed" if by else "SURVIVED", by=by or "-")
            elif a.tests_only:
                t0 = time.time()
                by, _ = run_tests(built=True)
                m["build_s"], m["run_s"] = round(tb, 1), round(time.time() - t0, 1)
                if by and by.startswith(("test:", "pytest:")):
                    m.update(status="killed", by=by)
                elif by:
                    m.update(status="stillborn", by=by)
                else:
                    m.update(status="SURVIVED", by="-")
            else:
                rc, out, tr = sh(run_cmd, ROOT, timeout=a.timeout, log=log)
                m["build_s"], m["run_s"] = round(tb, 1), round(tr, 1)
                if rc == 0:
                    m.update(status="SURVIVED", by="-")
                    if a.tests:
                        t0 = time.time()
                        by, _ = run_tests()
                        m["tests_s"] = round(time.time() - t0, 1)
                        if by and by.startswith(("test:", "pytest:")):
                            m.update(status="killed", by=by)
                        elif by:  # the tests did not compile or were not found: the mutant stays a survivor
                            m.update(by=f"- (host tests: {by})")
                else:
                    by = "timeout" if rc == "timeout" else f"exit {rc}"
                    f = re.search(r"UNMUTATED SUITE FAILS at (\S+): ", out)
                    if f:
                        by = f.group(1)
                    elif rc not in (1, "timeout"):
                        by = f"crash (exit {rc})"
                    m.update(status="killed", by=by)
            if is_py:
                opmut_py.install_py(src, build, m["file"], "\n".join(sources[m["file"]]))
            else:
                with open(target, "w") as f:
                    f.write("\n".join(sources[m["file"]]))
            print(f"{m['n']:3} {os.path.basename(m['file']):<20} {m['kind']:<10} L{m['line']:<4} {m['orig']} -> {m['repl']:<12} {m['status']:<9} "
                  f"{m['by']:<34} build {m['build_s']:5.1f} s run {m['run_s']:5.1f} s", flush=True)
            results.append(m)
    finally:
        restore_all()
        for fn in sources:
            if fn.endswith(".py"):
                opmut_py.install_py(src, build, fn, "\n".join(sources[fn]))
    total = time.time() - t_all
    opmut_report.mark_equivalent(results, opmut_report.load_equivalent(a.equivalent))
    summary, per_file = opmut_report.summarize(results, generated, total)
    print(summary)
    for row in per_file:
        print(f"  {row['file']:<36} {row['killed']:3} killed {row['survived']:3} survived {row['equivalent']:2} equivalent "
              f"{row['stillborn']:2} stillborn  {row['score']:5.1f} %")
    opmut_report.write(results, per_file, summary, a.out, a.json, total)
    return 0

if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Regenerates the tables of docs/mutation.md from the campaign's JSON files.

  /usr/bin/python3 ci/mutation-report.py --cpu build/mutation.json [--gpu gpu-mutation.json]
      [--ops ops.json [--ops-block NAME]] [--blocks NAME ...] [--doc docs/mutation.md]

The catalogue table comes from `ixo mutate --json` (which prints kernels/common/mutants.hpp,
the one source of truth), so the document cannot drift from the catalogue. Each table is
written between `<!-- BEGIN name -->` and `<!-- END name -->` markers of the document;
text outside the markers is kept. --blocks names the blocks to write (default: every block
the given JSON files can fill), e.g. `--blocks operator-files` writes the operator report
alone and leaves the catalogue's tables (and their recorded timings) as they are.
"""
import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def esc(s):
    return str(s).replace("|", "\\|")


def catalogue(cpu):
    out = ["| id | key | where | injected bug | exposing input | expected killer |", "|---|---|---|---|---|---|"]
    for m in cpu["mutants"]:
        out.append(f"| {m['id']} | `{m['key']}` | {m['where']} | {esc(m['description'])} | {esc(m['input'])} | "
                   f"`{m['expected_killer']}` |")
    return out


def matrix(j):
    out = ["| id | key | where | result | killed by | seconds | matches catalogue |", "|---|---|---|---|---|---|---|"]
    for m in j["mutants"]:
        if m.get("killed") is None:
            res, by, sec, ok = "not run", esc(m.get("killed_by", "")), "", ""
        else:
            res = "killed" if m["killed"] else "**SURVIVED**"
            by = f"`{m['killed_by']}`" if m["killed_by"] else "-"
            sec = f"{m['seconds']:.2f}"
            ok = "yes" if m["killed_by"] == m["expected_killer"] else f"no (`{m['expected_killer']}`)"
        out.append(f"| {m['id']} | `{m['key']}` | {m['where']} | {res} | {by} | {sec} | {ok} |")
    total = sum(m.get("seconds", 0) or 0 for m in j["mutants"])
    out.append("")
    out.append(f"Score: {j['killed']}/{j['reachable']} reachable mutants killed; {total:.1f} s over the mutant runs "
               f"(the unmutated run not included).")
    return out


def ops(j):
    """Operator-mutant report; with per-file results (`files`, ci/mutate-operators.py over
    several files) a score table per file comes first and each row names its file."""
    out = [j["summary"], ""]
    files = j.get("files")
    if files:
        out += ["| file | mutants | killed | survived | stillborn | score |", "|---|---|---|---|---|---|"]
        for f in files:
            out.append(f"| `{f['file']}` | {f['mutants']} | {f['killed']} | {f['survived']} | {f['stillborn']} | "
                       f"{f['score']:.1f} % |")
        out.append("")
    fcol = "file | " if files else ""
    out += [f"| # | {fcol}kind | line | mutation | code | result | killed by | build s | run s |",
            "|---|" + ("---|" if files else "") + "---|---|---|---|---|---|---|---|"]
    for m in j["mutants"]:
        code = esc(m.get("code", ""))
        fv = f"{os.path.basename(m['file'])} | " if files else ""
        out.append(f"| {m['n']} | {fv}{m['kind']} | {m['line']} | `{esc(m['orig'])}` → `{esc(m['repl'])}` | `{code}` | "
                   f"{m['status']} | {esc(m['by'])} | {m['build_s']} | {m['run_s']} |")
    return out


def splice(doc, name, lines):
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = begin + "\n" + "\n".join(lines) + "\n" + end
    if begin in doc:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    return doc + "\n" + block + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", required=True)
    ap.add_argument("--gpu")
    ap.add_argument("--ops")
    ap.add_argument("--ops-block", default="operator-mutants",
                    help="document block the --ops report goes to (operator-files: the multi-file run)")
    ap.add_argument("--blocks", nargs="+", help="write only these blocks (default: all the inputs fill)")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "mutation.md"))
    a = ap.parse_args()
    doc = open(a.doc).read() if os.path.exists(a.doc) else "# Mutation testing\n"
    fillable = ["catalogue", "cpu-matrix"] + (["gpu-matrix"] if a.gpu else []) + ([a.ops_block] if a.ops else [])
    blocks = a.blocks or fillable
    unknown = [b for b in blocks if b not in fillable]
    if unknown:
        print(f"mutation-report: no input fills block(s) {', '.join(unknown)} (fillable: {', '.join(fillable)})",
              file=sys.stderr)
        return 2
    cpu = json.load(open(a.cpu))
    if "catalogue" in blocks:
        doc = splice(doc, "catalogue", catalogue(cpu))
    if "cpu-matrix" in blocks:
        doc = splice(doc, "cpu-matrix", matrix(cpu))
    if "gpu-matrix" in blocks:
        doc = splice(doc, "gpu-matrix", matrix(json.load(open(a.gpu))))
    if a.ops and a.ops_block in blocks:
        doc = splice(doc, a.ops_block, ops(json.load(open(a.ops))))
    open(a.doc, "w").write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which kernels' PTX a change touched: two PTX files compared function by function.

A kernel change is meant to move some entries and leave the rest alone (session 31: the CP
packed kernel streams K, its per-row twin must not change). A plain diff of two PTX files is
useless for that: label numbers ($L__BB<f>_<n>), "callseq" comments and param names are
numbered across the whole file, so one new function renumbers every later one. This script
splits each file into its .entry / .func bodies, normalizes those numberings and compares the
bodies by name. --rename 'REGEX=REPLACEMENT' rewrites the new file's names (in the bodies too:
calls) to the old ones first, e.g. a bool template parameter added to a kernel:
`--rename '(cp_score_mma_\w+ILi\d+ELi\d)ELb0EE=\1EE'` maps its false instances onto the old names.

Example (on a machine with nvcc; flags as the build's, see docs/NOTES.md):

    nvcc -ptx $FLAGS kernels/gpu/cp_cuda.cu -o new.ptx
    git stash; nvcc -ptx $FLAGS kernels/gpu/cp_cuda.cu -o old.ptx; git stash pop
    python3 docs/experiments/ptx_entry_diff.py old.ptx new.ptx --rename '(cp_score_mma_\w+ILi\d+ELi\d)ELb0EE=\1EE'
    # same      _ZN3ixo3gpu3cpk19cp_score_mma_kernelILi128ELi0EEEvNS1_13CpScoreParamsE
    # new only  _ZN3ixo3gpu3cpk19cp_score_mma_kernelILi128ELi0ELb1EEEvNS1_13CpScoreParamsE
    # 23 of 23 old functions unchanged, 16 new only, 0 changed, 0 missing

Exit status: 0 when no old function changed (new-only functions allowed), 1 when one did or
one is missing from the new file, 2 on bad input.
"""
import argparse
import re
import sys

FUNC = re.compile(r"^(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\S+?)\(.*?^\}", re.M | re.S)


def functions(text):
    """{mangled name: body} of every .entry / .func of a PTX text."""
    return {m.group(1): m.group(0) for m in FUNC.finditer(text)}


def normalize(body, name):
    """A body with its own name and the file-wide numberings taken out."""
    body = body.replace(name, "@F")
    body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
    body = re.sub(r"callseq \d+", "callseq", body)
    body = re.sub(r"__unnamed_\d+", "__unnamed", body)
    return body


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                    help="rewrite the new file's names to the old ones (re.sub; repeatable)")
    a = ap.parse_args(argv)
    try:
        old = functions(open(a.old).read())
        new_text = open(a.new).read()
        renames = [r.split("=", 1) for r in a.rename]
        if any(len(r) != 2 or not r[0] for r in renames):
            raise ValueError(f"--rename wants REGEX=REPLACEMENT, got {a.rename}")
        for frm, to in renames:
            new_text = re.sub(frm, to, new_text)
        new = functions(new_text)
    except (OSError, ValueError, re.error) as e:
        print(f"ptx_entry_diff: bad input: {e}", file=sys.stderr)
        return 2
    if not old or not new:
        print(f"ptx_entry_diff: bad input: no .entry / .func in {a.old if not old else a.new}", file=sys.stderr)
        return 2
    changed = missing = 0
    for name in sorted(old):
        if name not in new:
            print(f"missing   {name}")
            missing += 1
        elif normalize(old[name], name) != normalize(new[name], name):
            print(f"changed   {name}")
            changed += 1
        else:
            print(f"same      {name}")
    only = sorted(set(new) - set(old))
    for name in only:
        print(f"new only  {name}")
    print(f"{len(old) - changed - missing} of {len(old)} old functions unchanged, {len(only)} new only, "
          f"{changed} changed, {missing} missing")
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""python3 -m indexer_oracle plot CASE_DIR --topk F [--scores F] [--exact] --out DIR
writes DIR/failing_rows.png for a failing check (used by `ixo check --plot DIR`)."""
import argparse
import os
import sys

import numpy as np

from . import Case, check


def main(argv: list) -> int:
    p = argparse.ArgumentParser(prog="python3 -m indexer_oracle")
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("plot", help="picture of each failing (head, row)")
    pl.add_argument("case")
    pl.add_argument("--topk", required=True)
    pl.add_argument("--scores")
    pl.add_argument("--exact", action="store_true")
    pl.add_argument("--out", required=True)
    a = p.parse_args(argv)
    case = Case.load(a.case)
    v = check(case, np.load(a.topk), np.load(a.scores) if a.scores else None, exact=a.exact)
    if v.passed:
        print("passed: nothing to plot")
        return 0
    os.makedirs(a.out, exist_ok=True)
    print("wrote", v.plot(os.path.join(a.out, "failing_rows.png")))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

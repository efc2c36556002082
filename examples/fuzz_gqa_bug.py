#!/usr/bin/env python3
"""fuzz() finds a planted GQA head-mapping bug (K head h % Hk instead of h // (Hq/Hk)),
shrinks it to a small case and prints the report:

    PYTHONPATH=build/python:examples /usr/bin/python3 examples/fuzz_gqa_bug.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import indexer_oracle as io  # noqa: E402
from numpy_kernel import gqa_bug_kernel, kernel  # noqa: E402

r = io.fuzz(gqa_bug_kernel, seconds=30)
print(r.report)
if not r.failures:
    sys.exit("the planted bug was not found")
case = io.Case.load(r.failures[0])
print(f"shrunk case: {case}")
print("the right kernel on the shrunk case:", io.check(case, *kernel(case)).report.splitlines()[0])

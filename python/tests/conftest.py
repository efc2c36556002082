"""Shared set-up: the examples folder (the naive numpy kernel) on sys.path, and the
path of the `ixo` binary (ctest passes IXO and IXO_EXAMPLES)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.environ.get("IXO_EXAMPLES", os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, EXAMPLES)

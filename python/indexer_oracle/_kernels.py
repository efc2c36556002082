"""Python kernels under the whole suite: fuzz (RapidCheck generators and shrinking, the
same as ``ixo fuzz``) and the embedded default suite (``ixo check``)."""
from __future__ import annotations

import tempfile
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import _core
from ._case import Case
from ._verdict import _ids, _scores

Kernel = Callable[[Case], Any]


class Unsupported(Exception):
    """Raise from ``kernel(case)`` when the kernel does not implement this case (e.g. an fp8
    format or Hk > 1): the case is counted as skipped, never as passed."""


def _adapt(kernel: Kernel) -> Callable[[Any], tuple]:
    """kernel(case) -> topk_idx | (topk_idx, scores), as the C++ suite calls it."""

    def call(core_case: Any) -> tuple:
        case = Case._wrap(core_case)
        try:
            out = kernel(case)
        except Unsupported as e:
            return ("unsupported", str(e) or "kernel raised Unsupported")
        except Exception:  # a kernel that raises fails this case; the traceback is the report
            return ("error", "the kernel raised:\n" + traceback.format_exc(limit=8))
        try:
            topk, scores = (out if isinstance(out, tuple) else (out, None))
            return ("ok", _ids(topk, "hrt"), _scores(scores, "hrt"))
        except Exception as e:
            return ("error", f"the kernel returned malformed outputs: {e}")

    return call


def _name(kernel: Kernel) -> str:
    return "python:" + getattr(kernel, "__name__", type(kernel).__name__)


def _entries(kernel: Union[Kernel, Sequence[Kernel]]) -> list:
    ks = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    return [k if isinstance(k, str) else (_name(k), _adapt(k)) for k in ks]


def backend(name: str) -> Kernel:
    """One of our own backends (``ixo list``: cpu-rows, cpu-packed, cuda-packed, ...) as a
    Python kernel, e.g. to run ``fuzz``/``suite`` over it through Python."""

    def kernel(case: Case) -> tuple[np.ndarray, Optional[np.ndarray]]:
        out = _core.run_backend(name, case._c)
        if out[0] == "unsupported":
            raise Unsupported(out[1])
        return out[1], out[2]

    kernel.__name__ = name
    return kernel


@dataclass
class FuzzResult:
    """``cases``: cases run and passed; ``failures``: the shrunk case directories written;
    ``report``: the first failure's report ('' when clean). ``passed`` needs at least one judged case."""

    cases: int
    failures: list[str]
    report: str
    runs: int = 0
    gave_up: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures and self.cases > 0


def fuzz(kernel: Kernel, *, seconds: float = 60, seed: int = 1, presets: Optional[Sequence[str]] = None,
         out: Optional[str] = None, max_failures: int = 1) -> FuzzResult:
    """Random cases for ``seconds``; each failing case is shrunk by RapidCheck and written as
    a case directory under ``out`` (a temporary folder by default) with failure.txt.

    ``kernel(case)`` returns topk_idx [Hq, R, topk] or (topk_idx, scores [Hq, R, NB]) as numpy
    or torch, and may raise ``Unsupported``. ``presets`` limits the cases to those presets.
    Fuzzing stops after ``max_failures`` shrunk failures (0: use the whole time budget).

    Example::

        def my_kernel(case):
            ids, scores = run_my_triton_kernel(**case.torch("cuda"))
            return ids, scores
        r = indexer_oracle.fuzz(my_kernel, seconds=30)
        assert not r.failures, r.report
    """
    if out is None:
        out = tempfile.mkdtemp(prefix="ixo-fuzz-")
    r = _core.fuzz(_entries(kernel), float(seconds), int(seed), list(presets or []), str(out), int(max_failures))
    return FuzzResult(cases=r["cases"], failures=list(r["failures"]), report=r["report"], runs=r["runs"],
                      gave_up=r["gave_up"], log=list(r["log"]))


@dataclass
class SuiteResult:
    """``passed``; ``table``: the verdict table as ``ixo check`` prints it; ``rows``: one dict per row."""

    passed: bool
    table: str
    rows: list[dict[str, Any]]

    def __str__(self) -> str:
        return self.table


def suite(kernel: Kernel, *, property_cases: int = 12, seed: int = 20261201, out: Optional[str] = None,
          properties: bool = True, fixtures: bool = True) -> SuiteResult:
    """The whole embedded suite on a Python kernel: the default case groups, the fixtures,
    and the properties (shrunk failures written under ``out``). Unsupported cases are SKIP.

    Example::

        r = indexer_oracle.suite(my_kernel)
        print(r.table)
        assert r.passed
    """
    import json

    r = _core.suite(_entries(kernel), int(property_cases), int(seed), "" if out is None else str(out), properties, fixtures)
    return SuiteResult(passed=r["passed"], table=r["table"], rows=json.loads(r["json"])["rows"])

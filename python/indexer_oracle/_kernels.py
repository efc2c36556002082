"""Python kernels under the whole suite: fuzz (RapidCheck generators and shrinking, the
same as ``ixo fuzz``) and the embedded default suite (``ixo check``)."""
from __future__ import annotations

import math
import numbers
import os
import signal
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import _core
from ._case import Case
from ._contract import Contract, _contract_json
from ._verdict import _ids, _scores

Kernel = Callable[[Case], Any]


class Unsupported(Exception):
    """Raise from ``kernel(case)`` when the kernel does not implement this case (e.g. an fp8
    format or Hk > 1): the case is counted as skipped, never as passed."""


class _KernelTimeout(BaseException):
    """Raised inside a kernel that ran past its per-case timeout (SIGALRM)."""


def _call_with_timeout(kernel: Kernel, case: Case, timeout: Optional[float]) -> Any:
    """kernel(case), interrupted after ``timeout`` seconds (main thread only: SIGALRM)."""
    if not timeout or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return kernel(case)

    def on_alarm(signum: int, frame: Any) -> None:
        raise _KernelTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return kernel(case)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _adapt(kernel: Kernel, timeout: Optional[float] = None) -> Callable[[Any], tuple]:
    """kernel(case) -> topk_idx | (topk_idx, scores), as the C++ suite calls it."""

    def call(core_case: Any) -> tuple:
        case = Case._wrap(core_case)
        try:
            out = _call_with_timeout(kernel, case, timeout)
        except Unsupported as e:
            return ("unsupported", str(e) or "kernel raised Unsupported")
        except KeyboardInterrupt:  # Ctrl-C inside the kernel: the run stops, no failure
            return ("interrupted", "interrupted (Ctrl-C) inside the kernel")
        except _KernelTimeout:  # a hanging kernel fails its case (saved like any failure)
            return ("error", f"the kernel did not return within the per-case timeout of {timeout} s (timeout=)")
        except SystemExit as e:  # the same answer in fuzz and suite: a failure, never an abort
            return ("error", f"the kernel called sys.exit({e.code!r}); raise io.Unsupported to decline a case")
        except Exception:  # a kernel that raises fails this case; the traceback is the report
            return ("error", "the kernel raised:\n" + traceback.format_exc(limit=8))
        try:
            topk, scores = (out if isinstance(out, tuple) else (out, None))
            return ("ok", _ids(topk, "hrt"), _scores(scores, "hrt"))
        except Exception as e:
            return ("error", f"the kernel returned malformed outputs: {e}")

    return call


def _name(kernel: Kernel) -> str:
    """python:MODULE:NAME (the replay line imports NAME from MODULE), or python:NAME."""
    import inspect

    name = getattr(kernel, "__name__", None) or type(kernel).__name__
    qualname = getattr(kernel, "__qualname__", name)
    # A plain function keeps its module (the replay line imports it); a partial, a callable
    # object or a function renamed by its maker (__name__ set by hand) is named as it says.
    if (inspect.isfunction(kernel) or inspect.ismethod(kernel)) and qualname.rsplit(".", 1)[-1] == name:
        return f"python:{kernel.__module__}:{qualname}"
    return f"python:{name}"


def _entries(kernel: Union[Kernel, Sequence[Kernel]], timeout: Optional[float] = None) -> list:
    ks = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    return [k if isinstance(k, str) else (_name(k), _adapt(k, timeout)) for k in ks]


def _int(x: Any, field: str, lo: int = 0) -> int:
    """A whole number >= lo (numpy integers accepted; bool, floats and out-of-range values are ValueErrors)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{field}: must be a whole number >= {lo}, got {x!r}")
    v = int(x)
    if v < lo or v > 2**63 - 1:
        raise ValueError(f"{field}: must be a whole number >= {lo}, got {v}")
    return v


def _seconds(x: Any, field: str, allow_none: bool) -> float:
    if x is None and allow_none:
        return math.inf
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{field}: must be a positive number of seconds, got {x!r}")
    v = float(x)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{field}: must be a positive, finite number of seconds, got {v}")
    return v


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
    """``cases``: cases judged and passed; ``judged``: cases judged; ``skipped``: cases the
    kernel declined; ``failures``: the shrunk case directories written; ``report``: the first
    failure's report ('' when clean); ``outcome``: PASS, FAIL, NOTHING JUDGED (every case
    declined: never a pass) or INTERRUPTED (Ctrl-C); ``passed`` is ``outcome == "PASS"``."""

    cases: int
    failures: list[str]
    report: str
    runs: int = 0
    gave_up: int = 0
    log: list[str] = field(default_factory=list)
    judged: int = 0
    skipped: int = 0
    outcome: str = "NOTHING JUDGED"
    interrupted: bool = False
    contracts: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "PASS"


def fuzz(kernel: Kernel, *, seconds: Optional[float] = 60, seed: int = 1, presets: Optional[Sequence[str]] = None,
         out: Optional[str] = None, max_failures: int = 1, contract: Union[None, str, Contract] = None,
         shapes: Optional[int] = None, timeout: Optional[float] = 60, seeds: Optional[int] = None,
         cases_per_seed: int = 25) -> FuzzResult:
    """Random cases inside the kernel's ``contract`` for ``seconds`` (returns within it plus
    one case); each failing case is shrunk, reduced to its failing rows and written as a case
    directory under ``out`` (a temporary folder by default) with failure.txt and its replay line.

    ``kernel(case)`` returns topk_idx [Hq, R, topk] or (topk_idx, scores [Hq, R, NB]) as numpy
    or torch, and may raise ``Unsupported``. ``contract``: a name (``contracts()``), a file or
    an ``io.Contract``; cases are drawn inside it and judged under its semantics (default: the
    whole spec). ``shapes=N`` keeps the compile-time parameters (block size, D, heads, topk,
    dtype, score type, pack) to N tuples: a JIT kernel compiles N times, not once a case.
    ``timeout``: seconds a case may take (a hanging kernel fails that case; main thread only).
    ``seeds=N`` stops after N seeds (``seconds=None`` then runs them all: a fixed amount of
    work). Fuzzing stops after ``max_failures`` failures (0: use the whole budget). Ctrl-C
    stops at once: the result says ``outcome == "INTERRUPTED"`` and reports what ran.

    Example::

        def my_kernel(case):
            ids, scores = run_my_triton_kernel(**case.torch("cuda"))
            return ids, scores
        r = indexer_oracle.fuzz(my_kernel, seconds=60, contract="sglang-triton-decode", shapes=4)
        assert r.passed, r.report          # PASS needs at least one judged case
    """
    secs = _seconds(seconds, "seconds", allow_none=seeds is not None)
    n_seeds = 0 if seeds is None else _int(seeds, "seeds", 1)
    n_shapes = 0 if shapes is None else _int(shapes, "shapes", 1)
    if timeout is not None:
        timeout = _seconds(timeout, "timeout", allow_none=False)
    if out is None:
        out = tempfile.mkdtemp(prefix="ixo-fuzz-")
    r = _core.fuzz(_entries(kernel, timeout), secs, _int(seed, "seed"), list(presets or []), os.fspath(out),
                   _int(max_failures, "max_failures"), _contract_json(contract), n_shapes, n_seeds,
                   _int(cases_per_seed, "cases_per_seed", 1))
    return FuzzResult(cases=r["cases"], failures=list(r["failures"]), report=r["report"], runs=r["runs"],
                      gave_up=r["gave_up"], log=list(r["log"]), judged=r["judged"], skipped=r["skipped"],
                      outcome=r["outcome"], interrupted=r["interrupted"], contracts=list(r["contracts"]),
                      summary=r["summary"])


@dataclass
class SuiteResult:
    """``passed``; ``outcome``: PASS, FAIL, NOTHING JUDGED (a kernel that judged no case:
    never a pass) or INTERRUPTED; ``table``: the verdict table as ``ixo check`` prints it;
    ``rows``: one dict per row."""

    passed: bool
    table: str
    rows: list[dict[str, Any]]
    outcome: str = "PASS"
    interrupted: bool = False

    def __str__(self) -> str:
        return self.table


def suite(kernel: Kernel, *, property_cases: int = 12, seed: int = 20261201, out: Optional[str] = None,
          properties: bool = True, fixtures: bool = True, contract: Union[None, str, Contract] = None,
          timeout: Optional[float] = 60) -> SuiteResult:
    """The whole embedded suite on a Python kernel: the default case groups, the fixtures,
    and the properties (shrunk failures written under ``out``). Unsupported cases are SKIP;
    cases outside ``contract`` are not run (OUTSIDE); a kernel that judged no case at all is
    NOTHING JUDGED, not a pass.

    Example::

        r = indexer_oracle.suite(my_kernel)
        print(r.table)
        assert r.passed
    """
    import json

    if timeout is not None:
        timeout = _seconds(timeout, "timeout", allow_none=False)
    r = _core.suite(_entries(kernel, timeout), _int(property_cases, "property_cases", 1), _int(seed, "seed"),
                    "" if out is None else os.fspath(out), bool(properties), bool(fixtures), _contract_json(contract))
    return SuiteResult(passed=r["passed"], table=r["table"], rows=json.loads(r["json"])["rows"], outcome=r["outcome"],
                       interrupted=r["interrupted"])


def replay(case_dir: Union[str, os.PathLike], kernel: Kernel, *, contract: Union[None, str, Contract] = None) -> None:
    """Runs ``kernel`` on a saved failing case and asserts it (AssertionError with the report),
    under the contract saved with the case (case_dir/contract.json) unless ``contract`` is given.
    The replay line of every fuzz failure calls this.

    Example::

        import indexer_oracle as io
        from my_kernels import my_kernel
        io.replay("/tmp/ixo-fuzz-x/python_my_kernels_my_kernel-fuzz-seed7", my_kernel)
    """
    from ._verdict import assert_indexer

    case = Case.load(case_dir)
    if contract is None and os.path.isfile(os.path.join(os.fspath(case_dir), "contract.json")):
        contract = os.path.join(os.fspath(case_dir), "contract.json")
    out = kernel(case)
    ids, scores = out if isinstance(out, tuple) else (out, None)
    exact = os.path.isfile(os.path.join(os.fspath(case_dir), "exact_ids"))
    assert_indexer(case, ids, scores, exact=exact, contract=contract)

"""The oracle's answer and the verdict on an implementation's answer."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _core
from ._case import Case, _is_torch


def reference(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """The oracle's outputs: topk_idx int32 [Hq, R, topk] (ascending ids, -1 padded) and
    scores float32 [Hq, R, NB] (the forced block scores, rounded to float32)."""
    return _core.reference(case._c)


def _array(x: Any, field: str, layout: str) -> np.ndarray:
    if _is_torch(x):
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if layout == "rht":
        if a.ndim != 3:
            raise ValueError(f"{field}: layout 'rht' needs a 3-d array [R, Hq, ...], got shape {a.shape}")
        a = a.transpose(1, 0, 2)
    elif layout != "hrt":
        raise ValueError(f"layout: must be 'hrt' ([Hq, R, topk]) or 'rht' ([R, Hq, topk]), got {layout!r}")
    return a


def _ids(x: Any, layout: str) -> np.ndarray:
    a = _array(x, "topk_idx", layout)
    if a.dtype.kind not in "iu":
        raise ValueError(f"topk_idx: must hold integer block ids, got dtype {a.dtype}")
    if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
        raise ValueError("topk_idx: values do not fit int32")
    return np.ascontiguousarray(a, dtype=np.int32)


def _scores(x: Any, layout: str) -> Optional[np.ndarray]:
    if x is None:
        return None
    a = _array(x, "scores", layout)
    if a.dtype != np.float32:
        raise ValueError(f"scores: must be float32, got dtype {a.dtype}")
    return np.ascontiguousarray(a)


class Verdict:
    """The judgement of one implementation's outputs on one case.

    ``passed`` (bool), ``report`` (the text ``ixo check`` prints), ``failures`` (a list of
    dicts: tier, head, row, expected, observed, missing, extra, margin, tau, ...), and
    ``plot(path)`` draws each failing (head, row).
    """

    def __init__(self, case: Case, topk_idx: np.ndarray, scores: Optional[np.ndarray], result: dict[str, Any]) -> None:
        self.case, self.topk_idx, self.scores = case, topk_idx, scores
        self.passed: bool = result["passed"]
        self.report: str = result["report"]
        self.failures: list[dict[str, Any]] = list(result["failures"])
        self.rows_checked: int = result["rows_checked"]
        self.tie_swaps: int = result["tie_swaps"]

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed}, failures={len(self.failures)}, tie_swaps={self.tie_swaps})"

    def plot(self, path: str, max_rows: int = 8) -> str:
        """Writes a PNG at ``path`` with one panel per failing (head, row): the row's oracle
        block scores in block order, the selected and expected blocks marked, forced blocks,
        and the tau band at the selection boundary. Needs matplotlib. Returns ``path``."""
        from ._plot import plot_verdict

        return plot_verdict(self, path, max_rows)


def check(case: Case, topk_idx: Any, scores: Any = None, *, exact: bool = False, layout: str = "hrt",
          contract: Any = None) -> Verdict:
    """Judges an implementation's outputs against the oracle, under ``contract`` (a name, a
    file or an ``io.Contract``: its semantic options, e.g. NaN blocks unspecified) when given;
    a case outside the contract's domain raises ValueError.

    ``topk_idx``: int [Hq, R, topk] (or [R, Hq, topk] with ``layout="rht"``), numpy or torch on
    any device. ``scores``: optional float32 [Hq, R, NB] (same layout rule), NB >= the largest
    block count of the batch. ``exact=True`` demands the oracle's ids exactly (tie-free inputs).
    Wrong shapes or dtypes raise ValueError naming the field.

    Example::

        case = indexer_oracle.generate("verify", 1)
        ids, scores = my_kernel(case)
        v = indexer_oracle.check(case, ids, scores)
        if not v.passed:
            print(v.report); v.plot("failing_rows.png")
    """
    ids = _ids(topk_idx, layout)
    sc = _scores(scores, layout)
    from ._contract import _contract_json

    return Verdict(case, ids, sc, _core.check(case._c, ids, sc, bool(exact), _contract_json(contract)))


def assert_indexer(case: Case, topk_idx: Any, scores: Any = None, **kw: Any) -> None:
    """``check`` for pytest: raises ``AssertionError(report)`` when the outputs fail, so pytest
    shows the exact report (head, row, expected vs observed ids, scores and tau)."""
    v = check(case, topk_idx, scores, **kw)
    if not v.passed:
        raise AssertionError(v.report)

"""Contracts: what a kernel promises. fuzz/suite/check draw and judge inside one (docs/contracts.md)."""
from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from . import _core

_PAIRS = ("topk", "local_blocks")  # [min, max] keys (tuples accepted)


class Contract:
    """What a kernel promises, in two parts: the *domain* (which cases it accepts; fuzz and the
    suite never generate or run a case outside it) and the *semantics* where kernels
    legitimately differ (judged exactly). Start from a named contract and override fields.

    Example (a per-row Triton kernel for M3 shapes that ranks NaN first)::

        import indexer_oracle as io
        mine = io.Contract("spec", name="my-kernel",
                           block_sizes=[64, 128], head_dims=[128], topk=(1, 32),
                           heads=[(1, 1), (4, 1)], k_dtypes=["bf16", "e4m3fn"],
                           packing="none", inactive_rows=False, nan_blocks="highest")
        r = io.fuzz(my_kernel, contract=mine, seconds=60)
        assert r.passed, r.report

    Domain keys: block_sizes, head_dims, topk (min, max), heads [(Hq, Hk)], k_dtypes,
    q_dtypes, page_sizes, score_types, init_max, local_blocks (min, max; max -1: any), max_rows,
    max_length, packing ("any_rows" | "full_groups" | "none"), inactive_rows, negative_aliases,
    nonfinite. Semantic keys: nan_blocks ("lowest" | "highest" | "unspecified"), forced_ties
    ("any" | "lowest_id"), order ("ascending" | "score_descending" | "ranked_forced_last"), scores
    ("judged" | "ignored" | "history"), selection ("exact" | "quantized16"), score_units ("log2" |
    "natural"). MiniMax's upstream indexer: ``io.contract("msa-decode")`` (docs/contracts.md).
    An empty list allows every value. Bad keys or values raise ValueError naming them.
    """

    def __init__(self, base: str = "spec", **fields: Any) -> None:
        spec: dict[str, Any] = {"base": base}
        for k, v in fields.items():
            if k == "heads" and v is not None:
                v = [[int(a), int(b)] for a, b in v]
            elif k in _PAIRS and v is not None:
                v = [int(x) for x in v]
            elif isinstance(v, (list, tuple)):
                v = [x if isinstance(x, str) else int(x) for x in v]
            spec[k] = v
        if "name" not in fields:
            spec["name"] = base if not fields else f"{base}+custom"
        self._json = _core.contract_normalize(json.dumps(spec))
        self._d = json.loads(self._json)

    @classmethod
    def from_json(cls, text: str) -> "Contract":
        """A contract from its JSON text (the form ``ixo --contract FILE`` reads)."""
        d = json.loads(text)
        base = d.pop("base", "spec")
        return cls(base, **d)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Contract":
        with open(path) as f:
            return cls.from_json(f.read())

    def to_json(self) -> str:
        """The full JSON form (every key), e.g. to save as a file for ``ixo fuzz --contract FILE``."""
        return self._json

    def refuses(self, case: Any) -> Optional[str]:
        """Why ``case`` lies outside the domain (the field and value), or None."""
        return _core.contract_refuses(self._json, case._c)

    def admits(self, case: Any) -> bool:
        return self.refuses(case) is None

    def __getattr__(self, key: str) -> Any:
        d = self.__dict__.get("_d")
        if d is not None and key in d:
            return d[key]
        raise AttributeError(key)

    def __repr__(self) -> str:
        return f"Contract({self._d['name']!r})"


def contracts() -> list[str]:
    """The named contracts: spec, sglang-triton-decode, ixo-native, ixo-cp, msa-decode."""
    return list(_core.contract_names())


def contract(name: str) -> Contract:
    """A named contract (``contracts()``)."""
    if name not in contracts():
        raise ValueError(f"contract: unknown contract {name!r} (known: {', '.join(contracts())})")
    return Contract.from_json(_core.contract_json(name))


def _contract_json(c: Union[None, str, Contract, os.PathLike]) -> str:
    """'' (each backend's own) for None, else the JSON text of a Contract, a name or a file."""
    if c is None:
        return ""
    if isinstance(c, Contract):
        return c.to_json()
    if isinstance(c, (str, os.PathLike)):
        s = os.fspath(c)
        if s in contracts():
            return _core.contract_json(s)
        if os.path.isfile(s):
            return Contract.load(s).to_json()
        raise ValueError(f"contract: {s!r} is neither a named contract ({', '.join(contracts())}) nor a JSON file")
    raise ValueError(f"contract: expected a Contract, a name or a file, got {type(c).__name__}")

"""The Case: one batch of indexer inputs, from numpy arrays or torch tensors."""
from __future__ import annotations

import json
import math
import os
from typing import Any, Optional

import numpy as np

from . import _core

# ixo::Config's defaults (case.json spellings): the keyword defaults of Case below, so Python and
# C++ never disagree on a default (issue 24).
_DEFAULTS = json.loads(_core.config_defaults())
# The integer knobs (ixo/config_fields.hpp, one line each): name -> (default, least, most,
# required). Case's keywords, their checks and the properties below come from this list, so a
# new knob needs no Python change.
_INT_FIELDS = {name: (default, least, most, required) for name, default, least, most, required in
               _core.config_int_fields()}

_TORCH_K_DTYPES = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2": "e5m2",
                   "float4_e2m1fn_x2": "nvfp4"}
_K_DTYPES = ("bf16", "e4m3fn", "e4m3fnuz", "e5m2", "nvfp4")
_Q_DTYPES = ("bf16", "e4m3fn")


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _torch_bits(t: Any, field: str) -> tuple[np.ndarray, Optional[str]]:
    """A torch tensor (any device, any strides) -> (numpy bit array, inferred k_dtype)."""
    import torch

    name = str(t.dtype).replace("torch.", "")
    t = t.detach().contiguous()
    if name == "bfloat16":
        return t.view(torch.int16).cpu().numpy().view(np.uint16), "bf16"
    if name in _TORCH_K_DTYPES:
        return t.view(torch.uint8).cpu().numpy(), _TORCH_K_DTYPES[name]
    if name in ("int16", "uint16", "uint8", "int8", "int32", "int64"):
        return t.cpu().numpy(), None
    raise ValueError(f"{field}: torch dtype {t.dtype} is not supported (bfloat16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, "
                     "float4_e2m1fn_x2)")


def _bits(x: Any, field: str) -> tuple[np.ndarray, Optional[str]]:
    if _is_torch(x):
        return _torch_bits(x, field)
    a = np.asarray(x)
    if a.dtype.kind == "f" or a.dtype.kind == "c":
        raise ValueError(f"{field}: numpy dtype {a.dtype} holds values, not bits; pass bf16 bits as uint16 "
                         "(t.view(torch.int16).numpy()) or fp8 codes as uint8")
    return a, None


def _ints(x: Any, field: str, dtype: Any) -> np.ndarray:
    """An integer array converted to ``dtype``; a value outside ``dtype``'s range is a
    ValueError naming the field, the value and its index (never a silent wrap-around)."""
    if _is_torch(x):
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{field}: must hold integers, got dtype {a.dtype}")
    if a.size and not np.can_cast(a.dtype, dtype, casting="safe"):
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        if a.dtype.kind == "u":  # compare in uint64: no mixed signed/unsigned promotion to float
            bad = a.astype(np.uint64) > np.uint64(hi)
        else:
            wide = a.astype(np.int64)
            bad = (wide < lo) | (wide > hi)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{field}: value {int(a[at])} at index {at} is outside the range of "
                             f"{np.dtype(dtype).name} [{lo}, {hi}]")
    return np.ascontiguousarray(a, dtype=dtype)


def _scalar(v: Any) -> Any:
    """A 0-d numpy array or torch tensor -> its element; anything else unchanged."""
    if _is_torch(v) and getattr(v, "ndim", None) == 0:
        return v.item()
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


def _config_int(v: Any, field: str) -> int:
    """A Python or numpy integer (not a bool, not a float) in the knob's range (config_fields.hpp)."""
    _, least, most, _ = _INT_FIELDS[field]
    x = _scalar(v)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{field}: must be an integer, got {x!r}")
    x = int(x)
    if x < least:
        raise ValueError(f"{field}: must be >= {least}, got {x}")
    if x > most:
        raise ValueError(f"{field}: {x} is out of range (at most {most})")
    return x


def _config_float(v: Any, field: str) -> float:
    """A finite Python or numpy real number (not a bool, not complex)."""
    x = _scalar(v)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{field}: must be a real number, got {x!r}")
    try:
        f = float(x)
    except OverflowError:  # an int beyond the double range
        raise ValueError(f"{field}: {x} does not fit a double") from None
    if not math.isfinite(f):
        raise ValueError(f"{field}: must be finite, got {f}")
    return f


class Case:
    """One batch of indexer inputs, laid out like SGLang's ``flash_decode_with_topk_idx``.

    ``q`` [R, Hq, D] and ``k_cache`` [S, Hk, D] are numpy arrays of bits (uint16/int16 bf16
    bits; uint8 fp8 codes with ``k_dtype`` / ``q_dtype`` given) or torch tensors on any device,
    in any strides, of dtype bfloat16 / float8_e4m3fn / float8_e4m3fnuz / float8_e5m2 (the
    dtype is then inferred). ``q`` may be e4m3fn (``q_dtype="e4m3fn"``: uint8 codes or a
    float8_e4m3fn tensor). NVFP4 K (``k_dtype="nvfp4"``): ``k_cache`` holds uint8 [S, Hk, D/2],
    two E2M1 codes a byte (low nibble = even element), and ``k_scales`` uint8 e4m3fn codes
    [S, Hk, D/16], one scale per 16 elements (docs/semantics.md "NVFP4 K").
    Bad input raises ``ValueError`` naming the field and value.

    Paged K (docs/semantics.md "Paged K"): ``page_table`` int32 [rows, max_pages] maps logical
    page p of table row b to a physical page, ``page_size`` tokens a page; token t of row b is
    K slot ``page_table[b, t // page_size] * page_size + t % page_size``. ``req_to_token`` may
    then be ``None`` (derived from the table); when given it must agree with it.

    The integer knobs (``block_size``, ``topk``, ``init_blocks``, ``local_blocks``,
    ``packed_queries``, ``page_size`` and any later one) come from ixo/config_fields.hpp:
    each is a keyword with the C++ default and range and a property of the same name.

    Example::

        import numpy as np, indexer_oracle as io
        case = io.generate("tiny", seed=1)            # or io.Case(q, k, table, slots, lens, block_size=128, topk=16)
        ids, scores = io.reference(case)              # int32 [Hq,R,topk], float32 [Hq,R,NB]
        io.assert_indexer(case, ids, scores)          # passes
        case.save("/tmp/case")                        # the case-directory format of `ixo`
        same = io.Case.load("/tmp/case")
        print(same.R, same.Hq, same.block_size, same.k_dtype)
    """

    def __init__(self, q: Any, k_cache: Any, req_to_token: Any, slot_ids: Any, seq_lens: Any, *, block_size: int, topk: int,
                 init_blocks: int = _INT_FIELDS["init_blocks"][0], local_blocks: int = _INT_FIELDS["local_blocks"][0],
                 score_type: str = _DEFAULTS["score_type"], sm_scale: Optional[float] = None,
                 q_scale: float = _DEFAULTS["q_scale"], k_scale: float = _DEFAULTS["k_scale"], k_dtype: Optional[str] = None,
                 packed_queries: int = _INT_FIELDS["packed_queries"][0], page_size: int = _INT_FIELDS["page_size"][0],
                 page_table: Any = None, q_dtype: Optional[str] = None, k_scales: Any = None, **knobs: int) -> None:
        qb, q_kind = _bits(q, "q")
        if q_dtype is not None and q_dtype not in _Q_DTYPES:
            raise ValueError(f"q_dtype: unknown '{q_dtype}' (bf16, e4m3fn)")
        if q_kind not in (None,) + _Q_DTYPES:
            raise ValueError(f"q: must be bfloat16 or float8_e4m3fn (or uint16 bf16 bits / uint8 e4m3fn codes), got {q_kind}")
        if q_dtype is None:
            q_dtype = q_kind or "bf16"
        elif q_kind is not None and q_kind != q_dtype:
            raise ValueError(f"q_dtype: '{q_dtype}' contradicts the q tensor dtype ({q_kind})")
        if q_dtype == "bf16" and qb.dtype not in (np.uint16, np.int16):
            raise ValueError(f"q: bf16 bits must be uint16 or int16, got dtype {qb.dtype}"
                             + (" (uint8 e4m3fn codes need q_dtype='e4m3fn')" if qb.dtype in (np.uint8, np.int8) else ""))
        if q_dtype == "e4m3fn" and qb.dtype not in (np.uint8, np.int8):
            raise ValueError(f"q: e4m3fn codes must be uint8 or int8, got dtype {qb.dtype}")
        kb, k_kind = _bits(k_cache, "k_cache")
        if k_dtype is not None and k_dtype not in _K_DTYPES:
            raise ValueError(f"k_dtype: unknown '{k_dtype}' (bf16, e4m3fn, e4m3fnuz, e5m2, nvfp4)")
        if k_dtype is None:
            if k_kind is not None:
                k_dtype = k_kind
            elif kb.dtype in (np.uint16, np.int16):
                k_dtype = "bf16"
            else:
                raise ValueError(f"k_cache: dtype {kb.dtype} needs k_dtype= ('e4m3fn', 'e4m3fnuz', 'e5m2', 'nvfp4' for uint8 codes)")
        elif k_kind is not None and k_kind != k_dtype:
            raise ValueError(f"k_dtype: '{k_dtype}' contradicts the k_cache tensor dtype ({k_kind})")
        if k_dtype == "bf16" and kb.dtype not in (np.uint16, np.int16):
            raise ValueError(f"k_cache: bf16 bits must be uint16 or int16, got dtype {kb.dtype}")
        if k_dtype != "bf16" and kb.dtype not in (np.uint8, np.int8):
            raise ValueError(f"k_cache: {k_dtype} codes must be uint8 or int8, got dtype {kb.dtype}")
        sb = None
        if k_scales is not None:
            sb, s_kind = _bits(k_scales, "k_scales")
            if s_kind not in (None, "e4m3fn") or sb.dtype not in (np.uint8, np.int8):
                raise ValueError(f"k_scales: must be e4m3fn codes (uint8 or float8_e4m3fn), got dtype {s_kind or sb.dtype}")
            if k_dtype != "nvfp4":
                raise ValueError(f"k_scales: given, but k_dtype '{k_dtype}' has no block scales (only nvfp4)")
            sb = np.ascontiguousarray(sb).view(np.uint8)
        elif k_dtype == "nvfp4":
            raise ValueError("k_scales: required for k_dtype 'nvfp4' (uint8 e4m3fn codes [S, Hk, D/16])")
        # Python ints/floats or numpy scalars (0-d arrays too); checked here so that a bad value
        # is named with its field, never a json TypeError or an invalid-JSON message.
        # Integer knobs: the named keywords above, any other knob of the list by its name.
        for name in knobs:
            if name not in _INT_FIELDS:
                raise TypeError(f"Case() got an unexpected keyword argument '{name}'")
        named = {"block_size": block_size, "topk": topk, "init_blocks": init_blocks, "local_blocks": local_blocks,
                 "packed_queries": packed_queries, "page_size": page_size}
        config = {name: _config_int(named[name] if name in named else knobs.get(name, default), name)
                  for name, (default, _, _, _) in _INT_FIELDS.items()}
        config.update({"score_type": score_type, "q_scale": _config_float(q_scale, "q_scale"),
                       "k_scale": _config_float(k_scale, "k_scale"), "k_dtype": k_dtype})
        if q_dtype != "bf16":
            config["q_dtype"] = q_dtype
        if sm_scale is not None:
            config["sm_scale"] = _config_float(sm_scale, "sm_scale")
        self._c = _core.make_case(np.ascontiguousarray(qb).view(np.uint16 if q_dtype == "bf16" else np.uint8),
                                  np.ascontiguousarray(kb).view(np.uint16 if k_dtype == "bf16" else np.uint8),
                                  None if req_to_token is None else _ints(req_to_token, "req_to_token", np.int32),
                                  _ints(slot_ids, "slot_ids", np.int64), _ints(seq_lens, "seq_lens", np.int64),
                                  json.dumps(config, allow_nan=False),
                                  None if page_table is None else _ints(page_table, "page_table", np.int32), sb)

    @classmethod
    def _wrap(cls, core_case: Any) -> "Case":
        self = cls.__new__(cls)
        self._c = core_case
        return self

    @classmethod
    def load(cls, dir: str | os.PathLike) -> "Case":
        """Reads a case directory (case.json + q/k_cache/req_to_token/slot_ids/seq_lens .npy)."""
        return cls._wrap(_core.load_case(os.fspath(dir)))

    def save(self, dir: str | os.PathLike) -> None:
        """Writes the case directory that ``ixo`` and ``Case.load`` read."""
        _core.save_case(self._c, os.fspath(dir))

    # Inputs (numpy copies).
    q = property(lambda self: self._c.q, doc="uint16 bf16 bits, or uint8 e4m3fn codes (q_dtype 'e4m3fn'), [R, Hq, D]")
    k_cache = property(lambda self: self._c.k_cache,
                       doc="uint16 bf16 bits or uint8 fp8 codes [S, Hk, D]; nvfp4: uint8 [S, Hk, D/2], low nibble = even element")
    k_scales = property(lambda self: self._c.k_scales, doc="nvfp4 only: uint8 e4m3fn scale codes [S, Hk, D/16]; else None")
    req_to_token = property(lambda self: self._c.req_to_token, doc="int32 [rows, width] (derived from page_table when paged)")
    page_table = property(lambda self: self._c.page_table, doc="int32 [rows, max_pages], or None (token slots)")
    slot_ids = property(lambda self: self._c.slot_ids, doc="int64 [R]")
    seq_lens = property(lambda self: self._c.seq_lens, doc="int64 [R]")
    # Shapes.
    R = property(lambda self: self._c.R, doc="query rows")
    Hq = property(lambda self: self._c.Hq, doc="index-Q heads")
    Hk = property(lambda self: self._c.Hk, doc="index-K heads")
    D = property(lambda self: self._c.D, doc="head dim")
    S = property(lambda self: self._c.S, doc="k_cache slots")
    NB = property(lambda self: self._c.NB, doc="score-buffer columns: ceil(width / block_size)")
    sm_scale = property(lambda self: self._c.sm_scale, doc="sm_scale, resolved (default D**-0.5)")
    k_dtype = property(lambda self: self._c.k_dtype, doc="'bf16', 'e4m3fn', 'e4m3fnuz', 'e5m2' or 'nvfp4'")
    q_dtype = property(lambda self: self._c.q_dtype, doc="'bf16' or 'e4m3fn'")
    score_type = property(lambda self: self._c.score_type, doc="'max' or 'lse'")

    def _cfg(self, key: str) -> Any:
        return json.loads(self._c.config_json)[key]

    q_scale = property(lambda self: self._cfg("q_scale"))
    k_scale = property(lambda self: self._cfg("k_scale"))
    # block_size, topk, init_blocks, local_blocks, packed_queries, page_size and every other
    # integer knob: properties made from _INT_FIELDS after the class.

    def torch(self, device: str = "cuda") -> dict[str, Any]:
        """The inputs as torch tensors of the right dtypes on ``device``: q bfloat16 (or
        float8_e4m3fn), k_cache bfloat16 or float8_* (nvfp4: uint8 packed codes, plus k_scales
        float8_e4m3fn), req_to_token int32, slot_ids int64, seq_lens int32, page_table int32
        (None for token-slot cases); plus the config keys (page_size too). An adapter to a real
        kernel is then a few lines."""
        import torch

        kdt = {"bf16": torch.bfloat16, "e4m3fn": torch.float8_e4m3fn, "e4m3fnuz": torch.float8_e4m3fnuz,
               "e5m2": torch.float8_e5m2, "nvfp4": torch.uint8}[self.k_dtype]
        kraw = self.k_cache
        k = torch.from_numpy(kraw.view(np.int16) if kraw.dtype == np.uint16 else kraw).to(device).view(kdt)
        qraw = self.q
        q = (torch.from_numpy(qraw.view(np.int16)).to(device).view(torch.bfloat16) if self.q_dtype == "bf16"
             else torch.from_numpy(qraw).to(device).view(torch.float8_e4m3fn))
        out = {
            "q": q,
            "k_cache": k,
            "req_to_token": torch.from_numpy(self.req_to_token).to(device),
            "slot_ids": torch.from_numpy(self.slot_ids).to(device),
            "seq_lens": torch.from_numpy(self.seq_lens.astype(np.int32)).to(device),
            "page_table": None if self.page_table is None else torch.from_numpy(self.page_table).to(device),
        }
        if self.k_dtype == "nvfp4":
            out["k_scales"] = torch.from_numpy(self.k_scales).to(device).view(torch.float8_e4m3fn)
        out.update({k: getattr(self, k) for k in (*_INT_FIELDS, "score_type", "sm_scale", "q_scale", "k_scale")})
        return out

    def __repr__(self) -> str:
        qd = f"q_dtype='{self.q_dtype}', " if self.q_dtype != "bf16" else ""
        return (f"Case(R={self.R}, Hq={self.Hq}, Hk={self.Hk}, D={self.D}, S={self.S}, NB={self.NB}, k_dtype='{self.k_dtype}', {qd}"
                f"block_size={self.block_size}, topk={self.topk}, init_blocks={self.init_blocks}, "
                f"local_blocks={self.local_blocks}, score_type='{self.score_type}', packed_queries={self.packed_queries}"
                + (f", page_size={self.page_size}, max_pages={self.page_table.shape[1]})" if self.page_table is not None else ")"))


def _int_knob(name: str, default: int) -> property:
    # case.json may leave a knob out at its default (page_size on token-slot cases).
    return property(lambda self: json.loads(self._c.config_json).get(name, default),
                    doc=f"integer knob '{name}' (ixo/config_fields.hpp; default {default})")


for _name, (_default, _, _, _) in _INT_FIELDS.items():
    setattr(Case, _name, _int_knob(_name, _default))


def presets() -> list[str]:
    """The generator presets (the same names as ``ixo list``)."""
    return list(_core.presets())


def generate(preset: str, seed: int) -> Case:
    """A generated case: ``generate("verify", 3)``; the same bytes as ``ixo gen --preset verify --seed 3``."""
    return Case._wrap(_core.generate(preset, seed))

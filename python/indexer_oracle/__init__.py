"""indexer_oracle: judge sparse-attention indexer kernels (block scores + top-k) against an
exact CPU oracle, from Python.

Example (a numpy or torch kernel under the whole suite)::

    import indexer_oracle as io

    case = io.generate("verify", seed=1)             # or io.Case(q, k_cache, req_to_token, slot_ids, seq_lens, block_size=128, topk=16)
    ids, scores = my_kernel(case)                    # int32 [Hq,R,topk] (+ float32 [Hq,R,NB]), numpy or torch
    io.assert_indexer(case, ids, scores)             # AssertionError(report) on a wrong selection

    r = io.fuzz(my_kernel, seconds=30)               # RapidCheck cases, failures shrunk and saved
    assert r.passed, r.report                        # PASS needs >= 1 judged case and no failure

    # judged inside the kernel's own contract (what it promises), e.g. SGLang's Triton indexer:
    r = io.fuzz(my_kernel, contract="sglang-triton-decode", shapes=4, seconds=60)
    print(io.suite(my_kernel).table)                 # default suite + fixtures + properties

``kernel(case)`` may raise ``io.Unsupported`` to skip a case (never counted as a pass).
"""
from ._case import Case, generate, presets
from ._contract import Contract, contract, contracts
from ._kernels import FuzzResult, SuiteResult, Unsupported, backend, fuzz, replay, suite
from ._verdict import Verdict, assert_indexer, check, reference

__all__ = ["Case", "generate", "presets", "reference", "check", "assert_indexer", "Verdict", "fuzz", "FuzzResult", "suite",
           "SuiteResult", "Unsupported", "backend", "replay", "Contract", "contract", "contracts"]

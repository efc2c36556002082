#!/usr/bin/env python3
"""An `exec:` kernel: `ixo check --backend exec:'python3 examples/exec_kernel.py'`.

ixo runs `COMMAND CASE_DIR OUT_DIR` once per case. This script reads the case directory
with plain numpy (any language can: case.json + .npy files), runs the naive kernel and
writes OUT_DIR/topk_idx.npy (int32 [Hq,R,topk]) and OUT_DIR/scores.npy (float32
[Hq,R,NB]). Exit 77 tells ixo "this kernel does not support this case" (a SKIP).

Options (for the tests): --bug gqa plants the head-mapping bug; --bug scores adds 1 to every score (ids right); --only-bf16 exits 77 on fp8 (K or q) and nvfp4.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_kernel import indexer  # noqa: E402


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    case_dir, out_dir = [a for a in argv if not a.startswith("--")][-2:]
    with open(os.path.join(case_dir, "case.json")) as f:
        cfg = json.load(f)
    if "--only-bf16" in flags and (cfg["k_dtype"] != "bf16" or cfg.get("q_dtype", "bf16") != "bf16"):
        print(f"this kernel handles bf16 K only, not {cfg['k_dtype']}", file=sys.stderr)
        return 77
    load = lambda name: np.load(os.path.join(case_dir, name + ".npy"))  # noqa: E731
    ids, scores = indexer(load("q"), load("k_cache"), cfg["k_dtype"], load("req_to_token"), load("slot_ids"),
                          load("seq_lens"), cfg, gqa_bug="gqa" in argv,
                          k_scales=load("k_scales") if cfg["k_dtype"] == "nvfp4" else None)
    if "scores" in argv:
        scores = scores + np.float32(1)
    np.save(os.path.join(out_dir, "topk_idx.npy"), ids)
    np.save(os.path.join(out_dir, "scores.npy"), scores)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

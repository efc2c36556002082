#!/usr/bin/env python3
"""Contract fuzzing of the Triton SGLang stand-in (examples/sglang_triton_standin.py) on a GPU machine:
for bug in (None, "hk_packed_heads", "local0_group_length") and shapes in (4, None), one run of

    io.fuzz(make_kernel(partial(fn, bug=bug), packed=True), contract="sglang-triton-decode",
            seconds=60, shapes=shapes, max_failures=1, out=...)

each in its own process with a cold Triton cache (TRITON_CACHE_DIR a fresh temporary folder; a process
also starts with an empty in-memory kernel cache), printing one JSON line per run: bug, shapes, seconds,
cases, cases_per_second, first_failure_s (time from the start of fuzz to the first failing kernel call, judged
by io.check with the same contract, or plain io.check if this build's io.check takes no contract; null if
none), first_failure_source,
failures, shrunk_rows (rows of the first shrunk case), plus the run's stderr in OUT/fuzz-<bug>-<shapes>.log.

    PYTHONPATH=build/python:examples python3 examples/sglang_triton_fuzz.py --out OUT [--seconds 60]
    PYTHONPATH=build/python:examples python3 examples/sglang_triton_fuzz.py --smoke --out OUT
    PYTHONPATH=examples python3 examples/sglang_triton_fuzz.py --compare 200     # no indexer_oracle needed

--smoke: a quick agreement check before fuzzing (no contract API needed): the clean Triton stand-in through
the adapter passes io.check on in-contract presets, and each bug switch gives the numpy stand-in's verdict
on the presets and hand-built cases that expose it. One JSON line per check.
--compare N: the Triton stand-in's ids equal the numpy stand-in's bit for bit on N random batches.
"""
import argparse
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CONTRACT = "sglang-triton-decode"
BUGS = (None, "hk_packed_heads", "local0_group_length")
SHAPES = (4, None)


def _judge():
    """(judge(case, ids) -> passed, source): io.check with the contract if this build's io.check takes one;
    else plain io.check (approximate: it ranks NaN blocks lowest, where the contract says unspecified)."""
    import indexer_oracle as io

    try:
        if "contract" in inspect.signature(io.check).parameters:
            return (lambda case, ids: io.check(case, ids, contract=CONTRACT).passed), "io.check(contract)"
    except (TypeError, ValueError):
        pass
    return (lambda case, ids: io.check(case, ids).passed), "io.check(no contract)"


def _fuzz_seconds_from_log(log):
    """The total time of the summary line ("fuzz: N runs ... in 12.3 s ...: K failures"), shrinking included."""
    for line in log or []:
        m = re.search(r"^fuzz:.* in (\d+(?:\.\d+)?) s\b.*: ([1-9]\d*) failures", line)
        if m:
            return float(m.group(1))
    return None


def one_run(bug, shapes, seconds, out):
    """The child process: one fuzz run, one JSON line on stdout."""
    import indexer_oracle as io
    from sglang_adapter import make_kernel
    from sglang_triton_standin import flash_decode_with_topk_idx

    inner = make_kernel(partial(flash_decode_with_topk_idx, bug=bug), packed=True, device="cuda")
    judge, judge_source = _judge()
    state = {"t0": None, "first": None, "calls": 0, "kernel_s": 0.0, "judge_s": 0.0}

    def kernel(case):
        t = time.time()
        ids = inner(case)
        state["calls"] += 1
        state["kernel_s"] += time.time() - t
        if state["first"] is None:
            t = time.time()
            if not judge(case, ids):
                state["first"] = time.time() - state["t0"]
            state["judge_s"] += time.time() - t
        return ids

    kernel.__name__ = f"sglang_triton_standin_{bug or 'clean'}"
    os.makedirs(out, exist_ok=True)
    state["t0"] = time.time()
    r = io.fuzz(kernel, seconds=seconds, contract=CONTRACT, shapes=shapes, max_failures=1, out=out)
    wall = time.time() - state["t0"]
    shrunk = io.Case.load(r.failures[0]).R if r.failures else None
    first, source = state["first"], judge_source
    if first is None and r.failures:
        first, source = _fuzz_seconds_from_log(r.log), "log: whole fuzz time, shrinking included"
    for line in r.log:
        print(line, file=sys.stderr)
    if r.report:
        print(r.report, file=sys.stderr)
    print(json.dumps({"bug": bug, "shapes": shapes, "seconds": round(wall, 2), "cases": r.cases,
                      "runs": getattr(r, "runs", None), "kernel_calls": state["calls"],
                      "cases_per_second": round(r.cases / wall, 3) if wall > 0 else None,
                      "kernel_seconds": round(state["kernel_s"], 2), "judge_seconds": round(state["judge_s"], 2),
                      "first_failure_s": None if first is None else round(first, 2),
                      "first_failure_source": source if first is not None else None,
                      "failures": len(r.failures), "shrunk_rows": shrunk, "passed": r.passed,
                      "failure_dirs": list(r.failures)}), flush=True)


def smoke(out):
    """Triton stand-in vs the numpy stand-in's verdicts, no contract API needed."""
    import numpy as np

    import indexer_oracle as io
    import sglang_standin as npst
    from sglang_adapter import make_kernel
    from sglang_triton_standin import flash_decode_with_topk_idx as tri

    def numpy_kernel(bug):
        return make_kernel(partial(npst.flash_decode_with_topk_idx, bug=bug), packed=True, device=None)

    def triton_kernel(bug):
        return make_kernel(partial(tri, bug=bug), packed=True, device="cuda")

    def bf16(x):
        return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)

    def one_request(k, lens, Hq, local):
        S, Hk, D = k.shape
        table = np.stack([np.zeros(S, np.int32), np.arange(S, dtype=np.int32), np.arange(S, dtype=np.int32)[::-1]])
        return io.Case(bf16(np.full((len(lens), Hq, D), 0.5)), bf16(k), table, np.ones(len(lens), np.int64),
                       np.array(lens), block_size=16, topk=2, local_blocks=local, packed_queries=len(lens))

    hk = np.zeros((140, 2, 64))
    hk[39, 0] = 1.0
    hk[83, 1] = 1.0
    l0 = np.full((100, 1, 64), -1.0)
    l0[20], l0[50], l0[95] = 1.0, 0.5, 2.0
    cases = [(p, s, io.generate(p, s)) for p in ("verify", "gqa", "local0", "fp8-e4m3fn", "e5m2-lse", "tiny", "km-slots",
                                                 "forced-overlap", "topk-above-nb", "boundary", "exact", "near-tie",
                                                 "specials-e4m3fn", "specials-e5m2") for s in (1, 2)]
    cases += [("hand-hk", 0, one_request(hk, [131, 132], 2, 1)), ("hand-local0", 0, one_request(l0, [95, 96], 1, 0)),
              ("hand-local1", 0, one_request(l0, [95, 96], 1, 1))]
    bad = 0
    for bug in BUGS:
        for name, seed, case in cases:
            rec = {"smoke": name, "seed": seed, "bug": bug}
            try:
                want = io.check(case, numpy_kernel(bug)(case)).passed
                t = time.time()
                ids = triton_kernel(bug)(case)
                rec["seconds"] = round(time.time() - t, 3)
                v = io.check(case, ids)
                rec.update(numpy_passed=want, triton_passed=v.passed, agree=want == v.passed)
                if bug is None and not v.passed:
                    rec["report"] = v.report[:2000]
            except Exception as e:  # noqa: BLE001 - reported, counted
                rec.update(error=f"{type(e).__name__}: {e}", agree=False)
            bad += not rec["agree"]
            print(json.dumps(rec), flush=True)
    print(json.dumps({"smoke": "summary", "checks": len(BUGS) * len(cases), "disagreements": bad}), flush=True)
    return 1 if bad else 0


def compare(n, seed=0):
    """Triton stand-in vs numpy stand-in, ids bit for bit, on n random in-contract batches of full groups
    (every bug switch; init + local <= topk so no forced ties; no fp8 NaN/Inf codes). Needs numpy, torch
    and triton only (not indexer_oracle). One JSON line per difference, then a summary line."""
    import numpy as np
    import torch

    import sglang_standin as npst
    import sglang_triton_standin as trst

    rng = np.random.default_rng(seed)
    dtypes = {"bf16": torch.bfloat16, "e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}

    def bf16(x):
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)

    done = bad = 0
    t0 = time.time()
    for _ in range(n):
        bs, D = int(rng.choice([16, 32, 64, 128])), int(rng.choice([64, 128]))
        Hk = int(rng.choice([1, 2]))
        Hq = Hk * int(rng.choice([1, 2, 4]))
        P, G = int(rng.choice([1, 2, 3, 4])), int(rng.integers(1, 4))
        R = G * P
        kd, st = str(rng.choice(list(dtypes))), str(rng.choice(["max", "lse"]))
        topk, local, init = int(rng.integers(1, 20)), int(rng.integers(0, 3)), int(rng.integers(0, 3))
        if init + local > topk:
            init, local = 0, min(local, topk)
        W = int(rng.integers(1, 40)) * bs + 8
        S = W * G + 5
        prefix = rng.integers(0, W - P, size=G)
        lens = np.concatenate([p + 1 + np.arange(P) for p in prefix]).astype(np.int64)
        table = np.stack([rng.permutation(S)[:W].astype(np.int32) for _ in range(G + 1)])
        slots = np.repeat(rng.permutation(G + 1)[:G], P).astype(np.int64)
        q = bf16(rng.standard_normal((R, Hq, D)))
        if kd == "bf16":
            k = bf16(rng.standard_normal((S, Hk, D)))
        else:
            k = rng.integers(0, 256, (S, Hk, D)).astype(np.uint8)
            k[(k & 0x7F) >= (0x7F if kd == "e4m3fn" else 0x7C)] = 0x10
        tq = torch.from_numpy(q.view(np.int16)).cuda().view(torch.bfloat16)
        tk = torch.from_numpy(k.view(np.int16) if kd == "bf16" else k).cuda().view(dtypes[kd])
        tt, tl_, ts = (torch.from_numpy(x).cuda() for x in (table, lens, slots))
        for bug in npst.BUGS:
            kw = dict(init_blocks=init, local_blocks=local, score_type=st, disable_index_value=True, packed_queries=P,
                      bug=bug)
            _, x = npst.flash_decode_with_topk_idx(q, None, k, None, table, lens, W, slots, bs, topk, k_dtype=kd, **kw)
            _, y = trst.flash_decode_with_topk_idx(tq, None, tk, None, tt, tl_, W, ts, bs, topk, **kw)
            y = y.cpu().numpy()
            done += 1
            if not np.array_equal(x, y):
                bad += 1
                h, r = (int(v) for v in np.argwhere(x != y)[0][:2])
                print(json.dumps({"compare": "diff", "bs": bs, "D": D, "Hq": Hq, "Hk": Hk, "P": P, "k_dtype": kd,
                                  "score_type": st, "topk": topk, "init": init, "local": local, "bug": bug,
                                  "head": h, "row": r, "numpy": x[h, r].tolist(), "triton": y[h, r].tolist()}),
                      flush=True)
    print(json.dumps({"compare": "summary", "calls": done, "differ": bad, "seconds": round(time.time() - t0, 1)}),
          flush=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp(prefix="sglang-fuzz-"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--compare", type=int, default=0, metavar="N", help="Triton vs numpy stand-in on N random batches")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--bug", default="none")
    ap.add_argument("--shapes", default="none")
    a = ap.parse_args()
    if a.compare:
        sys.exit(compare(a.compare))
    if a.smoke:
        sys.exit(smoke(a.out))
    if a.one:
        one_run(None if a.bug == "none" else a.bug, None if a.shapes == "none" else int(a.shapes), a.seconds, a.out)
        return
    os.makedirs(a.out, exist_ok=True)
    status = 0
    for bug in BUGS:
        for shapes in SHAPES:
            tag = f"{bug or 'clean'}-{shapes or 'all'}"
            cache = tempfile.mkdtemp(prefix=f"triton-cache-{tag}-")
            env = dict(os.environ, TRITON_CACHE_DIR=cache)
            cmd = [sys.executable, os.path.abspath(__file__), "--one", "--bug", bug or "none", "--shapes",
                   str(shapes or "none"), "--seconds", str(a.seconds), "--out", os.path.join(a.out, f"fuzz-{tag}")]
            t = time.time()
            with open(os.path.join(a.out, f"fuzz-{tag}.log"), "w") as log:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                                   timeout=max(600, 5 * a.seconds))
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            if p.returncode or not lines:
                status = 1
                print(json.dumps({"bug": bug, "shapes": shapes, "error": f"rc {p.returncode}",
                                  "process_seconds": round(time.time() - t, 2), "log": f"fuzz-{tag}.log"}), flush=True)
            else:
                rec = json.loads(lines[-1])
                rec["process_seconds"] = round(time.time() - t, 2)
                print(json.dumps(rec), flush=True)
                found = rec["failures"] > 0
                if found != (bug is not None):
                    status = 1  # the clean stand-in failed, or a planted bug was not found
            shutil.rmtree(cache, ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()

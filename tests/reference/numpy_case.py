"""Writes a case directory with plain numpy (as a kernel engineer would), plus numpy's own
float64 top-k (an implementation independent of the C++ oracle) and a broken copy of it.
Usage: numpy_case.py DIR SEED"""
import json
import os
import sys

import numpy as np

out, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
os.makedirs(out, exist_ok=True)

def to_bf16_bits(x):  # round to nearest even
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)

def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

bs, topk, init, local, ndt, reqs, hq, d = 32, 5, 1, 1, 3, 3, 2, 64
prefixes = rng.integers(100, 900, size=reqs)
prefixes[0] = 8 * bs - 2  # straddles a block boundary
width = int(prefixes.max()) + ndt + 4
rows = 2 * reqs + 3
slots = rng.permutation(np.arange(1, rows))[:reqs]
S = rows * width
table = rng.permutation(S).reshape(rows, width).astype(np.int64)
neg = rng.random(table.shape) < 0.25
table[neg] -= S  # negative aliases
q = to_bf16_bits(rng.standard_normal((reqs * ndt, hq, d)))
k = to_bf16_bits(rng.standard_normal((S, 1, d)))
slot_ids = np.repeat(slots, ndt).astype(np.int64)
seq_lens = (np.repeat(prefixes, ndt) + np.tile(np.arange(1, ndt + 1), reqs)).astype(np.int32)

np.save(f"{out}/q.npy", q)
np.save(f"{out}/k_cache.npy", k)
np.save(f"{out}/req_to_token.npy", table.astype(np.int32))
np.save(f"{out}/slot_ids.npy", slot_ids)
np.save(f"{out}/seq_lens.npy", seq_lens)
with open(f"{out}/case.json", "w") as f:
    json.dump({"block_size": bs, "topk": topk, "init_blocks": init, "local_blocks": local, "score_type": "max",
               "k_dtype": "bf16", "packed_queries": ndt}, f)

# numpy's own selection, float64, natural units (same ordering as log2 units).
qf, kf = from_bf16_bits(q), from_bf16_bits(k)[:, 0, :]
R = reqs * ndt
ids = -np.ones((hq, R, topk), dtype=np.int32)
for r in range(R):
    L = int(seq_lens[r]); nb = -(-L // bs)
    tok = table[slot_ids[r], :L] % S
    for h in range(hq):
        logits = kf[tok] @ qf[r, h] / np.sqrt(d)
        score = np.array([logits[b * bs:min((b + 1) * bs, L)].max() for b in range(nb)])
        score[:init] = 1e30
        score[max(0, nb - local):] = 1e29
        if nb <= topk:
            ids[h, r, :nb] = np.arange(nb)
        else:
            order = sorted(range(nb), key=lambda b: (-score[b], b))[:topk]
            ids[h, r] = np.sort(order)
np.save(f"{out}/np_topk_idx.npy", ids)
broken = ids.copy()
r = int(np.argmax([(-(-int(L) // bs)) for L in seq_lens]))
row = broken[0, r]
cand = [b for b in range(-(-int(seq_lens[r]) // bs)) if b not in set(row.tolist())]
# Replace the first non-forced selected block by an unselected one that ranks lowest.
row_scores = None
row[list(row).index(next(b for b in row if b >= init and b < (-(-int(seq_lens[r]) // bs)) - local))] = cand[-1]
broken[0, r] = np.sort(row)
np.save(f"{out}/np_topk_idx_broken.npy", broken)

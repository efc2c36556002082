#!/usr/bin/env python3
"""Predict what work claims (IXO_PACKED_CLAIMS) and the balanced static plan would do to a one-wave
packed launch, from a measured CTA timeline (docs/experiments/cta-timeline.patch's CSV: CTA x, SM,
start, q+plan done, first K sub-tile in, ends of warps 0..3; ns of %globaltimer).

Model: each SM streams blocks at the rate its CTAs showed (blocks / (end - first K), the mean of its
CTAs), every CTA starts streaming at the launch's median first-K time, and a CTA slot's rate does not
change while others finish (the bulk at the read ceiling: conservative for the tail). Then:
  chunk plan (as measured), balanced static plan (every slot the same blocks), work claims (blocks
  handed out one at a time to whichever slot is free first, no start cost: the kernel takes its next
  ticket several sub-tiles ahead of needing it).

Example (the data of session 17's call 1, 16 x 131072, in docs/experiments/data/):
  /usr/bin/python3 docs/experiments/tail_sim.py docs/experiments/data/s17-tl-bf16-16chunks.csv 16 2 537 4536
  /usr/bin/python3 docs/experiments/tail_sim.py docs/experiments/data/s17-tl-e4m3fn-24chunks.csv 24 3 268 4556
The per-SM rates ignore the DRAM ceiling, so a prediction below the read bound is the read bound.
"""
import csv
import heapq
import statistics as st
import sys


def load(path, chunks, nblk):
    per = -(-nblk // chunks)
    out = []
    for r in csv.reader(open(path)):
        v = list(map(int, r))
        if v[2] == 0:
            continue
        c = v[0] % chunks
        out.append(dict(sm=v[1], t0=v[2], tk=v[4], te=max(v[5:9]), b=min(per, nblk - c * per)))
    t0 = min(o['t0'] for o in out)
    for o in out:
        for k in ('t0', 'tk', 'te'):
            o[k] = (o[k] - t0) / 1000.0
    return out


def finish(slots, rates, left):
    """Greedy: the slot free first takes the next block (work claims)."""
    heap = list(slots)
    heapq.heapify(heap)
    while left > 0:
        t, sm = heapq.heappop(heap)
        heapq.heappush(heap, (t + 1.0 / rates[sm], sm))
        left -= 1
    return max(t for t, _ in heap)


def main():
    path, chunks, per_sm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    k_mb, read_gbs = float(sys.argv[4]), float(sys.argv[5])  # the launch's unique K, the run's read ceiling
    programs, nblk = 16, 1025  # 16 x 131072, block 128, one K head: 16 packed programs of 1025 blocks
    d = load(path, chunks, nblk)
    rates = {}
    for o in d:
        rates.setdefault(o['sm'], []).append(o['b'] / (o['te'] - o['tk']))
    rates = {k: st.mean(v) for k, v in rates.items()}
    c0 = st.median(o['tk'] for o in d)
    total = programs * nblk
    slots = [(c0, sm) for sm in rates for _ in range(per_sm)]
    print(f'{len(d)} CTAs on {len(rates)} SMs x {per_sm} slots; first K sub-tile (median) {c0:.1f} us')
    print(f'measured (chunk plan): last CTA ends {max(o["te"] for o in d):.1f} us')
    print(f'ideal (every SM busy to the end): {c0 + total / (per_sm * sum(rates.values())):.1f} us; '
          f'read bound (first K + K at the read ceiling): {c0 + k_mb / read_gbs * 1000:.1f} us')
    even = total / len(slots)
    print(f'balanced static plan ({even:.1f} blocks a slot): '
          f'{max(c0 + even / rates[sm] for _, sm in slots):.1f} us')
    print(f'work claims, every slot (one block at a time): {finish(slots, rates, total):.1f} us')
    placed = [(c0, o['sm']) for o in d]  # IXO_PACKED_CLAIMS as built: the chunk plan's CTAs, where they ran
    print(f'work claims on the chunk plan\'s {len(placed)} CTAs: {finish(placed, rates, total):.1f} us')


if __name__ == '__main__':
    main()

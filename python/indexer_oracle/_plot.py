"""Pictures of failing rows (matplotlib, optional)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _core


def plot_verdict(verdict: Any, path: str, max_rows: int = 8) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for f in verdict.failures:
        key = (f["head"], f["row"])
        if f["head"] >= 0 and f["row"] >= 0 and key not in rows:
            rows.append(key)
    rows = rows[:max_rows]
    detail = _core.oracle_detail(verdict.case._c)
    n = max(1, len(rows))
    fig, axes = plt.subplots(n, 1, figsize=(11, 3.2 * n), squeeze=False)
    if not rows:
        axes[0][0].text(0.5, 0.5, "no failing (head, row): " + verdict.report.splitlines()[0], ha="center", va="center")
        axes[0][0].axis("off")
    for ax, (h, r) in zip(axes[:, 0], rows):
        nb = int(detail["nb"][r])
        score = detail["score"][h, r, :nb].astype(np.float64)
        tau = detail["tau"][h, r, :nb]
        forced = detail["forced"][h, r, :nb].astype(bool)
        want = [b for b in detail["topk_idx"][h, r] if b >= 0]
        got = [b for b in verdict.topk_idx[h, r] if 0 <= b < nb]
        blocks = np.arange(nb)
        free = ~forced & np.isfinite(score)
        top = score[free].max() if free.any() else 1.0
        bottom = score[free].min() if free.any() else 0.0
        pad = 0.08 * (top - bottom if top > bottom else 1.0)
        shown = np.where(forced, top + 2 * pad, score)  # forced blocks (1e29/1e30) drawn above the rest
        ax.plot(blocks, shown, color="0.6", lw=0.8, zorder=1)
        ax.scatter(blocks[free], shown[free], s=8, color="0.4", zorder=2, label="block score (oracle)")
        if forced.any():
            ax.scatter(blocks[forced], shown[forced], marker="^", s=30, color="tab:purple", zorder=3, label="forced (init/local)")
        ax.scatter(want, shown[want], s=60, facecolors="none", edgecolors="tab:green", lw=1.5, zorder=4, label="expected")
        ax.scatter(got, shown[got], marker="x", s=40, color="tab:red", zorder=5, label="selected")
        k = len(want)
        free_sorted = np.sort(score[free])[::-1]
        n_forced_kept = int(forced[want].sum()) if want else 0
        kth = k - n_forced_kept
        if 0 < kth <= len(free_sorted):
            s_k = free_sorted[kth - 1]
            t_k = float(tau[free][np.argsort(-score[free], kind="stable")][kth - 1])
            ax.axhspan(s_k - t_k, s_k + t_k, color="tab:orange", alpha=0.25, label=f"tau band at k-th score ({t_k:.2g})")
            ax.axhline(s_k, color="tab:orange", lw=0.8)
        ax.set_ylim(bottom - pad, top + 3 * pad)
        ax.set_title(f"head {h} row {r}: L={int(verdict.case.seq_lens[r])}, nb={nb}, topk={verdict.case.topk}")
        ax.set_xlabel("block id")
        ax.set_ylabel("block score (log2 units)")
        ax.legend(loc="lower left", fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path

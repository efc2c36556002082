#!/usr/bin/python3
"""% of the read floor per shape, ours beside SGLang's anchors (issue 12's chart).

    /usr/bin/python3 bench/gpu/plot_floor.py OURS [--anchors bench/gpu/anchors-sglang-h200.json]
        [--out docs/img/floor.png] [--title TEXT]

OURS is the JSON of `bench_gpu_index_step --json F`, or the markdown table of `--out F`
(same rows; % of the floor = floor / time, floor = unique K bytes / the read ceiling the
bench measured in its run). Bars per shape: packed step and per-row step, ours and
SGLang's, with the issue's 85 % line. Example:

    >>> rows = load_ours("step.json")          # or "step.md"
    >>> rows[0]["shape"], round(rows[0]["packed_pct_of_floor"])
    ('16 req x 131072', 70)
    >>> plot(rows, load_anchors(), "docs/img/floor.png")
"""
import argparse
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_ours(path):
    """Rows with shape, k, per_row_us, packed_us, floor_us and the two % of floor."""
    text = open(path).read()
    if path.endswith(".json"):
        return json.loads(text)["rows"]
    rows = []
    for line in text.splitlines():  # the bench's markdown: 12 columns, numbers as printed
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 12 or not re.match(r"^\d+ req x \d+", cells[0]):
            continue
        per_row, packed, floor = float(cells[2]), float(cells[3]), float(cells[9])
        rows.append({"shape": cells[0], "k": cells[1], "per_row_us": per_row, "packed_us": packed,
                     "packed_score_us": float(cells[5]), "topk_us": float(cells[6]), "floor_us": floor,
                     "packed_pct_of_floor": 100.0 * floor / packed, "per_row_pct_of_floor": 100.0 * floor / per_row})
    if not rows:
        raise SystemExit(f"{path}: no bench rows found")
    return rows


def load_anchors(path=os.path.join(ROOT, "bench", "gpu", "anchors-sglang-h200.json")):
    rows = json.load(open(path))["rows"]
    for r in rows:
        r["packed_pct_of_floor"] = 100.0 * r["floor_us"] / r["packed_us"]
        r["per_row_pct_of_floor"] = 100.0 * r["floor_us"] / r["per_row_us"]
    return rows


def plot(ours, anchors, out, title="Index step on one H200: % of the read floor (higher is better)"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = lambda r: (r["shape"], r["k"])
    anc = {key(r): r for r in anchors}
    shown = [r for r in ours if key(r) in anc]
    labels = [f"{r['shape'].replace(' req x ', ' x ')}\n{r['k']}" for r in shown]
    series = [("ours packed", [r["packed_pct_of_floor"] for r in shown], "#1f77b4"),
              ("SGLang packed", [anc[key(r)]["packed_pct_of_floor"] for r in shown], "#aec7e8"),
              ("ours per-row", [r["per_row_pct_of_floor"] for r in shown], "#d62728"),
              ("SGLang per-row", [anc[key(r)]["per_row_pct_of_floor"] for r in shown], "#ff9896")]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    w = 0.2
    for i, (name, vals, color) in enumerate(series):
        xs = [x + (i - 1.5) * w for x in range(len(shown))]
        bars = ax.bar(xs, vals, w, label=name, color=color)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.axhline(85, color="k", linestyle="--", linewidth=0.8, label="target 85 %")
    ax.set_xticks(range(len(shown)), labels)
    ax.set_ylabel("% of floor (unique K bytes / read BW)")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.15))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ours")
    ap.add_argument("--anchors", default=os.path.join(ROOT, "bench", "gpu", "anchors-sglang-h200.json"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "floor.png"))
    ap.add_argument("--title")
    a = ap.parse_args()
    kw = {"title": a.title} if a.title else {}
    print(plot(load_ours(a.ours), load_anchors(a.anchors), a.out, **kw))


if __name__ == "__main__":
    main()

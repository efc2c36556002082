"""bench/gpu/plot_floor.py: the bench's rows and the anchors to % of the floor, and the chart."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_floor  # noqa: E402

TABLE = """Device: NVIDIA H200, 132 SMs. Ceilings measured in this run: pure read 4448 GB/s.

| shape | K | per-row step us | packed step us | speedup | packed score alone us | top-k alone us | unique K MB | per-row K MB read | floor us (unique K / read BW) | packed K GB/s | packed % of read BW |
|---|---|---|---|---|---|---|---|---|---|---|---|
| 16 req x 131072 | bf16 | 467.2 | 171.8 | 2.72x | 160.2 | 10.1 | 537 | 2148 | 120.7 | 3125 | 70 % |
| 32 req x 524288 | e4m3fn | 3263.7 | 902.7 | 3.62x | 885.0 | 13.5 | 2148 | 8590 | 482.8 | 2379 | 53 % |
"""


def test_markdown_rows_give_percent_of_floor(tmp_path):
    p = tmp_path / "step.md"
    p.write_text(TABLE)
    rows = plot_floor.load_ours(str(p))
    assert [(r["shape"], r["k"]) for r in rows] == [("16 req x 131072", "bf16"), ("32 req x 524288", "e4m3fn")]
    # 120.7 / 171.8 and 120.7 / 467.2 (the floor over each step's time)
    assert rows[0]["packed_pct_of_floor"] == pytest.approx(70.256, abs=1e-3)
    assert rows[0]["per_row_pct_of_floor"] == pytest.approx(25.835, abs=1e-3)
    assert rows[1]["packed_pct_of_floor"] == pytest.approx(53.484, abs=1e-3)


def test_json_rows_are_taken_as_written(tmp_path):
    p = tmp_path / "step.json"
    p.write_text(json.dumps({"rows": [{"shape": "16 req x 131072", "k": "bf16", "packed_pct_of_floor": 70.0,
                                       "per_row_pct_of_floor": 26.0}]}))
    assert plot_floor.load_ours(str(p))[0]["packed_pct_of_floor"] == 70.0


def test_anchors_percent_of_floor():
    a = {(r["shape"], r["k"]): r for r in plot_floor.load_anchors()}
    assert a[("16 req x 131072", "bf16")]["packed_pct_of_floor"] == pytest.approx(100 * 118 / 183.7)
    assert a[("32 req x 524288", "e4m3fn")]["per_row_pct_of_floor"] == pytest.approx(100 * 472 / 3193.9)


def test_chart_is_a_png(tmp_path):
    p = tmp_path / "step.md"
    p.write_text(TABLE)
    out = plot_floor.plot(plot_floor.load_ours(str(p)), plot_floor.load_anchors(), str(tmp_path / "f.png"))
    assert open(out, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_file_without_rows_is_refused(tmp_path):
    p = tmp_path / "empty.md"
    p.write_text("no table here\n")
    with pytest.raises(SystemExit):
        plot_floor.load_ours(str(p))

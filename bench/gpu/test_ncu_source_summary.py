"""ncu_source_summary on a hand-made source page (the layout of `ncu --page source --csv`)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_source_summary as ns  # noqa: E402

PAGE = '''"Kernel Name","score_mma_kernel"
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","stall_long_sb","stall_wait","Instructions Executed"
"0x10","LDGSTS.E.BYPASS.128 [R4], desc[UR6][R2.64]","1,500","1,400","0","200","512"
"0x20","DEPBAR.LE SB0, 0x2","4,100","4,000","3,800","0","512"
"0x30","HMMA.16816.F32.BF16 R8, R12, R16, R8","2,400","2,000","0","2,000","1,024"
"0x40","@P0 HMMA.16816.F32.BF16 R20, R12, R18, R20","1,000","900","0","900","1,024"
"0x50","IADD3 R1, R1, 0x1, RZ","1,000","0","0","0","2,128"
'''


def write_page(tmp_path, text=PAGE):
    p = tmp_path / "sass.csv"
    p.write_text(text)
    return str(p)


def test_ranks_instructions_by_samples_and_sums_opcodes(tmp_path):
    s = ns.summarize(ns.load_source_csv(write_page(tmp_path)), top=3)
    assert s["total"] == 10000  # ncu's thousands separators dropped
    assert [t["source"].split()[0] for t in s["top"]] == ["DEPBAR.LE", "HMMA.16816.F32.BF16", "LDGSTS.E.BYPASS.128"]
    assert s["top"][0]["share"] == pytest.approx(0.41)
    assert s["top"][0]["reasons"] == {"stall_long_sb": 3800}
    # the predicated HMMA joins the unpredicated one: 2400 + 1000
    assert s["by_opcode"][:2] == [("DEPBAR.LE", 4100), ("HMMA.16816.F32.BF16", 3400)]


def test_sums_warp_executions_per_opcode(tmp_path):
    e = ns.executed_by_opcode(ns.load_source_csv(write_page(tmp_path)))
    assert e["column"] == "Instructions Executed"
    assert e["total"] == 5200
    # IADD3 alone (2128) is the most executed instruction; the two HMMA lines together (2048) come next
    assert e["by_opcode"][:2] == [("IADD3", 2128), ("HMMA.16816.F32.BF16", 2048)]
    assert dict(e["by_opcode"])["DEPBAR.LE"] == 512


def test_main_prints_the_executed_table_or_says_it_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["ncu_source_summary.py", write_page(tmp_path), "--top", "2"])
    ns.main()
    out = capsys.readouterr().out
    assert "Instructions Executed: 5200 warp instructions" in out
    assert "| IADD3 | 2128 | 40.9 % |" in out
    no_exec = "\n".join(line.rsplit(",", 1)[0] for line in PAGE.splitlines()) + "\n"
    monkeypatch.setattr(sys, "argv", ["ncu_source_summary.py", write_page(tmp_path, no_exec)])
    ns.main()
    assert "no executed-instruction column" in capsys.readouterr().out


def test_rejects_what_is_not_a_source_page(tmp_path):
    with pytest.raises(ValueError, match="no header row with a 'Source' column"):
        ns.load_source_csv(write_page(tmp_path, '"ID","Kernel Name"\n"1","k"\n'))
    rows = ns.load_source_csv(write_page(tmp_path, '"Address","Source","Instructions Executed"\n"0x0","NOP","4"\n'))
    with pytest.raises(ValueError, match="no sampling column"):
        ns.summarize(rows)

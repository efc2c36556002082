"""ci/gpu-check.sh's perfgate stage (no GPU): fake benchmark binaries in BUILD_DIR write stored --gate JSONs.

Checks how the stage wires REBASELINE (0, 1, pass) to ci/gpu-perf-gate.py: its exit status, the baseline
file and the copy left in the log dir.
"""
import json
import os
import subprocess

import pytest

from test_perf_gate import ALL, HEAVIEST, LATENCY, STEP, baseline_json, run_json, scaled, write

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "ci", "gpu-check.sh")
FAKE = """#!/bin/sh
# a benchmark binary's stand-in: copies {src} to the path after --json
while [ $# -gt 0 ]; do [ "$1" = --json ] && cp {src} "$2"; shift; done
"""


def perfgate(tmp_path, step_cases, rebaseline, baseline_cases=ALL):
    """The perfgate stage on fake binaries; returns the process, the baseline file, its text before, the log dir."""
    build = tmp_path / "build" / "bench" / "gpu"
    build.mkdir(parents=True)
    for name, run in (("bench_gpu_index_step", run_json(step_cases)),
                      ("bench_gpu_latency", run_json(LATENCY, "bench_gpu_latency"))):
        src = write(tmp_path / f"{name}.json", run)
        (build / name).write_text(FAKE.format(src=src))
        (build / name).chmod(0o755)
    baseline = tmp_path / "perf-baseline-test.json"
    write(baseline, json.dumps(baseline_json(baseline_cases), indent=2))
    out = tmp_path / "out"
    env = {**os.environ, "STAGES": "perfgate", "BUILD_DIR": str(tmp_path / "build"), "PERF_BASELINE": str(baseline),
           "REBASELINE": rebaseline, "PERF_COMMIT": "c0ffee"}
    before = baseline.read_text()
    p = subprocess.run(["bash", CHECK, str(out)], env=env, capture_output=True, text=True, timeout=120)
    return p, baseline, before, out


def cases_of(path):
    return {n: c["us"] for n, c in json.load(open(path))["cases"].items()}


def test_a_pass_leaves_the_baseline_alone_by_default(tmp_path):
    p, baseline, before, out = perfgate(tmp_path, scaled(STEP, 0.9), "0")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "perf gate rc=0: perf gate: PASS" in p.stdout
    assert baseline.read_text() == before and not (out / baseline.name).exists()


def test_rebaseline_pass_writes_the_baseline_from_the_same_runs_and_copies_it(tmp_path):
    faster = scaled(STEP, 0.9)
    p, baseline, before, out = perfgate(tmp_path, faster, "pass")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "(REBASELINE=pass) rc=0: perf gate: PASS" in p.stdout
    assert cases_of(baseline) == {**faster, **LATENCY} == cases_of(out / baseline.name)
    assert json.load(open(baseline))["commit"] == "c0ffee"


def test_rebaseline_pass_on_a_slower_run_fails_and_writes_nothing(tmp_path):
    p, baseline, before, out = perfgate(tmp_path, scaled(STEP, 1.06, HEAVIEST), "pass")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "(REBASELINE=pass) rc=1: perf gate: FAIL" in p.stdout and "not re-baselined" in p.stdout
    assert baseline.read_text() == before and not (out / baseline.name).exists()


def test_rebaseline_1_writes_the_baseline_even_from_a_slower_run(tmp_path):
    slower = scaled(STEP, 1.06, HEAVIEST)
    p, baseline, before, out = perfgate(tmp_path, slower, "1")
    assert p.returncode == 0, p.stdout + p.stderr
    assert cases_of(baseline) == {**slower, **LATENCY} == cases_of(out / baseline.name)


@pytest.mark.parametrize("value", ["yes", "2", "Pass"])
def test_an_unknown_rebaseline_value_is_bad_input_before_any_benchmark(tmp_path, value):
    p, baseline, before, out = perfgate(tmp_path, STEP, value)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"bad input: REBASELINE={value} (0, 1 or pass)" in p.stderr
    assert baseline.read_text() == before and not (out / "perfgate-step.json").exists()

"""`--backend exec:COMMAND` through the ixo command line: pass, skip (77), fail, timeout,
malformed outputs, fuzz with shrinking and replay, mixing with a built-in backend."""
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES

IXO = os.environ.get("IXO")
pytestmark = pytest.mark.skipif(not IXO, reason="IXO (path of the ixo binary) not set; run through ctest")
KERNEL = f"exec:{sys.executable} {EXAMPLES}/exec_kernel.py"


# No wall-time limit here on purpose (issue 23: the gate must not depend on the machine's
# speed): no subprocess timeout, and every exec: backend gets --exec-timeout 3600 (the default
# 60 s per case is reachable by a correct kernel on a loaded machine) unless the test is about
# the per-case timeout itself. A hang is caught by the ctest TIMEOUT (python/CMakeLists.txt).
NO_EXEC_DEADLINE = ("--exec-timeout", "3600")


def ixo(*args):
    if args[0] in ("check", "run", "fuzz") and any(a.startswith("exec:") for a in args) and "--exec-timeout" not in args:
        args = (*args, *NO_EXEC_DEADLINE)
    p = subprocess.run([IXO, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    d = tmp_path_factory.mktemp("cases")
    for preset in ("gqa", "fp8-e4m3fn"):
        assert ixo("gen", "--preset", preset, "--seed", "1", "--out", str(d / preset))[0] == 0
    return d


def test_a_right_kernel_passes(cases):
    rc, out = ixo("check", str(cases / "gqa"), "--backend", KERNEL, "--backend", "cpu-packed")
    assert rc == 0, out
    assert out.count("PASS") == 2


def test_a_wrong_kernel_fails_with_the_report(cases):
    rc, out = ixo("check", str(cases / "gqa"), "--backend", KERNEL + " --bug gqa")
    assert rc == 1 and "ids: head" in out and "missing" in out, out


def test_exit_77_is_a_skip_not_a_pass(cases):
    rc, out = ixo("check", str(cases / "fp8-e4m3fn"), "--backend", KERNEL + " --only-bf16")
    assert rc == 1 and "SKIP" in out and "bf16 K only" in out and "not passes" in out, out
    rc, out = ixo("check", str(cases / "gqa"), "--backend", KERNEL + " --only-bf16")
    assert rc == 0, out


def test_nonzero_exit_fails_with_the_stderr_tail(cases):
    rc, out = ixo("check", str(cases / "gqa"), "--backend", "exec:sh -c 'echo kernel exploded >&2; exit 3'")
    assert rc == 1 and "exited with status 3" in out and "kernel exploded" in out, out


def test_the_failure_quotes_the_kernels_stderr_not_its_stdout(cases):
    # The kernel's stdout goes to a log of its own; the failure quotes the tail of its stderr.
    # (printf joins the two words: the printed text is not in the command, i.e. the backend's name)
    kernel = """exec:sh -c 'printf "%s%s\\n" std out-marker; printf "%s%s\\n" std err-marker >&2; exit 3'"""
    rc, out = ixo("check", str(cases / "gqa"), "--backend", kernel)
    assert rc == 1 and "stderr tail:\nstderr-marker" in out and "stdout-marker" not in out, out


def test_a_timeout_kills_the_kernel_and_fails_the_case(cases):
    # Catches a missing or ignored --exec-timeout: without the kill the kernel sleeps its 30 s,
    # exits 0 with no outputs and the message below is absent (no wall clock asserted here).
    rc, out = ixo("check", str(cases / "gqa"), "--backend", "exec:sh -c 'sleep 30'", "--exec-timeout", "0.5")
    assert rc == 1 and "timed out after 0.5 s" in out, out


@pytest.mark.parametrize("script, words", [
    ("pass", ["wrote no OUT_DIR/topk_idx.npy"]),
    ("import sys, numpy as np; np.save(sys.argv[2] + '/topk_idx.npy', np.zeros((1, 2, 3), np.int32))",
     ["malformed outputs", "topk_idx", "shape"]),
    ("import sys, numpy as np; np.save(sys.argv[2] + '/topk_idx.npy', np.zeros((4, 12, 8), np.float32))",
     ["malformed outputs", "topk_idx"]),
    ("import sys; open(sys.argv[2] + '/topk_idx.npy', 'w').write('garbage')", ["malformed outputs"]),
])
def test_missing_or_malformed_outputs_fail_the_case(cases, script, words):
    rc, out = ixo("check", str(cases / "gqa"), "--backend", f'exec:{sys.executable} -c "{script}"')
    assert rc == 1, out
    for w in words:
        assert w in out, out


def test_a_missing_program_is_bad_input(cases):
    rc, out = ixo("check", str(cases / "gqa"), "--backend", "exec:/nonexistent/kernel")
    assert rc == 2 and "--backend" in out and "not found" in out, out
    rc, out = ixo("check", str(cases / "gqa"), "--backend", "exec:'unterminated")
    assert rc == 2 and "unterminated" in out, out
    # A backslash escapes the double quote that ends the command: still unterminated (the shell's
    # rule), even as the last two characters.
    rc, out = ixo("check", str(cases / "gqa"), "--backend", 'exec:/bin/true "a\\"')
    assert rc == 2 and "unterminated" in out, out


def test_the_scores_the_kernel_writes_are_judged(cases):
    # OUT_DIR/scores.npy, when written, is judged: right ids with every score 1 off fail.
    rc, out = ixo("check", str(cases / "gqa"), "--backend", KERNEL + " --bug scores")
    assert rc == 1 and "scores" in out, out


def test_the_program_is_looked_up_on_path(cases, tmp_path):
    # A bare command word is found through $PATH (like execvp), not only in /usr/local/bin:/usr/bin:/bin.
    prog = tmp_path / "bin" / "ixo-test-kernel"
    prog.parent.mkdir()
    prog.write_text(f'#!/bin/sh\nexec {sys.executable} {EXAMPLES}/exec_kernel.py "$@"\n')
    prog.chmod(0o755)
    env = dict(os.environ, PATH=f"{prog.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    p = subprocess.run([IXO, "check", str(cases / "gqa"), "--backend", "exec:ixo-test-kernel", *NO_EXEC_DEADLINE],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout + p.stderr


def test_a_lost_kernel_exit_status_fails_at_once_not_as_a_timeout(cases):
    # With SIGCHLD ignored (inherited from a parent that set it) the child is reaped by the
    # kernel and waitpid fails with ECHILD: that is a kernel failure naming waitpid, not a wait
    # until --exec-timeout (which would report "timed out" instead).
    import signal
    p = subprocess.run([IXO, "check", str(cases / "gqa"), "--backend", "exec:/bin/true", "--exec-timeout", "20"],
                       capture_output=True, text=True, preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "waitpid failed" in out and "timed out" not in out, out


def test_fuzz_shrinks_an_exec_kernel_and_the_regression_replays(tmp_path):
    # Work-bounded (issue 23): 2 seeds of 25 cases whatever the machine's speed (seed 1 finds
    # the GQA bug); --seconds is only an upper cap no correct run reaches. The old "--seconds
    # 60" made finding the bug depend on how many cases fit in a minute.
    rc, out = ixo("fuzz", "--backend", KERNEL + " --bug gqa", "--seeds", "2", "--seconds", "100000", "--max-failures",
                  "1", "--out", str(tmp_path))
    assert rc == 1 and "shrunk to R=" in out and "replay: ixo check" in out and "Falsifiable" not in out, out
    (reg,) = os.listdir(tmp_path)
    with open(tmp_path / reg / "failure.txt") as f:
        text = f.read()
    assert "replay: ixo check" in text
    assert ixo("check", str(tmp_path / reg), "--backend", KERNEL + " --bug gqa")[0] == 1
    assert ixo("check", str(tmp_path / reg), "--backend", KERNEL)[0] == 0


def test_the_suite_over_an_exec_kernel_mixed_with_a_builtin_one(tmp_path):
    rc, out = ixo("check", "--backend", KERNEL + " --only-bf16", "--backend", "cpu-packed", "--no-properties")
    assert rc == 0, out
    assert "fixtures" in out and "SKIP" in out  # the fp8 groups are skipped by the bf16-only kernel


def test_the_suite_properties_shrink_an_exec_kernel_bug(tmp_path):
    # One process per case (about 300 of them): slow where python3 starts slowly (a torch venv:
    # > 300 s). Split from the test above so ctest can run the two in parallel; no subprocess
    # timeout any more (the old 1200 s one was reachable on a slow machine).
    # Only the property rows (the groups and fixtures over an exec kernel are the test above's).
    # Seed 2: its first case exposes the bug, so the shrink starts there (22 s on the idle 2-core machine); the
    # default seed's draw finds it later and shrinks from a larger case (37 s); seeds 3 and 5 miss it in 6 cases.
    # Which draw finds it does not change what this checks: a property failure, shrunk and written for replay.
    rc, out = ixo("check", "--backend", KERNEL + " --bug gqa", "--no-groups", "--no-fixtures", "--property",
                  "matches-oracle", "--property-cases", "6", "--seed", "2", "--out", str(tmp_path), "--failures-only")
    assert rc == 1 and "prop:matches-oracle" in out and "shrunk case written" in out, out
    assert os.listdir(tmp_path)


def test_check_plot_writes_the_failing_rows_picture(tmp_path):
    pytest.importorskip("matplotlib")
    import numpy as np
    import indexer_oracle as io
    from test_api import drop_best_block

    c = io.generate("verify", 1)
    c.save(tmp_path / "case")
    bad, _ = drop_best_block(c, io.reference(c)[0])
    np.save(tmp_path / "bad.npy", bad)
    rc, out = ixo("check", str(tmp_path / "case"), "--topk", str(tmp_path / "bad.npy"), "--plot", str(tmp_path / "pics"))
    assert rc == 1, out
    with open(tmp_path / "pics" / "failing_rows.png", "rb") as f:
        assert f.read(4) == b"\x89PNG"
    rc, out = ixo("check", "--plot", str(tmp_path / "pics"))
    assert rc == 2 and "--plot" in out, out


def test_check_accepts_a_graph_padded_batch_and_notes_the_ungrouped_rows(tmp_path):
    assert ixo("gen", "--preset", "graph-padded", "--seed", "1", "--out", str(tmp_path / "c"))[0] == 0
    rc, out = ixo("check", str(tmp_path / "c"), "--backend", "cpu-packed", "--backend", KERNEL)
    assert rc == 0, out
    assert out.startswith("note: rows ") and "did not form a packed group" in out, out

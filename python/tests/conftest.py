"""Shared set-up: the examples folder (the naive numpy kernel) on sys.path, and the
path of the `ixo` binary (ctest passes IXO and IXO_EXAMPLES)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.environ.get("IXO_EXAMPLES", os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, EXAMPLES)


# ctest runs a long test file as several shards (python/CMakeLists.txt, IXO_PYTEST_SHARD=i/n):
# shard i keeps the collected tests whose position is i modulo n, so the shards together run
# every test exactly once and ctest -j spreads them over the cores. Unset: every test runs.
def _shard():
    spec = os.environ.get("IXO_PYTEST_SHARD", "")
    if not spec:
        return None
    i, n = (int(x) for x in spec.split("/"))
    if not 0 <= i < n:
        raise ValueError(f"IXO_PYTEST_SHARD={spec}: need 0 <= i < n")
    return i, n


def pytest_collection_modifyitems(config, items):
    shard = _shard()
    if shard is None:
        return
    i, n = shard
    config._ixo_empty_shard = len(items) > 0 and len(items) <= i  # only more shards than tests empties one
    keep = [t for k, t in enumerate(items) if k % n == i]
    config.hook.pytest_deselected(items=[t for k, t in enumerate(items) if k % n != i])
    items[:] = keep


def pytest_sessionfinish(session, exitstatus):
    # A shard left with no test (more shards than the file has tests) passes instead of exit
    # 5; a file that collects nothing at all still fails.
    if exitstatus == 5 and getattr(session.config, "_ixo_empty_shard", False):
        session.exitstatus = 0

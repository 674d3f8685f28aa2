import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader.learner import child as _child  # noqa: E402  (imports no JAX)

# JAX in this process computes as the child and the verifier do (the child's XLA options, its HOST_DEVICES CPU
# devices), whichever test starts the backend first: a run of test_compile_cache.py before test_verifier.py
# started it with one device, and the ring all-reduce (``ppermute`` over four) failed to lower.
os.environ.setdefault("XLA_FLAGS", os.environ.get("GRADER_XLA_FLAGS", _child.XLA_FLAGS))

# The pages' tests make hundreds of Runs a minute from one client (every AppTest session is the same local
# client): the per-client quota is not what they test, and its own tests set it (tests/test_app_results.py,
# tests/test_ratelimit.py).
os.environ.setdefault("JAXPLAY_RUNS_PER_MINUTE", "100000")


import pytest


@pytest.fixture(autouse=True, scope="module")
def _no_shared_pool_left_behind():
    """Pages grade through the process-wide warm pool; end it after each test module, so its workers do not
    count as processes another module's test left behind."""
    yield
    from grader.sandbox.pool import shutdown_shared_pools
    shutdown_shared_pools()


def pytest_collection_finish(session):
    """Tell the registry sweep which gallery files this session's selection grades (``-m "not slow"`` or
    ``-k`` picks some), so that it grades those in one batch and no others."""
    chosen, module = set(), None
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if item.module.__name__.endswith("test_problem_sweep") and callspec and "item" in callspec.params:
            module = item.module
            chosen.add(callspec.params["item"][1])
    if module is not None:
        module.SELECTED = chosen

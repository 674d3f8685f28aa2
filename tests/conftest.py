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


# ----------------------------------------------------------------------------------------------------
# Two cores, two workers (pytest-xdist, ``-n 2`` in pytest.ini): each module's tests run in one worker, in
# order (its module fixtures, a server or a warm pool, start once), except the registry sweep, which is cut
# by problem so both workers share it; the longest groups are handed out first, so that neither worker is
# left with a long one at the end. Without xdist (``-n 0``) nothing changes.

FIRST = ("test_browser", "test_attacks", "test_problem_sweep", "test_mutants", "test_browser_class_restart",
         "test_verifier", "test_cost", "test_queue", "test_pool")
"""Modules by how long they take, longest first (the sweep's groups among them by gallery size)."""


def _group(item) -> str:
    module = item.module.__name__.rsplit(".", 1)[-1]
    callspec = getattr(item, "callspec", None)
    if module == "test_problem_sweep" and callspec is not None:
        for key in ("item", "problem", "reference_report"):
            value = callspec.params.get(key)
            problem = value[0] if isinstance(value, tuple) else value
            slug = getattr(problem, "slug", None)
            if slug:
                return f"{module}:{slug}"
    return module


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups into the node ids (its hook runs first else)
def pytest_collection_modifyitems(config, items):
    # the groups and the order are made where the items are collected: on each pytest-xdist worker (whose own
    # options say -n 0; ``workerinput`` marks it), which sends them to the scheduler with the group in the node id
    if not (getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput")):
        return
    sizes: dict[str, int] = {}
    for item in items:
        group = _group(item)
        sizes[group] = sizes.get(group, 0) + 1
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(pair):
        index, item = pair
        group = _group(item)
        module = group.split(":", 1)[0]
        first = FIRST.index(module) if module in FIRST else len(FIRST)
        return first, -sizes[group] if ":" in group else 0, group, index

    items[:] = [item for _, item in sorted(enumerate(items), key=rank)]

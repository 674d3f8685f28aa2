import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


import pytest


@pytest.fixture(autouse=True, scope="module")
def _no_shared_pool_left_behind():
    """Pages grade through the process-wide warm pool; end it after each test module, so its workers do not
    count as processes another module's test left behind."""
    yield
    from grader.sandbox.pool import shutdown_shared_pools
    shutdown_shared_pools()

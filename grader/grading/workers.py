"""Where the grader's jobs run: the sandbox (``grader/sandbox/``) with ``grader/learner/child.py`` as its payload.

``run_job`` starts a new sandboxed process per job (slow: JAX starts on the learner's clock; for batch
tools and tests); ``shared_pool()`` is the process-wide warm pool the app grades with; ``worker_pool()``
a pool of one's own (the command line's batch).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from grader.grading import checker
from grader.verifier import service as verifier
from grader.sandbox import pool, runner
from grader.sandbox.outcome import Limits, RunOutcome

CHILD = Path(__file__).resolve().parents[1] / "learner" / "child.py"
"""The grading payload."""
PROBE_JOB = {"code": "def f():\n    return 0\n", "entry": "f", "args": [], "cases": []}
"""The job the doctor runs in the grading payload: it proves JAX starts inside every layer."""


def run_job(job: dict[str, Any], limits: Limits = Limits(), *,
            on_progress: Callable[[str], None] | None = None) -> RunOutcome:
    """Run one grading job in a new sandboxed process."""
    return runner.run_job(CHILD, job, limits, on_progress=on_progress)


LONG_AFTER_S = 1.5 if verifier.ENABLED else 3.0
"""A grading's child that has had this much of its own CPU time gives up its slot and its priority (the pool's
``long_after_s``). Through the verifier the child only traces: the heaviest reference's Submit takes 0.7 s of
its own time on a quiet machine, a Run 0.2-0.5 s, so past 1.5 s it is almost always a loop headed for its time
limit, and in a class each second a loop holds a slot is a second that slot grades nobody. Without the verifier
the child also compiles and runs the programs: 3 s."""


def warm_helpers(gradings: int | None = None) -> None:
    """Start the grader's own helper processes in the background: the requirement checks' and, when gradings
    go through it, the verifier's, so the first report waits for neither to import JAX. ``gradings``: how many
    run at once here at most (a command line's batch), so no helper starts that none of them would use."""
    checker.warm_up(gradings)
    if verifier.ENABLED:
        verifier.warm_up(gradings)


def shared_pool() -> pool.WorkerPool:
    """The process-wide warm pool of grading workers (created on first use, shut down at exit); the grader's
    helper processes start with it, so the first report waits for none of them."""
    warm_helpers()
    return pool.shared_pool(CHILD, long_after_s=LONG_AFTER_S)


def worker_pool(size: int | None = None, **kwargs: Any) -> pool.WorkerPool:
    """A warm pool of grading workers of one's own (see ``WorkerPool`` for the options)."""
    return pool.WorkerPool(CHILD, size, **{"long_after_s": LONG_AFTER_S, **kwargs})

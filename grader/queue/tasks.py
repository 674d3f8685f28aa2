"""What a grading worker runs for a job: the only three functions a worker will run (``ALLOWED``).

A job carries the learner's code, the problem's slug and, for a custom run, the case inputs; the worker
loads the problem folder itself, so expected outputs and checks never travel. The answers are JSON: a
report exactly as ``Report.to_json(marks=True)`` gives it (learner marks kept, so the app draws learner text
as text), or a ``RunOutcome`` as a dict.
"""
from __future__ import annotations

import threading
import time
from dataclasses import asdict
from typing import Any, Callable

import problems
from grader.grading.grade import grade as grade_here, job_for, limits_for
from grader.queue.settings import MAX_WALL_S
from grader.sandbox import Limits, WorkerPool

ALLOWED = frozenset({"grader.queue.tasks.grade", "grader.queue.tasks.run", "grader.queue.tasks.cost"})
"""The job functions a worker runs; a job naming any other (someone who can write to Redis could name
``os.system``) fails without running anything."""

PROGRESS_EVERY_S = 0.5
"""At most this often a job's progress ("Hidden 4 (7 of 17)") is written to its RQ meta for the client."""

_pool: list[WorkerPool] = []


def serve_with(pool: WorkerPool) -> None:
    """The warm pool this process's jobs run on (``worker.py`` sets it before taking jobs)."""
    _pool[:] = [pool]


def grade(slug: str, code: str, examples_only: bool, wall_s: float | None = None) -> dict[str, Any]:
    """Grade ``code`` on the problem's examples (Run) or examples and hidden cases (Submit); the report as
    JSON. ``wall_s`` (the command line's ``--time-limit``) or, when None, ``limits_for`` this machine's load."""
    problem = problems.get(slug)
    limits = _limits(wall_s) if wall_s else limits_for(problem, examples_only)
    report = grade_here(problem, code, examples_only=bool(examples_only), limits=limits, run=_runner())
    return report.to_json(marks=True)


def run(slug: str, code: str, cases: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """Run ``code`` on the given named case inputs (custom input); the ``RunOutcome`` as a dict."""
    problem = problems.get(slug)
    job = job_for(problem, code, [(str(c["name"]), c["args"]) for c in cases])
    return asdict(_runner()(job, _limits(wall_s)))


def cost(slug: str, code: str, small: bool = False, target: str = "cpu") -> dict[str, Any]:
    """Measure ``code`` beside the problem's own programs (the Cost tab; ``small``: the test size; ``target``:
    this worker's CPU or a TPU, compiled ahead of time); the ``CostReport`` as JSON. The problem's programs and
    sizes come from the worker's own problem folder."""
    from grader.cost.measure import measure_cost
    return measure_cost(problems.get(slug), code, small=bool(small), run=_runner(), target=str(target)).to_json()


def _limits(wall_s: float) -> Limits:
    return Limits(wall_s=min(MAX_WALL_S, max(1.0, float(wall_s))))


def _runner() -> Callable[[dict[str, Any], Limits], Any]:
    """The pool's ``run``, telling the client (through the job's meta) which case the child is on."""
    from rq import get_current_job
    if not _pool:
        raise RuntimeError("this process is not a grading worker (no pool)")
    job = get_current_job()
    last = [0.0]
    lock = threading.Lock()

    def on_progress(text: str) -> None:
        now = time.monotonic()
        with lock:
            if job is None or now - last[0] < PROGRESS_EVERY_S:
                return
            last[0] = now
        job.meta["progress"] = str(text)[:200]
        job.save_meta()

    pool = _pool[0]
    return lambda job_, limits: pool.run(job_, limits, on_progress=on_progress)

"""The progress side channel: a payload sends short messages while it runs (the grading payload: which case
starts); ``pool.run``/``supervise`` hand the latest to ``on_progress`` in the caller's thread, bounded in
length and rate; the outcome keeps the last one; a time-limit verdict names the case that was running."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import problems
from grader.grading.grade import grade
from grader.records import Verdict
from grader.sandbox import Limits
from grader.sandbox.channels import PROGRESS_CHARS
from grader.sandbox.pool import WorkerPool
from grader.sandbox.runner import PROGRESS_EVERY_S, run_job
from grader.grading.workers import worker_pool

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "payloads" / "probe.py"


def test_progress_reaches_the_caller_in_its_own_thread_bounded_in_rate():
    seen: list[tuple[str, int]] = []
    with WorkerPool(PROBE, 1, warm=1) as pool:
        started = time.monotonic()
        outcome = pool.run({"do": "progress", "count": 2000, "then_sleep": 1.0}, Limits(wall_s=60),
                           on_progress=lambda text: seen.append((text, threading.get_ident())))
        elapsed = time.monotonic() - started
    assert outcome.result and outcome.progress == "case 2000 of 2000"
    assert seen and seen[-1][0] == "case 2000 of 2000"
    assert {ident for _, ident in seen} == {threading.get_ident()}
    assert len(seen) <= elapsed / PROGRESS_EVERY_S + 2  # 2,000 messages, a handful of calls


def test_progress_messages_are_cut_and_a_flood_is_stopped():
    outcome = run_job(PROBE, {"do": "progress", "count": 3, "pad": 10_000}, Limits(wall_s=60))
    assert outcome.progress.startswith("case 3 of 3 xxx") and len(outcome.progress) == PROGRESS_CHARS
    flood = run_job(PROBE, {"do": "flood_progress"}, Limits(wall_s=60))
    assert flood.limit == "progress" and flood.elapsed_s < 30


STUCK_IN_EXAMPLE_2 = """
import jax, jax.numpy as jnp
calls = []
def remat_mlp_block(params, x, y):
    calls.append(1)
    while len(calls) == 2:
        pass
    return {"loss": jnp.sum(x) * 0.0, "grads": params}
"""


@pytest.mark.slow
def test_a_time_limit_says_which_case_was_running():
    problem = problems.get("rematerialized-mlp-block")
    with worker_pool(1, warm=1) as pool:
        report = grade(problem, STUCK_IN_EXAMPLE_2, examples_only=True, limits=Limits(wall_s=4), run=pool.run)
    assert report.verdict is Verdict.TIME_LIMIT, report.message
    assert "stopped while it was on \ue000Example 2 (case 2 of 3)\ue001" in report.message

"""Limits fit the work (``grader.grading.grade.limits_for``), and a time-limit verdict says which case was running."""
from __future__ import annotations

import problems
import os

from grader.grading.grade import MAX_BUSY_FACTOR, RUN_BASE_S, grade, limits_for
from grader.records import Verdict, learner, unmarked
from grader.sandbox import RunOutcome

REMAT = problems.get("rematerialized-mlp-block")


def test_a_run_gets_a_few_seconds_and_a_submit_more():
    run, submit = limits_for(REMAT, True, load=0.0), limits_for(REMAT, False, load=0.0)
    assert run.wall_s == RUN_BASE_S + len(REMAT.examples) <= 10
    assert submit.wall_s > run.wall_s and submit.wall_s >= len(REMAT.cases()) + RUN_BASE_S


def test_a_busy_machine_stretches_the_limits_up_to_a_cap():
    cores = os.cpu_count() or 1
    quiet = limits_for(REMAT, True, load=0.0).wall_s
    assert limits_for(REMAT, True, load=cores * 0.9).wall_s == quiet
    assert limits_for(REMAT, True, load=cores * 2.0).wall_s == 2 * quiet
    assert limits_for(REMAT, True, load=cores * 50.0).wall_s == MAX_BUSY_FACTOR * quiet


def test_a_time_limit_verdict_names_the_case_the_child_last_announced():
    outcome = RunOutcome(result=None, limit="time")
    outcome.progress = "case 2 of 3: Example 2`<b>"  # the sandbox's pool records it; the child may be hostile
    report = grade(REMAT, "def f(): pass", examples_only=True, run=lambda job, limits: outcome,
                   limits=limits_for(REMAT, True, load=0.0))
    assert report.verdict is Verdict.TIME_LIMIT
    text = unmarked(report.message)
    assert f"more than {limits_for(REMAT, True, load=0.0).wall_s:g} s (the limit for 3 cases)" in text
    assert "while it was on case 2 of 3: Example 2`<b>" in text
    assert learner("case 2 of 3: Example 2`<b>") in report.message, "the child's words are marked as learner text"
    assert report.limits == {"wall_s": limits_for(REMAT, True, load=0.0).wall_s}


def test_without_progress_the_verdict_still_says_the_limit():
    report = grade(REMAT, "x", examples_only=True, run=lambda job, limits: RunOutcome(result=None, limit="time"),
                   limits=limits_for(REMAT, True))
    assert "while it was on" not in report.message and "the limit for 3 cases" in report.message

"""Where a grading runs: the warm pool of this process (``PoolRunner``) or grading workers on a queue
(``grader.queue.QueueRunner``). Both are a ``Runner`` (a job and its limits in, a ``RunOutcome`` out, for
custom input and cost) with a ``grade`` method (a problem and code in, a ``Report`` out): the pool grades
here, the queue has a worker grade where the problem's expected outputs and checks are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from grader.grade import grade, limits_for
from grader.records import Report
from grader.sandbox import Limits, RunOutcome, WorkerPool
from problems import Problem


class Grading(Protocol):
    """What the app and the command line grade with (``PoolRunner`` or ``QueueRunner``)."""

    def __call__(self, job: dict[str, Any], limits: Limits) -> RunOutcome: ...

    def grade(self, problem: Problem, code: str, *, examples_only: bool, limits: Limits | None = None,
              file: str = "<editor>") -> Report: ...


@dataclass
class PoolRunner:
    """Jobs on a local warm pool; gradings in this process."""

    pool: WorkerPool
    on_position: Callable[[int], None] | None = None
    """Hears the runs ahead while the job waits."""
    on_progress: Callable[[str], None] | None = None
    """Hears the child's word on the case it is on (learner-controlled text)."""

    def __call__(self, job: dict[str, Any], limits: Limits) -> RunOutcome:
        return self.pool.run(job, limits, on_position=self.on_position, on_progress=self.on_progress)

    def grade(self, problem: Problem, code: str, *, examples_only: bool, limits: Limits | None = None,
              file: str = "<editor>") -> Report:
        """Grade ``code``; ``limits`` default to ``limits_for`` this machine's load."""
        return grade(problem, code, examples_only=examples_only, file=file, run=self,
                     limits=limits or limits_for(problem, examples_only))

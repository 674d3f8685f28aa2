"""Where a grading runs: the warm pool of this process (``PoolRunner``) or grading workers on a queue
(``grader.queue.QueueRunner``). Both are a ``Runner`` (a job and its limits in, a ``RunOutcome`` out, for
custom input) with a ``grade`` method (a problem and code in, a ``Report`` out) and a ``cost`` method (a
problem and code in, a ``CostReport`` out): the pool grades and measures here, the queue has a worker do it
where the problem's expected outputs, checks and programs are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from grader.cost.measure import measure_cost
from grader.cost.records import CostReport
from grader.grading.grade import grade, limits_for
from grader.records import Report
from grader.sandbox import Limits, RunOutcome, WorkerPool
from problems import Problem


class Grading(Protocol):
    """What the app and the command line grade with (``PoolRunner`` or ``QueueRunner``)."""

    def __call__(self, job: dict[str, Any], limits: Limits) -> RunOutcome: ...

    def grade(self, problem: Problem, code: str, *, examples_only: bool, limits: Limits | None = None,
              file: str = "<editor>") -> Report: ...

    def cost(self, problem: Problem, code: str, *, small: bool = False, file: str = "<editor>",
             target: str = "cpu") -> CostReport: ...


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

    def cost(self, problem: Problem, code: str, *, small: bool = False, file: str = "<editor>",
             target: str = "cpu") -> CostReport:
        """Measure ``code`` beside the problem's programs (``grader.cost.measure.measure_cost``) on this pool, compiled
        for ``target`` (``grader.cost.targets``)."""
        return measure_cost(problem, code, small=small, file=file, run=self, target=target, parallel=True)

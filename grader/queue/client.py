"""The app's and command line's side of the queue: ``QueueRunner`` sends a grading to the workers and waits.

A learner sees what the local pool shows: the runs ahead (RQ's ``job.get_position()``), the case the child
is on (the worker writes it to the job's meta), then the report. Waiting is bounded at every stage: a job no
worker takes within ``WAIT_S`` expires (RQ's ``ttl``); a job taken by a worker process whose liveness key
lapses (``ALIVE_TTL_S``: the machine lost, the process killed) or that outlives its timeout, or that RQ's
registry cleanup marks abandoned, comes back as "the grading worker was lost; run again", never a spinner
forever. A worker's liveness key means its pool grades (``worker.Liveness``), so a worker whose pool stopped
answering is lost to its clients within ``SERVED_WITHIN_S + ALIVE_TTL_S``; a job that outlives its own RQ
timeout (``JobTimeoutException``) is lost too. A learner never sees an exception's class name: a job that
failed on the worker says the grader failed (the details go to stderr, for the operator).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import redis
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.results import Result
from rq.serializers import JSONSerializer

from grader.grading import checker
from grader.cost.measure import COST_LIMITS, TPU_COST_LIMITS
from grader.cost.records import CostReport
from grader.grading.grade import MAX_BUSY_FACTOR, PER_CASE_S, RUN_BASE_S, SUBMIT_BASE_S
from grader.queue import settings
from grader.records import ErrorKind, Report, RequirementResult, CaseResult, Verdict, learner
from grader.sandbox import Limits, PoolBusy, RunOutcome
from grader.sandbox.outcome import LOST_STATUS
from problems import Problem

LOST_MESSAGE = ("The grading worker was lost while it had your code (the machine grading it stopped answering or "
                "failed). This is not your fault, and nothing was accepted or recorded: please run again.")
FAILED_MESSAGE = ("The grader itself failed on this run; this is not your fault, and the code was not accepted: "
                  "please run again.")
UNTAKEN_MESSAGE = ("No grader took your code within {wait} s (every grading machine is busy or stopped). This is "
                   "not your fault: please run again in a moment.")


LOST_ERRORS = ("AbandonedJobError", "JobTimeoutException")
"""A job that ends with one of these was lost by its worker (it died, or the job outlived its timeout)."""


class GraderLost(RuntimeError):
    """The job's worker died, or no worker took the job in time: the learner should run again."""


class GraderFailed(RuntimeError):
    """The worker's job function raised (our bug or our infrastructure, never the learner's)."""


_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def client(url: str) -> redis.Redis:
    """One Redis client (and connection pool) per URL for the whole process."""
    with _clients_lock:
        if url not in _clients:
            _clients[url] = settings.connect(url)
        return _clients[url]


def grading_queue(url: str) -> Queue:
    return Queue(settings.QUEUE_NAME, connection=client(url), serializer=JSONSerializer)


def workers(url: str) -> list[dict[str, Any]]:
    """The worker processes serving now, each ``{"name", "layers", "note", "pool_size", "answered_s_ago"}`` as
    its liveness key
    says (written by ``grader.queue.worker``; a key that does not parse shows no layers)."""
    connection = client(url)
    prefix = settings.alive_key("")
    found = []
    for key in sorted(connection.scan_iter(match=prefix + "*", count=200))[:200]:
        name = key.decode("utf-8", "replace")[len(prefix):]
        try:
            data = json.loads(connection.get(key) or b"{}")
        except ValueError:
            data = {}
        data = data if isinstance(data, dict) else {}
        layers = data.get("layers") if isinstance(data.get("layers"), dict) else {}
        found.append({"name": name, "note": str(data.get("note", "")), "pool_size": data.get("pool_size"),
                      "answered_s_ago": data.get("answered_s_ago"),
                      "layers": {str(k): {"ok": bool(v.get("ok")), "detail": str(v.get("detail", ""))}
                                 for k, v in layers.items() if isinstance(v, dict)}})
    return found


@dataclass
class QueueRunner:
    """Gradings (and custom runs) on the queue at ``url``; see ``grader.grading.runners.Grading``."""

    url: str
    on_position: Callable[[int], None] | None = None
    on_progress: Callable[[str], None] | None = None

    def grade(self, problem: Problem, code: str, *, examples_only: bool, limits: Limits | None = None,
              file: str = "<editor>") -> Report:
        """Grade ``code`` on a worker. ``limits`` (the command line's ``--time-limit``) or, when None, the
        worker's ``limits_for`` its own load. Raises ``PoolBusy`` when the queue is full."""
        started = time.monotonic()
        wall_s = limits.wall_s if limits else None
        base = RUN_BASE_S if examples_only else SUBMIT_BASE_S
        longest = wall_s or (base + PER_CASE_S * len(problem.cases(examples_only))) * MAX_BUSY_FACTOR
        try:
            data = self._submit("grader.queue.tasks.grade", {"slug": problem.slug, "code": code,
                                                              "examples_only": examples_only, "wall_s": wall_s},
                                longest)
            report = Report.from_json(data)
        except GraderLost as exc:
            report = _stopped(problem, examples_only, file, str(exc), "the grading worker was lost")
        except (GraderFailed, redis.RedisError) as exc:  # the details are the operator's, not the learner's
            print(f"grader queue: a grading failed: {type(exc).__name__}: {str(exc)[:500]}", file=sys.stderr)
            report = _stopped(problem, examples_only, file, FAILED_MESSAGE, "the grader failed")
        report.file = file
        report.elapsed_s = round(time.monotonic() - started, 3)
        return report

    def cost(self, problem: Problem, code: str, *, small: bool = False, file: str = "<editor>",
             target: str = "cpu") -> CostReport:
        """Measure ``code`` beside the problem's programs on a worker (the Cost tab; ``target``: what to compile
        for, which needs the TPU extra on the worker for a TPU). Raises ``PoolBusy`` when the queue is full."""
        started = time.monotonic()
        try:
            # the worker measures the problem's own programs, then the learner's, each under COST_LIMITS
            data = self._submit("grader.queue.tasks.cost", {"slug": problem.slug, "code": code, "small": small,
                                                             "target": target},
                                2 * (COST_LIMITS if target == "cpu" else TPU_COST_LIMITS).wall_s)
            report = CostReport.from_json(data)
        except GraderLost as exc:
            report = CostReport(problem=problem.slug, file=file, size={}, ok=False, error_kind="grader",
                                error=str(exc), target=target)
        except (GraderFailed, redis.RedisError) as exc:
            print(f"grader queue: a measurement failed: {type(exc).__name__}: {str(exc)[:500]}", file=sys.stderr)
            report = CostReport(problem=problem.slug, file=file, size={}, ok=False, error_kind="grader", target=target,
                                error="The measurement failed on the grading machine; this is not your fault: "
                                      "please run again.")
        report.file = file
        report.elapsed_s = round(time.monotonic() - started, 3)
        return report

    def __call__(self, job: dict[str, Any], limits: Limits) -> RunOutcome:
        """Run a child job (custom input: code and named case inputs) on a worker."""
        if job.get("kind") == "cost" or "problem" not in job:
            raise ValueError("the queue carries gradings, custom runs and whole cost measurements (``cost``)")
        cases = [{"name": c["name"], "args": c["args"]} for c in job["cases"]]
        try:
            data = self._submit("grader.queue.tasks.run", {"slug": job["problem"], "code": job["code"],
                                                            "cases": cases, "wall_s": limits.wall_s}, limits.wall_s)
        except (GraderLost, GraderFailed) as exc:
            return RunOutcome(result={"status": LOST_STATUS,
                                      "message": str(exc) if isinstance(exc, GraderLost) else FAILED_MESSAGE})
        return RunOutcome(**data)

    # -- one job --------------------------------------------------------------------------------------------

    def _submit(self, func: str, kwargs: dict[str, Any], wall_s: float) -> Any:
        """Enqueue ``func(**kwargs)`` and wait for its answer (see the module's docstring)."""
        queue = grading_queue(self.url)
        if queue.count >= settings.MAX_QUEUED:
            raise PoolBusy(f"{queue.count} gradings are already waiting")
        timeout = int(wall_s + checker.BUDGET_S + settings.TIMEOUT_MARGIN_S)
        job = queue.enqueue_call(func, kwargs=kwargs, timeout=timeout, ttl=settings.WAIT_S,
                                 result_ttl=settings.RESULT_TTL_S, failure_ttl=settings.FAILURE_TTL_S)
        try:
            return self._wait(job, timeout)
        finally:
            if self.on_position is not None:
                self.on_position(0)

    def _wait(self, job: Job, timeout: int) -> Any:
        enqueued, started, told, said = time.monotonic(), None, None, ""
        while True:
            result = Result.fetch_latest(job, serializer=JSONSerializer, timeout=1)  # blocks up to 1 s
            if result is not None:
                if result.type == Result.Type.SUCCESSFUL:
                    return result.return_value
                text = result.exc_string or ""
                if result.type == Result.Type.STOPPED or any(name in text for name in LOST_ERRORS):
                    raise GraderLost(LOST_MESSAGE)
                raise GraderFailed(text.strip().splitlines()[-1] if text.strip() else "the job failed")
            now = time.monotonic()
            try:
                job.refresh()
            except NoSuchJobError:  # expired unseen (ttl) or deleted
                raise GraderLost(UNTAKEN_MESSAGE.format(wait=settings.WAIT_S) if started is None else LOST_MESSAGE)
            status = job.get_status(refresh=False)
            if status in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED, JobStatus.CREATED):
                ahead = job.get_position()
                if ahead is not None and ahead != told and self.on_position is not None:
                    told = ahead
                    self.on_position(ahead)
                if now - enqueued > settings.WAIT_S + 5:
                    raise GraderLost(UNTAKEN_MESSAGE.format(wait=settings.WAIT_S))
            elif status == JobStatus.STARTED:
                if started is None:
                    started = now
                    if self.on_position is not None:
                        self.on_position(0)
                progress = str(job.meta.get("progress", ""))
                if progress and progress != said and self.on_progress is not None:
                    said = progress
                    self.on_progress(progress)
                process = (job.worker_name or "").rsplit("/", 1)[0]
                if process and not job.connection.exists(settings.alive_key(process)):
                    raise GraderLost(LOST_MESSAGE)
                if now - started > timeout + 15:
                    raise GraderLost(LOST_MESSAGE)
            elif status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
                if started is None:
                    started = now
                if now - started > 10:  # ended, yet no result written: treat as lost
                    raise GraderLost(LOST_MESSAGE)


def _stopped(problem: Problem, examples_only: bool, file: str, message: str, reason: str) -> Report:
    """The report when the grading never finished on a worker: the grader's failure, nothing judged."""
    cases = problem.cases(examples_only)
    return Report(file=file, problem=problem.slug, verdict=Verdict.INTERNAL_ERROR, error_kind=ErrorKind.GRADER,
                  message=message,
                  cases=[CaseResult(name=c.name, hidden=c.hidden, passed=False, message="not run",
                                    inputs=None if c.hidden else c.inputs) for c in cases],
                  requirements=[RequirementResult(r.id, r.text, False, f"Not checked: {reason}.", advice=r.advice)
                                for r in problem.requirements])

"""Gradings run in the background, one at a time per browser session, so the page stays live meanwhile.

A grading takes seconds; done inside the script run it would be cut off by the next rerun (the editor
reruns the page as the learner types). Here it runs on a shared thread pool, and the page only looks at
the ``Task``: a status with elapsed time while it runs, the result when it is done. A second click while a
task is under way starts nothing.
"""
from __future__ import annotations

import functools
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from grader.grade import Runner, grade
from grader.records import Report
from grader.workers import shared_pool
from grader.ratelimit import RunGate, RunRefused
from grader.sandbox import Limits
from problems import Problem

# Threads that wait on the warm pool for the whole server. The pool decides how many gradings run at once
# (JAXPLAY_POOL_SIZE) and keeps the others in its FIFO queue, which tells each its place in line.
MAX_WAITING = 64
REFUSED_KEY = "jaxplay_refused"


def get_runner(on_position: Callable[[int], None] | None = None) -> Runner:
    """The one place the app obtains the function that runs a job: a warm worker from the shared pool."""
    return functools.partial(shared_pool().run, on_position=on_position)


@st.cache_resource
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=MAX_WAITING, thread_name_prefix="grading")


@dataclass
class Task:
    """One background grading started from a page."""

    slug: str
    kind: str
    """``run`` (visible examples), ``submit`` (examples and hidden cases) or ``custom`` (custom input)."""
    code: str
    started: float
    future: Future = field(repr=False)
    finished: float | None = None
    ahead: int | None = None
    """Runs ahead of this one in the pool's queue while it waits (None once a worker has it)."""

    @property
    def done(self) -> bool:
        return self.future.done()

    def elapsed(self) -> float:
        end = self.finished if self.finished is not None else time.monotonic()
        return end - self.started

    def result(self) -> Any:
        return self.future.result()


def _state() -> dict[str, Any]:
    return st.session_state.setdefault("jaxplay_tasks", {"current": None, "last": {}})


def current() -> Task | None:
    """The task under way in this session, if any (finished tasks move to ``last``)."""
    state = _state()
    task = state["current"]
    if task is not None and task.done:
        task.finished = task.finished or time.monotonic()
        state["last"][(task.slug, task.kind if task.kind == "custom" else "grade")] = task
        state["current"] = None
    return state["current"]


def last(slug: str, kind: str = "grade") -> Task | None:
    """The latest finished task of ``kind`` (``grade`` for Run/Submit, ``custom``) on a problem."""
    current()
    return _state()["last"].get((slug, kind))


@st.cache_resource
def _gate() -> RunGate:
    """One per server: each browser session gets one run at a time and a fair share of runs per minute."""
    return RunGate(max_runs=int(os.environ.get("JAXPLAY_RUNS_PER_MINUTE", "20")), window_s=60.0)


def _session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def refusal() -> str | None:
    """Why this session's last click started nothing (rate limit), once; None otherwise."""
    return st.session_state.pop(REFUSED_KEY, None)


def start(slug: str, kind: str, code: str, work: Callable[["Task"], Any]) -> Task | None:
    """Start ``work(task)`` unless a task is already under way or the session is over its rate limit;
    returns the new task, or None if refused (``refusal()`` then says why)."""
    if current() is not None:
        return None
    session, gate = _session_id(), _gate()
    try:
        gate.start(session)
    except RunRefused as exc:
        st.session_state[REFUSED_KEY] = exc.message
        return None
    started = time.monotonic()
    future: Future = Future()
    task = Task(slug=slug, kind=kind, code=code, started=started, future=future)

    def body() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(work(task))
        except BaseException as exc:  # noqa: BLE001 - shown on the page as the grader's failure
            future.set_exception(exc)
        finally:
            gate.finish(session)
    _executor().submit(body)
    future.add_done_callback(lambda _f: setattr(task, "finished", time.monotonic()))
    _state()["current"] = task
    return task


def start_grading(problem: Problem, code: str, *, submit: bool) -> Task | None:
    """Grade ``code`` on the examples (Run) or on examples and hidden cases (Submit), in the background."""
    def work(task: Task) -> Report:
        runner = get_runner(on_position=lambda ahead: setattr(task, "ahead", ahead))
        try:
            return grade(problem, code, examples_only=not submit, run=runner, limits=Limits())
        finally:
            task.ahead = None
    return start(problem.slug, "submit" if submit else "run", code, work)


def last_report(slug: str) -> tuple[Task | None, Report | None]:
    """The latest Run/Submit on a problem and its report (None if the grading itself raised)."""
    task = last(slug)
    if task is None:
        return None, None
    try:
        return task, task.result()
    except Exception:  # noqa: BLE001 - the page reports it as the grader's failure, not the learner's
        return task, None

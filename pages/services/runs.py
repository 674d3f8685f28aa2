"""Gradings run in the background, one at a time per browser session, so the page stays live meanwhile.

A grading takes seconds; done inside the script run it would be cut off by the next rerun (the editor
reruns the page as the learner types). Here it runs on a shared thread pool, and the page only looks at
the ``Task``: a status with elapsed time while it runs, the result when it is done. A second click while a
task is under way starts nothing.
"""
from __future__ import annotations

import gc
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from grader.queue import queue_url
from grader.records import Report
from grader.grading.runners import Grading, PoolRunner
from grader.grading.workers import shared_pool
from pages.services import attempts, class_store
from pages.services.ratelimit import RunGate, RunRefused, request_client
from problems import Problem

# Threads that wait on the warm pool (or the queue) for the whole server. The pool decides how many gradings
# run at once (JAXPLAY_POOL_SIZE) and keeps the others in its FIFO queue, which tells each its place in line;
# with JAXPLAY_QUEUE the workers decide, and RQ tells the place in line.
MAX_WAITING = 64
REFUSED_KEY = "jaxplay_refused"


def get_runner(on_position: Callable[[int], None] | None = None,
               on_progress: Callable[[str], None] | None = None) -> Grading:
    """The one place the app chooses where its jobs run: the grading workers of ``JAXPLAY_QUEUE`` when it is
    set (README, "More than one machine"), else a warm worker from this server's shared pool. Either is
    called with a job (custom input), asked to ``grade`` a submission or to measure its ``cost``.

    ``on_position(n)`` hears the runs ahead while it waits; ``on_progress(text)`` the child's word on which
    case it is on ("Hidden 4 (case 7 of 17)"), both in the grading's thread."""
    url = queue_url()
    if url:
        from grader.queue.client import QueueRunner
        return QueueRunner(url, on_position, on_progress)
    return PoolRunner(shared_pool(), on_position, on_progress)


@st.cache_resource(show_spinner=False)
def warm_graders() -> bool:
    """Start this server's grading workers with its first page view, in the background: importing JAX and
    warming a worker takes seconds, which the first Run or Submit after a start used to wait for (a Submit
    took 12.8 s, later ones 3.5 s). Nothing to do with a queue: its workers are warm on their own machines."""
    if queue_url():
        return False
    background(shared_pool)
    return True


@st.cache_resource(show_spinner=False)
def freeze_loaded_objects() -> bool:
    """Once per server, after its first page has loaded everything (Streamlit, pandas, Altair, the problems,
    the grader's records: about 160,000 objects), move those objects out of the garbage collector's sight.
    Streamlit collects every generation after each script run (``runner.postScriptGC``, kept on: it keeps a
    server's memory from building up), and walking them each time took 0.1-0.2 s of CPU between a click's
    verdict and the page drawn with it. They live as long as the server, so a collection has nothing to find
    in them; everything made later is collected as before."""
    gc.freeze()
    return True


def graders_starting() -> bool:
    """Whether this server's grading workers are still starting for the first time (no worker ready yet and
    none has graded anything): the status then says why the first grading waits."""
    if queue_url():
        return False
    stats = shared_pool().stats()
    return stats.ready == 0 and stats.starting > 0 and stats.spawned <= stats.size + stats.warm


# show_spinner=False on every cache the click's path calls (here and in ``start``): on a miss, Streamlit's
# cache spinner enqueues a message when the function returns, and a script run with a rerun pending (the
# bridge's click state and the button's own trigger arrive as two) stops right there. ``_gate`` misses once
# per server, on its first Run: the click was consumed and no grading started (the lost first Run/Submit).
@st.cache_resource(show_spinner=False)
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=MAX_WAITING, thread_name_prefix="grading")


def background(fn: Callable[..., Any], *args: Any) -> Future:
    """Run ``fn(*args)`` on the server's grading threads (for work no session waits on)."""
    return _executor().submit(fn, *args)


@dataclass
class Task:
    """One background grading started from a page."""

    slug: str
    kind: str
    """``run`` (visible examples), ``submit`` (examples and hidden cases), ``custom`` (custom input) or
    ``cost`` (a cost measurement)."""
    code: str
    started: float
    future: Future = field(repr=False)
    finished: float | None = None
    ahead: int | None = None
    """Runs ahead of this one in the pool's queue while it waits (None once a worker has it)."""
    progress: str = ""
    """The child's last word on where it is ("case 7 of 17: Hidden 4"); learner-controlled, shown as text."""
    total: int = 0
    """How many cases the grading has (0 when not known)."""
    restored: bool = False
    """Brought back from the browser after a reload, not run in this session."""
    class_note: Any = None
    """What became of the result on the class board (``class_store.RecordNote``), None outside a class."""
    uid: str = ""
    """A Run's or Submit's attempt id (``attempts.new_id``): the class records it under it, and the browser keeps
    it until the verdict arrives, so a page that reconnects can ask what became of it."""

    @property
    def done(self) -> bool:
        return self.future.done()

    def elapsed(self) -> float:
        end = self.finished if self.finished is not None else time.monotonic()
        return end - self.started

    def result(self) -> Any:
        return self.future.result()


BACKGROUND = ("cost",)
"""Kinds of task that run beside a grading instead of in its place (issue 32): a cost measurement can take a
minute, and Run, Submit and Reset stay usable meanwhile. Each has a slot of its own, one at a time."""

LAST_KINDS = ("grade", "custom", *BACKGROUND)
"""How finished tasks are kept (``last``): Run and Submit under ``grade``, each other kind under its own."""


def _state() -> dict[str, Any]:
    state = st.session_state.setdefault("jaxplay_tasks", {"current": None, "last": {}})
    state.setdefault("background", {})
    return state


def _settle(state: dict[str, Any], task: Task | None) -> bool:
    """Move a finished task to ``last``; whether it was finished."""
    if task is None or not task.done:
        return False
    task.finished = task.finished or time.monotonic()
    state["last"][(task.slug, task.kind if task.kind in LAST_KINDS else "grade")] = task
    return True


def current() -> Task | None:
    """The grading (Run, Submit, custom input) under way in this session, if any (finished tasks move to
    ``last``). A cost measurement is not one: ``current_background("cost")``."""
    state = _state()
    if _settle(state, state["current"]):
        state["current"] = None
    for kind, task in list(state["background"].items()):
        if _settle(state, task):
            state["background"].pop(kind, None)
    return state["current"]


def current_background(kind: str) -> Task | None:
    """The task of a background kind (``BACKGROUND``) under way in this session, if any."""
    current()
    return _state()["background"].get(kind)


def forget(slug: str, kind: str = "grade") -> None:
    """Drop the latest finished task of ``kind`` on a problem (its result must no longer show)."""
    current()
    _state()["last"].pop((slug, kind), None)


def restore(slug: str, kind: str, code: str, report: Report) -> Task:
    """A finished Run/Submit brought back from the browser after a reload (``progress.verdict``)."""
    future: Future = Future()
    future.set_result(report)
    now = time.monotonic()
    task = Task(slug=slug, kind=kind, code=code, started=now - report.elapsed_s, future=future, finished=now,
                restored=True)
    _state()["last"][(slug, "grade")] = task
    return task


def adopt(task: Task) -> None:
    """A Run or Submit this browser started in an earlier session of this server (its page reconnected): this
    session's now, running or done, so its status and verdict show here."""
    state = _state()
    if task.done:
        state["last"][(task.slug, "grade")] = task
    elif state["current"] is None:
        state["current"] = task


def last(slug: str, kind: str = "grade") -> Task | None:
    """The latest finished task of ``kind`` (``grade`` for Run/Submit, ``custom``, ``cost``) on a problem."""
    current()
    return _state()["last"].get((slug, kind))


@st.cache_resource(show_spinner=False)
def _gate() -> RunGate:
    """One per server: one run at a time per browser session, a fair share of runs per minute per client
    address, and a cap for everyone (README, "Deploying")."""
    total = int(os.environ.get("JAXPLAY_RUNS_PER_MINUTE_TOTAL", "300"))
    return RunGate(max_runs=int(os.environ.get("JAXPLAY_RUNS_PER_MINUTE", "20")), window_s=60.0,
                   max_total=total if total > 0 else None)


def _session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def _client() -> str:
    """This visitor's address: the connection's, or the one a proxy the operator trusts forwards
    (``ratelimit.request_client``: ``JAXPLAY_TRUSTED_PROXIES``, none by default)."""
    try:
        peer, headers = st.context.ip_address, st.context.headers
    except Exception:  # noqa: BLE001 - no client context: one local client
        peer, headers = None, {}
    return request_client(peer, headers, os.environ)


def refusal() -> str | None:
    """Why this session's last click started nothing (rate limit), once; None otherwise."""
    return st.session_state.pop(REFUSED_KEY, None)


def start(slug: str, kind: str, code: str, work: Callable[["Task"], Any]) -> Task | None:
    """Start ``work(task)`` unless a task is already under way or the session is over its rate limit;
    returns the new task, or None if refused (``refusal()`` then says why)."""
    background = kind in BACKGROUND
    if (current_background(kind) if background else current()) is not None:
        return None
    session, gate = _session_id(), _gate()
    if background:  # beside a grading: one of its kind at a time, the per-minute quota shared
        session = f"{session}:{kind}"
    try:
        gate.start(session, _client())
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
    if background:
        _state()["background"][kind] = task
    else:
        _state()["current"] = task
    return task


def start_grading(problem: Problem, code: str, *, submit: bool) -> Task | None:
    """Grade ``code`` on the examples (Run) or on examples and hidden cases (Submit), in the background; in a
    class, the server records the grader's report for the class board (``class_store.record``)."""
    kind, who, uid = "submit" if submit else "run", class_store.member(), attempts.new_id()

    def work(task: Task) -> Report:
        task.total = len(problem.cases(not submit))
        runner = get_runner(on_position=lambda ahead: setattr(task, "ahead", ahead),
                            on_progress=lambda text: setattr(task, "progress", str(text)[:200]))
        try:
            report = _encodable(runner.grade(problem, code, examples_only=not submit))
        finally:
            task.ahead = None
        task.class_note = class_store.record(who, problem.slug, kind, code, report, uid=uid)
        return report
    task = start(problem.slug, kind, code, work)
    if task is not None:
        task.uid = uid
        attempts.register(uid, task)
    return task


def _encodable(report: Report) -> Report:
    """The report with every text a page can send: a lone surrogate (a learner's exception message can carry
    one) becomes U+FFFD, since Streamlit cannot encode it and the page that draws the verdict would fail."""
    data = report.to_json(marks=True)
    fixed = _fix_text(data)
    return report if fixed == data else Report.from_json(fixed)


def _fix_text(value: Any) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [_fix_text(v) for v in value]
    if isinstance(value, dict):
        return {_fix_text(k): _fix_text(v) for k, v in value.items()}
    return value


def last_report(slug: str) -> tuple[Task | None, Report | None]:
    """The latest Run/Submit on a problem and its report (None if the grading itself raised)."""
    task = last(slug)
    if task is None:
        return None, None
    try:
        return task, task.result()
    except Exception:  # noqa: BLE001 - the page reports it as the grader's failure, not the learner's
        return task, None

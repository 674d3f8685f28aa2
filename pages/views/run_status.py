"""The live status of a grading: the click's own short wait (a warm Run's verdict is drawn in that same script
run), then a status refreshed while it runs: the place in the queue, the elapsed time, and the case the child
last announced."""
from __future__ import annotations

import streamlit as st

import problems
from grader.records import learner
from pages.services import runs
from pages.views.markup import md
from problems import Problem

FAST_PATH_S = 1.5
"""How long the click's own script run waits for its grading. A warm Run takes about 0.4 s: drawing its
verdict straight away saves a rerun with the status and a status poll (about 0.3 s on screen); longer
gradings (a queue, a Submit, a loop) get the live status after this."""

LABELS = {"run": "Running the examples", "submit": "Submitting: examples and hidden cases",
          "custom": "Running your code and the reference on the custom input",
          "cost": "Compiling your code, the reference and the naive version at a realistic size"}


def wait_briefly(task: runs.Task) -> bool:
    """Wait up to ``FAST_PATH_S`` for the grading, with a status on screen meanwhile; True if it is done."""
    slot = st.empty()
    slot.info(f"{LABELS[task.kind]}…", icon=":material/progress_activity:")
    try:
        task.future.exception(timeout=FAST_PATH_S)
    except TimeoutError:
        pass
    slot.empty()
    return task.done


def _starting() -> bool:
    try:
        return runs.graders_starting()
    except Exception:  # noqa: BLE001 - the status line must never break the page
        return False


def status_line(task: runs.Task, label: str) -> str:
    """What the live status says: the place in the queue, or the label, the elapsed time and the case the
    child last announced (learner-controlled, so shown as a code span: as sent)."""
    if not task.done and task.kind != "cost" and _starting():
        return (f"{label}… {task.elapsed():.1f} s · the graders are starting: each loads JAX once after the "
                f"server starts, so this first {'Submit' if task.kind == 'submit' else 'Run'} waits a few seconds "
                "longer")
    if task.ahead is not None:
        line = ("you are next" if task.ahead == 0 else
                f"{task.ahead} run{'s' if task.ahead != 1 else ''} ahead of yours")
        return f"Waiting for a free grader: {line}… {task.elapsed():.1f} s"
    if not task.future.running() and not task.future.done():
        return f"Waiting for a free grader… {task.elapsed():.1f} s"
    where = f" · {md(learner(task.progress))}" if task.progress else ""  # a code span: shown as sent
    return f"{label}… {task.elapsed():.1f} s{where}"


def show(task: runs.Task, problem: Problem) -> None:
    """The live status of the session's grading, refreshed four times a second until it is done."""
    label = LABELS[task.kind]
    if task.slug != problem.slug:
        label = f"Still grading “{problems.get(task.slug).title}” ({label.lower()}); one grading at a time"

    @st.fragment(run_every=0.25)
    def status() -> None:
        current = runs.current()
        if current is None:
            st.rerun()
        icon = ":material/hourglass_top:" if current.ahead is not None else ":material/progress_activity:"
        with st.container(key="run-status"):
            st.info(status_line(current, label), icon=icon)
    status()

"""Issue 21, item 11: the first Submit after a server start waited for the grading workers to import JAX. The
server starts them with its first page view, and while they are still starting the status says why it waits."""
from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from grader.sandbox import pool as pool_module
from grader.sandbox.pool import shutdown_shared_pools
from pages.views import run_status
from pages.services import runs

APP = str(Path(__file__).resolve().parents[1] / "app.py" / "streamlit_app.py")


def test_the_first_page_view_starts_the_grading_workers(monkeypatch):
    monkeypatch.delenv("JAXPLAY_QUEUE", raising=False)
    shutdown_shared_pools()
    runs.warm_graders.clear()
    AppTest.from_file(APP, default_timeout=60).run()  # the home page: nobody has pressed Run
    deadline = time.monotonic() + 30  # the page starts them in a background thread: on a busy machine, a moment
    started = []
    while time.monotonic() < deadline and not started:
        started = [p for p in pool_module._shared.values() if not p._closed]  # (looked up: never created here)
        time.sleep(0.1)
    assert len(started) == 1, "the page view started no grading workers"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        stats = started[0].stats()
        if stats.ready >= 1:
            break
        time.sleep(0.2)
    assert stats.ready >= 1, stats
    assert stats.spawned <= stats.size + stats.warm, "warm workers only, no run has been graded"
    assert not runs.graders_starting()
    shutdown_shared_pools()


class _Task:
    kind, done, ahead, progress = "submit", False, None, ""

    def elapsed(self) -> float:
        return 2.0


def test_while_the_workers_start_the_status_says_why_the_first_grading_waits(monkeypatch):
    monkeypatch.setattr(runs, "graders_starting", lambda: True)
    line = run_status.status_line(_Task(), "Submitting")
    # the label first: what the learner asked for, then why it waits (tests wait while a status says "Submitting")
    assert line.startswith("Submitting… 2.0 s · the graders are starting") and "first Submit" in line
    monkeypatch.setattr(runs, "graders_starting", lambda: False)
    task = _Task()
    task.ahead = 1
    assert run_status.status_line(task, "Submitting").startswith("Waiting for a free grader: 1 run ahead")

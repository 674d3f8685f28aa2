"""Every Run and Submit has an id from its start (``new_id``): the class records its result under it, and the
learner's browser keeps it while it waits for the verdict (``progress.item("inflight")``). A page that
reconnects to a new session (a network blip, a server restart) asks by that id what became of a grading it
never saw finish: this server's gradings are found here (``find``: still running, or done), and a result
graded by a server that has stopped since is found where the class recorded it
(``class_store.recorded``); otherwise the page says the Run was interrupted.
"""
from __future__ import annotations

import threading
import time
import uuid
from typing import Any

KEEP_S = 3600.0
"""How long a finished grading can still be found by a reconnected page."""
MAX_KEPT = 5000

_tasks: dict[str, tuple[float, Any]] = {}
_lock = threading.Lock()


def new_id() -> str:
    return uuid.uuid4().hex


def register(uid: str, task: Any) -> None:
    """Remember this server's grading ``task`` by its id."""
    now = time.monotonic()
    with _lock:
        _tasks[uid] = (now, task)
        if len(_tasks) > MAX_KEPT:
            for key in [k for k, (at, _) in _tasks.items() if now - at > KEEP_S] or list(_tasks)[:MAX_KEPT // 2]:
                _tasks.pop(key, None)


def find(uid: str) -> Any | None:
    """This server's grading with id ``uid`` (running or done), if it had one."""
    with _lock:
        found = _tasks.get(uid)
    return found[1] if found is not None else None

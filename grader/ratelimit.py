"""Per browser session: one run at a time, and a limit on runs per minute, refused kindly.

The app keeps one ``RunGate`` for the whole server (e.g. in ``st.cache_resource``) and wraps each Run or
Submit in ``with gate.run(session_id):``; a refusal raises ``RunRefused``, whose ``message`` is meant to be
shown to the learner as it is.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator


class RunRefused(Exception):
    """A run was not started; ``message`` says why and when to try again."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s
        """Seconds until a new run would be accepted (0 when it depends on the running one finishing)."""


class RunGate:
    """At most one run per session at a time, and at most ``max_runs`` starts per ``window_s`` seconds."""

    def __init__(self, max_runs: int = 10, window_s: float = 60.0, max_sessions: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_runs, self.window_s, self.max_sessions, self.clock = max_runs, window_s, max_sessions, clock
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._starts: dict[str, deque[float]] = {}

    def start(self, session: str) -> None:
        """Record a run's start, or raise ``RunRefused``. Pair with ``finish``; ``run`` does both."""
        with self._lock:
            now = self.clock()
            if session in self._running:
                raise RunRefused("Your previous run is still going. Results appear here when it finishes; "
                                 "then you can run again.", 0.0)
            starts = self._starts.setdefault(session, deque())
            while starts and now - starts[0] >= self.window_s:
                starts.popleft()
            if len(starts) >= self.max_runs:
                wait = max(1.0, self.window_s - (now - starts[0]))
                raise RunRefused(f"That is {len(starts)} runs in the last {self.window_s:g} seconds, the most we "
                                 f"allow so everyone in the class gets a turn. Please try again in {wait:.0f} s.", wait)
            starts.append(now)
            self._running.add(session)
            self._forget_idle(now)

    def finish(self, session: str) -> None:
        with self._lock:
            self._running.discard(session)

    @contextmanager
    def run(self, session: str) -> Iterator[None]:
        """``with gate.run(session):`` around one grading; raises ``RunRefused`` before it starts."""
        self.start(session)
        try:
            yield
        finally:
            self.finish(session)

    def _forget_idle(self, now: float) -> None:
        if len(self._starts) <= self.max_sessions:
            return
        for key in [k for k, v in self._starts.items()
                    if k not in self._running and (not v or now - v[-1] >= self.window_s)]:
            del self._starts[key]

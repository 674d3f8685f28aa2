"""Fair use of the graders: one run at a time per browser session, a limit on runs per minute per client
(its network address, so a reload, which is a new session, gets no fresh quota), and a cap for everyone.

The app keeps one ``RunGate`` for the whole server (``pages/services/runs.py``, in ``st.cache_resource``) and wraps
each Run or Submit in ``with gate.run(session_id, client):`` (``client_address`` says who the client is);
a refusal raises ``RunRefused``, whose ``message`` is meant to be shown to the learner as it is.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping


class RunRefused(Exception):
    """A run was not started; ``message`` says why and when to try again."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s
        """Seconds until a new run would be accepted (0 when it depends on the running one finishing)."""


class RunGate:
    """At most one run per session at a time, at most ``max_runs`` starts per client per ``window_s`` seconds,
    and at most ``max_total`` starts per window for all clients together (None: no such cap)."""

    def __init__(self, max_runs: int = 10, window_s: float = 60.0, max_total: int | None = None,
                 max_sessions: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_runs, self.window_s, self.max_total, self.max_sessions = max_runs, window_s, max_total, max_sessions
        self.clock = clock
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._starts: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    def start(self, session: str, client: str | None = None) -> None:
        """Record a run's start, or raise ``RunRefused``. Pair with ``finish``; ``run`` does both. ``client``
        (a network address) carries the per-minute quota; without one, the session does."""
        with self._lock:
            now = self.clock()
            if session in self._running:
                raise RunRefused("Your previous run is still going. Results appear here when it finishes; "
                                 "then you can run again.", 0.0)
            starts = self._starts.setdefault(client or session, deque())
            for queue in (starts, self._all):
                while queue and now - queue[0] >= self.window_s:
                    queue.popleft()
            if len(starts) >= self.max_runs:
                wait = max(1.0, self.window_s - (now - starts[0]))
                raise RunRefused(f"That is {len(starts)} runs in the last {self.window_s:g} seconds, the most we "
                                 f"allow so everyone in the class gets a turn. Please try again in {wait:.0f} s.", wait)
            if self.max_total is not None and len(self._all) >= self.max_total:
                wait = max(1.0, self.window_s - (now - self._all[0]))
                raise RunRefused(f"The playground is taking all the runs it can right now ({self.max_total} every "
                                 f"{self.window_s:g} seconds for everyone). Your code is safe in the editor; please "
                                 f"try again in {wait:.0f} s.", wait)
            starts.append(now)
            self._all.append(now)
            self._running.add(session)
            self._forget_idle(now)

    def finish(self, session: str) -> None:
        with self._lock:
            self._running.discard(session)

    @contextmanager
    def run(self, session: str, client: str | None = None) -> Iterator[None]:
        """``with gate.run(session, client):`` around one grading; raises ``RunRefused`` before it starts."""
        self.start(session, client)
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


def client_address(peer: str | None, headers: Mapping[str, str], *, header: str = "X-Real-IP",
                   trusted: frozenset[str] = frozenset({"", "127.0.0.1", "::1"})) -> str:
    """Who the client is, for the per-client quota. ``peer`` is the connection's address (Streamlit's
    ``st.context.ip_address``: None for loopback). When the peer is a trusted reverse proxy (loopback by
    default: the README's nginx on the same machine), the address the proxy forwards in ``header`` counts
    (the right-most entry, which the proxy itself wrote); a client's own header is ignored otherwise, since
    anyone can send one. Without either, every loopback visitor is one local client."""
    peer = peer or ""
    if peer in trusted:
        forwarded = next((v for k, v in headers.items() if k.lower() == header.lower()), "")
        last = forwarded.split(",")[-1].strip()
        if last:
            return last[:64]
        return peer or "local"
    return peer[:64]

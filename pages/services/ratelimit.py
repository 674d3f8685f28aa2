"""Fair use of the graders: one run at a time per browser session, a limit on runs per minute per client
(its network address, so a reload, which is a new session, gets no fresh quota), and a cap for everyone.

The app keeps one ``RunGate`` for the whole server (``pages/services/runs.py``, in ``st.cache_resource``) and wraps
each Run or Submit in ``with gate.run(session_id, client):`` (``client_address`` says who the client is);
a refusal raises ``RunRefused``, whose ``message`` is meant to be shown to the learner as it is.
"""
from __future__ import annotations

import ipaddress
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, Mapping


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


TRUSTED_PROXIES_ENV = "JAXPLAY_TRUSTED_PROXIES"
PROXY_HEADER_ENV = "JAXPLAY_PROXY_HEADER"
LOOPBACK = ("127.0.0.0/8", "::1/128")


def trusted_proxies(spec: str | None) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The proxies whose forwarded header is believed, from ``JAXPLAY_TRUSTED_PROXIES``: addresses or networks
    separated by commas (``127.0.0.1,::1``, ``10.0.0.0/8``; ``loopback`` for both loopback ranges). Empty (the
    default): no proxy is trusted, so no header is believed. An entry that is no address is ignored."""
    nets = []
    for item in (spec or "").split(","):
        item = item.strip()
        for entry in (LOOPBACK if item.lower() == "loopback" else (item,)):
            if not entry:
                continue
            try:
                nets.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue
    return tuple(nets)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        found = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    return found.ipv4_mapped or found if isinstance(found, ipaddress.IPv6Address) else found


def client_address(peer: str | None, headers: Mapping[str, str], *, header: str = "X-Real-IP",
                   trusted: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network | str] = ()) -> str:
    """Who the client is, for the per-client quotas. ``peer`` is the connection's address (Streamlit's
    ``st.context.ip_address``, which is None for a loopback peer). Only when the peer is one of the
    ``trusted`` proxies (``trusted_proxies``: none unless the operator lists them) does the address the proxy
    forwards in ``header`` count (the right-most entry, which the proxy itself wrote, and only if it is an
    address); anyone can send that header, so it is ignored from any other peer. Without a trusted proxy
    every loopback visitor is one local client. (``trusted`` may hold networks or their text, ``10.0.0.0/8``.)"""
    nets = [n for item in trusted for n in (trusted_proxies(item) if isinstance(item, str) else (item,))]
    peer_ip = _ip(peer) if peer else ipaddress.ip_address("127.0.0.1")
    if peer_ip is not None and any(peer_ip in net for net in nets):
        forwarded = next((v for k, v in headers.items() if k.lower() == header.lower()), "")
        last = forwarded.split(",")[-1].strip()
        address = _ip(last) if last else None
        if address is not None:
            return str(address)
    return (peer or "local")[:64]


def request_client(peer: object, headers: object, env: Mapping[str, str]) -> str:
    """``client_address`` for one request, with the operator's settings from ``env``
    (``JAXPLAY_TRUSTED_PROXIES``, default none; ``JAXPLAY_PROXY_HEADER``, default ``X-Real-IP``)."""
    peer = peer if isinstance(peer, str) else None  # (AppTest's context holds stand-ins, not addresses)
    pairs = dict(headers) if isinstance(headers, Mapping) else {}
    pairs = {k: v for k, v in pairs.items() if isinstance(k, str) and isinstance(v, str)}
    return client_address(peer, pairs, header=env.get(PROXY_HEADER_ENV, "X-Real-IP") or "X-Real-IP",
                          trusted=trusted_proxies(env.get(TRUSTED_PROXIES_ENV, "")))

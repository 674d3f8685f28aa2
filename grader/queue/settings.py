"""The queue's settings: where Redis is, the queue's name, its bounds, and how long anything stays there."""
from __future__ import annotations

import os
from urllib.parse import urlsplit

from redis import Redis

QUEUE_NAME = "jaxplay-grading"
"""The RQ queue every app and worker of one deployment shares (one Redis database per deployment)."""

MAX_QUEUED = int(os.environ.get("JAXPLAY_POOL_QUEUE", "100"))
"""Jobs allowed to wait (as for the local pool); past it a Run is refused kindly (``PoolBusy``)."""

WAIT_S = int(os.environ.get("JAXPLAY_QUEUE_WAIT_S", "180"))
"""How long a job may wait for a worker (RQ's ``ttl``): past it the learner hears that no grader took it."""

RESULT_TTL_S = 60
"""How long a finished job and its result stay in Redis (RQ's ``result_ttl``; the client reads it at once)."""

FAILURE_TTL_S = 300
"""How long a failed job stays (RQ's ``failure_ttl``), for whoever looks into it."""

TIMEOUT_MARGIN_S = 30
"""A job's RQ timeout is its wall-clock limit, the requirement checks' budget and this margin: a safety net
under the sandbox's own limits, which stop learner code long before."""

ALIVE_TTL_S = 10
"""A worker process refreshes its liveness key every ``ALIVE_EVERY_S`` while its pool grades (see
``SERVED_WITHIN_S``); ``ALIVE_TTL_S`` after it stops (the machine lost, the process killed, the pool stuck) a
client waiting on one of its jobs knows the grading worker is lost."""
ALIVE_EVERY_S = 2.0

PROBE_EVERY_S = 15.0
"""A worker whose pool has answered no run for this long grades a probe job (a tiny program) on it."""
SERVED_WITHIN_S = 45.0
"""A worker refreshes its liveness key only while its pool has answered a run (a probe's included) within
this long: liveness means "it grades", not "a thread of it is alive". Past ``3 * SERVED_WITHIN_S`` it stops."""

MAX_WALL_S = 300.0
"""The longest wall-clock limit a worker accepts from a job."""


def connect(url: str) -> Redis:
    """A Redis client for ``redis://[:password@]host:port/db`` (``rediss://`` for TLS); raises ValueError on
    anything else. Replies stay bytes: RQ decodes them itself."""
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"the queue URL must look like redis://[:password@]host:port/db, not {scheme or url!r}://")
    return Redis.from_url(url, health_check_interval=30, socket_keepalive=True)


def alive_key(worker: str) -> str:
    """The key a worker process keeps alive while it serves (``worker`` is its name)."""
    return f"jaxplay:grader-alive:{worker}"

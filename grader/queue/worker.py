"""``python -m grader worker --queue URL [--pool-size N]``: a grading machine's worker.

It checks the sandbox first (the doctor's deep probe; it refuses to serve where ``JAXPLAY_REQUIRE_SANDBOX``
demands a layer this machine lacks), starts one warm pool of ``N`` sandboxed workers, and runs ``N`` RQ
workers on threads that take jobs from the queue and grade them on that pool. RQ's ``SimpleWorker`` runs a
job in its own thread (no fork per job: the warm pool is the point); a job's timeout is a timer there
(``TimerDeathPenalty``), and signals are the main thread's. The main thread keeps this process's liveness
key alive, so a client waiting on one of its jobs learns within ``ALIVE_TTL_S`` that it is gone; its value is
the machine's sandbox layers, which the app's isolation badge shows.

Liveness means the worker grades (``Liveness``): the key is refreshed only while the pool has answered a run
within ``SERVED_WITHIN_S`` (an idle worker grades a probe job every ``PROBE_EVERY_S`` to show it can). A
worker whose pool stops answering lets its key lapse, so clients waiting on its jobs hear "the grading worker
was lost; run again", and stops after ``3 * SERVED_WITHIN_S``.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid

from redis.exceptions import RedisError
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty

from grader.queue import settings, tasks
from grader.grading.workers import CHILD, PROBE_JOB, warm_helpers, worker_pool

DEQUEUE_TTL_S = 20
"""RQ's ``worker_ttl``: a worker thread waits at most ``DEQUEUE_TTL_S - 15`` s per dequeue, so it notices a
stop request that soon."""


class RefusedJob(RuntimeError):
    """A job naming a function the worker does not run."""


class GradingJob(Job):
    """An RQ job that resolves only the grader's own job functions (``tasks.ALLOWED``)."""

    @property
    def func(self):  # noqa: ANN201 - RQ's signature
        if self.instance is not None or self.func_name not in tasks.ALLOWED:
            raise RefusedJob(f"this worker runs only {sorted(tasks.ALLOWED)}, not {self.func_name!r}")
        return super().func


class GradingWorker(SimpleWorker):
    """An RQ worker for a thread of the ``worker`` process: jobs in this thread, a timer for timeouts."""

    death_penalty_class = TimerDeathPenalty
    job_class = GradingJob

    def _install_signal_handlers(self) -> None:
        """Signals belong to the main thread (``serve``), which asks every worker to stop."""


class Liveness:
    """Whether this worker's pool grades: it answered a run within ``served_within_s``. While it has answered
    none for ``probe_every_s``, a probe job (a tiny program, ``workers.PROBE_JOB``) is sent to it in a thread."""

    def __init__(self, pool, probe_job: dict, probe_every_s: float = settings.PROBE_EVERY_S,
                 served_within_s: float = settings.SERVED_WITHIN_S) -> None:
        self.pool, self.probe_job = pool, probe_job
        self.probe_every_s, self.served_within_s = probe_every_s, served_within_s
        self.probes = 0
        self._probe: threading.Thread | None = None

    def age(self) -> float:
        """Seconds since the pool last answered a run."""
        return time.monotonic() - self.pool.last_answer

    def fresh(self) -> bool:
        """Called every ``ALIVE_EVERY_S``: whether the liveness key may be refreshed (probing when due)."""
        age = self.age()
        if age > self.probe_every_s and (self._probe is None or not self._probe.is_alive()):
            self.probes += 1
            self._probe = threading.Thread(target=self._run_probe, name="grader-probe", daemon=True)
            self._probe.start()
        return age <= self.served_within_s

    def _run_probe(self) -> None:
        from grader.sandbox import Limits
        try:
            self.pool.run(self.probe_job, Limits(wall_s=30))  # an answer moves pool.last_answer
        except Exception as exc:  # noqa: BLE001 - a pool that cannot grade lets the key lapse
            print(f"grader worker: the probe job failed ({type(exc).__name__}: {exc})", file=sys.stderr)


def serve(url: str, pool_size: int | None = None, *, log_level: str = "WARNING") -> int:
    """Serve the queue at ``url`` until SIGTERM or SIGINT; returns the exit status."""
    from grader.sandbox import doctor
    info = doctor.probe(deep=True, payload=CHILD, job=PROBE_JOB)
    for name, layer in info["layers"].items():
        print(f"{'ok ' if layer['ok'] else 'OFF'} {name:13s} {layer['detail']}", file=sys.stderr)
    if not info["ready"]:
        print(f"grader worker: not serving: {info['note']}", file=sys.stderr)
        return 1
    connection = settings.connect(url)
    connection.ping()  # a wrong address or password fails here, not at the first job
    size = max(1, pool_size or os.cpu_count() or 1)
    process = f"{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:6]}"
    alive = settings.alive_key(process)
    # what the app's isolation badge shows for the workers (``client.workers``): this machine's layers
    facts = {"layers": info["layers"], "note": info["note"], "pool_size": max(1, pool_size or os.cpu_count() or 1)}

    def status(liveness: Liveness | None = None) -> str:
        return json.dumps(facts | {"answered_s_ago": round(liveness.age(), 1) if liveness else 0.0})
    connection.set(alive, status(), ex=settings.ALIVE_TTL_S)
    queue = Queue(settings.QUEUE_NAME, connection=connection, serializer=JSONSerializer)

    warm_helpers(size)  # as many helpers as this process grades at once, no more
    pool = worker_pool(size, warm=size)
    tasks.serve_with(pool)
    workers = [GradingWorker([queue], name=f"{process}/{i}", connection=connection, serializer=JSONSerializer,
                             worker_ttl=DEQUEUE_TTL_S, job_class=GradingJob) for i in range(size)]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threads = [threading.Thread(target=w.work, kwargs={"logging_level": log_level}, name=f"rq-{i}", daemon=True)
               for i, w in enumerate(workers)]
    pool.wait_ready(timeout=120)
    liveness = Liveness(pool, PROBE_JOB)
    for t in threads:
        t.start()
    print(json.dumps({"serving": settings.QUEUE_NAME, "worker": process, "pool_size": size}), flush=True)
    try:
        while not stop.wait(settings.ALIVE_EVERY_S):
            if liveness.fresh():
                try:
                    connection.set(alive, status(liveness), ex=settings.ALIVE_TTL_S)
                except RedisError as exc:  # Redis away a moment: the jobs' threads retry too
                    print(f"grader worker: could not refresh the liveness key ({exc})", file=sys.stderr)
            elif liveness.age() > 3 * settings.SERVED_WITHIN_S:
                print(f"grader worker: the grading pool answered no run for {liveness.age():.0f} s; stopping",
                      file=sys.stderr)
                return 1
            if not any(t.is_alive() for t in threads):
                print("grader worker: every RQ worker thread stopped", file=sys.stderr)
                return 1
    finally:
        for w in workers:  # warm shutdown: each finishes the job it has, then leaves
            w._stop_requested = True
        deadline = time.monotonic() + DEQUEUE_TTL_S
        for t in threads:
            t.join(timeout=max(0.1, deadline - time.monotonic()))
        try:
            connection.delete(alive)
        except RedisError:
            pass  # it expires by itself
        pool.shutdown()
        for w, t in zip(workers, threads):
            if t.is_alive():  # caught mid-job (a finished thread registered its own death)
                try:
                    w.register_death()
                except Exception:  # noqa: BLE001 - Redis gone: the keys expire by themselves
                    pass
        logging.shutdown()
    return 0

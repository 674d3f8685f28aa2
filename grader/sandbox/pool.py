"""Warm one-shot workers with a queue in front: a run starts on a process that has already prepared its payload.

Each worker is forked by a fork server (``forkserver.py``, ``inside/zygote.py``: one sandboxed process that
prepared the payload once and never runs a job itself) or, where that cannot start, is a new process from
``runner.spawn_child()``; either way it has every sandbox layer, starts the payload (JAX's backend), writes
one readiness byte on its result pipe and blocks reading its job. A forked worker started while no run is
waiting first does the payload's warm-up job (its first compile and copy-on-write page copies are then not
on a learner's clock); in a rush it skips it, so the next run starts sooner. A run takes one ready worker, feeds it
through ``runner.supervise()`` with the wall clock starting at delivery, and the worker dies with the run:
nothing carries over between jobs. A manager thread keeps ``warm`` workers starting or ready (while a run is
under way and another worker is ready, it tops up after the run, so starting one does not slow the run
down), replaces those that die or sit idle too long, and backs off when workers fail to start. Nothing a
run leaves behind and no failure of killing, waiting for or cleaning up after a worker keeps its slot taken
or stops the manager (each step is contained and logged; the slot is freed before the scratch folder is removed, by
``remove_tree``, bounded in time). A fork server that dies is noticed within a round of the manager and
replaced; the runs it had say the grading worker was lost (``WORKER_LOST``), never that the program crashed.
Runs wait in a bounded FIFO queue and can be told how many runs are ahead of them, and how the payload is
getting on::

    pool = WorkerPool(payload, size=2)         # shared_pool(payload) for the process-wide one
    outcome = pool.run(job, limits, on_position=show_place_in_queue, on_progress=show_progress)

Sizes come from the environment (see README): ``JAXPLAY_POOL_SIZE`` runs at once (default: the CPU
count), ``JAXPLAY_POOL_WARM`` idle workers kept ready (default: the size), ``JAXPLAY_POOL_QUEUE`` runs
allowed to wait (default 100). A run past ``long_after_s`` of its own time (3 s by default; 1.5 s in the
grader's pools through the verifier: ``grader.grading.workers.LONG_AFTER_S``) gives up its slot and its CPU
priority so a loop headed for the time limit holds nobody up; at most ``size`` such runs at once. So at most
``2 * size + warm`` workers exist at once: that bounds memory (an idle forked worker has about 70 MB of
its own, 95 MB once warmed up, and shares the rest of the fork server's pages copy-on-write; one started as
a new process has about 190 MB resident).
"""
from __future__ import annotations

import atexit
import os
import select
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from grader.sandbox.cleanup import remove_tree
from grader.sandbox.forkserver import ForkServer, ForkServerError
from grader.sandbox.outcome import LOST_STATUS, WORKER_LOST, Limits, RunOutcome
from grader.sandbox.processes import killpg
from grader.sandbox.runner import Child, spawn_child, supervise, with_limits

READY_BYTE = b"\n"
"""What a worker writes on its result pipe once its payload is ready (``json.loads`` ignores it)."""


LONG_RUN_NICE = 15
"""The niceness of each thread of a run past ``long_after_s`` (raising niceness needs no privilege)."""

LONG_RUN_GROUP_NICE = 5
"""The niceness of its session's scheduler autogroup, which is what counts against other sessions: about a third
of a fresh run's share (kernel weights 335 and 1024). Not more: a dropped run waits while every other session
runs, and a correct Submit that takes 10 s must still finish within its (extended) wall-clock limit on a busy
machine; at nice 15 (1/28) it did not."""


LONG_RUN_WALL_FACTOR = 3.0
"""A dropped run's wall-clock limit is this many times its own: a slow but correct Submit (a Submit's hidden
cases may take 10 s) is not starved into a time-limit verdict on a busy machine. Its CPU time stays capped at
the limit plus 2 s (``RLIMIT_CPU``), so a loop still ends with a time-limit verdict, only later in wall time."""


FORKSERVER_FORKS = 500
FORKSERVER_AGE_S = 3600.0
"""A fork server forks at most this many workers, for at most this long, before a new one takes over (the
old one stops once its workers are done): workers of one server share its memory layout."""

RELEASE_WAIT_S = 10.0
"""How long a finished run's slot waits for its killed worker to be reported gone before it is freed anyway."""

CLEANUP_DEADLINE_S = 10.0
"""The longest the pool spends removing one scratch folder (in a thread of its own, after the slot is free)."""

FORKSERVER_FAILURES = 3
"""Fork server failures in a row (it would not start, or stopped answering) after which every worker is
started as a new process instead."""


class PoolBusy(RuntimeError):
    """The queue is full: the caller should ask the learner to try again shortly."""


class PoolClosed(RuntimeError):
    """The pool was shut down while the run waited or ran."""


@dataclass(frozen=True)
class PoolStats:
    """A snapshot of the pool, for the app's status line and for tests."""

    size: int
    """Runs allowed at once."""
    warm: int
    """Idle workers the pool keeps starting or ready."""
    ready: int
    """Workers with JAX loaded, waiting for a job."""
    starting: int
    """Workers still importing JAX."""
    running: int
    """Runs in progress, long ones included."""
    long_running: int
    """Runs past ``long_after_s``: at low priority, not holding a slot."""
    queued: int
    """Runs waiting for a worker."""
    spawned: int
    """Workers started since the pool was created."""
    failed_starts: int
    """Workers that died before they were ready."""


@dataclass
class _Worker:
    child: Child
    spawned_at: float
    ready_at: float = 0.0


def _env_int(name: str, default: int) -> int:
    try:
        return max(0, int(os.environ[name]))
    except (KeyError, ValueError):
        return default


class WorkerPool:
    """Warm one-shot workers and a FIFO queue of runs; safe to share between threads."""

    def __init__(self, payload: Path, size: int | None = None, *, warm: int | None = None,
                 max_queue: int | None = None, long_runs: int | None = None, long_after_s: float = 3.0,
                 max_idle_s: float = 600.0, max_spawns: int | None = None, warm_up: bool = True,
                 spawn: Callable[[], Child] | None = None) -> None:
        """Workers that run ``payload``; ``size`` runs at once; ``warm`` workers kept ready; ``max_queue``
        runs may wait.

        A run still going after ``long_after_s`` of its own time (wall-clock time less the time it waited for a
        CPU: ``_OwnTimeTimer``; almost always a loop headed for the time limit: a Run on the examples takes well
        under a second) stops holding one of the ``size`` slots and drops to a low CPU
        priority, so it cannot hold up the queue; at most ``long_runs`` (default: ``size``) such runs at
        once. An idle worker older than ``max_idle_s`` is replaced; ``max_spawns`` caps the workers ever
        started (a batch that knows how many runs it makes starts no spare). With ``warm_up`` a forked worker
        started while no run waits first does the payload's warm-up job (a Run's latency: about 15 ms less per
        Run for about 0.1 s of CPU at start); a batch, where throughput is all, leaves it out. Workers are forked by a fork
        server (``forkserver.py``) unless ``JAXPLAY_FORKSERVER=0`` or it cannot start, in which case each is
        a new process (``runner.spawn_child``); ``spawn`` replaces both."""
        self.payload = Path(payload)
        self.size = max(1, size if size is not None else _env_int("JAXPLAY_POOL_SIZE", os.cpu_count() or 1))
        self.warm = max(1, warm if warm is not None else _env_int("JAXPLAY_POOL_WARM", self.size))
        self.max_queue = max_queue if max_queue is not None else _env_int("JAXPLAY_POOL_QUEUE", 100)
        self.long_runs = max(0, long_runs if long_runs is not None else self.size)
        self.long_after_s = long_after_s
        self.max_idle_s = max_idle_s
        self._max_spawns = max_spawns
        self.warm_up = warm_up
        self._spawn = spawn if spawn is not None else self._fork_or_spawn
        self._forkserver: ForkServer | None = None
        self._retired: list[ForkServer] = []  # replaced servers whose workers may still be running
        self._use_forkserver = os.environ.get("JAXPLAY_FORKSERVER", "1") != "0"
        self._fork_failures = 0
        self._cond = threading.Condition()
        self._ready: deque[_Worker] = deque()
        self._starting: dict[int, _Worker] = {}  # keyed by the result pipe's fd
        self._running: dict[int, Child] = {}  # pid -> child, every run in progress
        self._long: set[int] = set()  # pids of runs past long_after_s: they no longer hold a slot
        self._queue: deque[object] = deque()
        self._closed = False
        self._spawned = 0
        self._failed_starts = 0
        self._lost = 0  # workers that never served a run: they do not count against max_spawns
        self._backoff_until = 0.0
        self.last_answer = time.monotonic()
        """When a run last came back with its worker's answer (a probe's included): the pool serves."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._manager = threading.Thread(target=self._manage, name="grader-pool", daemon=True)
        self._manager.start()

    # -- the caller's side ------------------------------------------------------------------------------

    def run(self, job: dict[str, Any], limits: Limits = Limits(), *,
            on_position: Callable[[int], None] | None = None,
            on_progress: Callable[[str], None] | None = None) -> RunOutcome:
        """Run ``job`` on a fresh warm worker, waiting in the queue if every slot is busy.

        ``on_position(n)`` is called in the caller's thread whenever the number of runs ahead of this one
        changes while it waits (``0``: next in line, waiting for a free worker); it is not called when a
        worker is free at once. ``on_progress(text)`` is called in the caller's thread with the payload's
        latest progress message while the job runs (at most five times a second; the text is the payload's,
        or the learner's if their code wrote on the channel: show it as text). Raises ``PoolBusy`` if the
        queue is full, ``PoolClosed`` after shutdown.
        """
        ticket = object()
        with self._cond:
            if self._closed:
                raise PoolClosed("the grading pool is shut down")
            if len(self._queue) >= self.max_queue:
                raise PoolBusy(f"{len(self._queue)} runs are already waiting")
            self._queue.append(ticket)
        try:
            worker = self._wait_turn(ticket, on_position)
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                self._cond.notify_all()
            raise
        pid = worker.child.proc.pid
        wall = [limits.wall_s]
        timer = _OwnTimeTimer(pid, self.long_after_s, lambda: self._set_long(pid, wall))
        try:
            outcome = supervise(worker.child, with_limits(job, limits), limits, time.monotonic(),
                                on_progress=on_progress, wall_s=lambda: wall[0])
        finally:
            timer.cancel()
            self._finish(worker.child)
        if self._closed and outcome.result is None:
            raise PoolClosed("the grading pool was shut down during the run")
        if outcome.result is None and outcome.limit is None and _doomed(worker.child):
            # its fork server died under it (the grader's failure, not the learner's): say so, never "crashed"
            outcome.result, outcome.result_error = {"status": LOST_STATUS, "message": WORKER_LOST}, None
        elif outcome.result is not None:
            self.last_answer = time.monotonic()
        return outcome

    def _finish(self, child: Child) -> None:
        """After a run: kill its worker (answered and exiting, or supervise() itself failed) and release its
        slot in the background, so the caller has its answer now. Never raises."""
        try:
            if child.proc.poll() is None:
                _kill(child)
        except Exception as exc:  # noqa: BLE001 - the release below still frees the slot
            _complain("killing a finished worker", exc)
        try:
            threading.Thread(target=self._release, args=(child,), daemon=True).start()
        except Exception as exc:  # noqa: BLE001 - no thread to be had: release here
            _complain("starting a release thread", exc)
            self._release(child)

    def _release(self, child: Child) -> None:
        """Once ``child`` has exited (or ``RELEASE_WAIT_S`` after it was killed, should its exit never be
        reported): free its slot, then remove its scratch folder. Never raises: the slot is freed whatever
        waiting or cleaning does (see README "The sandbox")."""
        try:
            child.proc.wait(timeout=RELEASE_WAIT_S)
        except Exception as exc:  # noqa: BLE001 - a timeout, or a fault: the worker was killed either way
            _complain("waiting for a finished worker", exc)
        finally:
            with self._cond:
                self._running.pop(child.proc.pid, None)
                self._long.discard(child.proc.pid)
                self._cond.notify_all()
            self._wake()
        _clean(child)

    def _wait_turn(self, ticket: object, on_position: Callable[[int], None] | None) -> _Worker:
        told: int | None = None
        while True:
            dead: list[_Worker] = []
            worker: _Worker | None = None
            with self._cond:
                while True:
                    if self._closed:
                        raise PoolClosed("the grading pool is shut down")
                    ahead = self._queue.index(ticket)
                    if ahead == 0 and self._has_slot():
                        while self._ready:
                            worker = self._ready.popleft()
                            if worker.child.proc.poll() is None and not _doomed(worker.child):
                                self._queue.popleft()
                                self._running[worker.child.proc.pid] = worker.child
                                self._cond.notify_all()
                                break
                            dead.append(worker)
                            self._lost += 1
                        else:
                            worker = None
                        if worker is not None or dead:
                            break
                    if on_position is not None and ahead != told:
                        break
                    self._cond.wait(timeout=1.0)
            for w in dead:
                _discard(w.child)
            self._wake()  # a worker was taken or found dead: refill
            if worker is not None:
                return worker
            if on_position is not None and ahead != told:
                told = ahead
                on_position(ahead)

    def _has_slot(self) -> bool:
        young = len(self._running) - len(self._long)
        return young < self.size and len(self._running) < self.size + self.long_runs

    def _set_long(self, pid: int, wall: list[float] | None = None) -> None:
        with self._cond:
            if pid not in self._running or self._closed:
                return
        if wall is not None:  # dropped, it waits while others run: its own CPU time (RLIMIT_CPU) is its limit now
            wall[0] *= LONG_RUN_WALL_FACTOR
        _lower_priority(pid, LONG_RUN_NICE, LONG_RUN_GROUP_NICE)
        with self._cond:
            if pid not in self._running:
                return
            self._long.add(pid)
            self._cond.notify_all()
        self._wake()  # its slot is free: the manager may need to start a worker for the next run

    def stats(self) -> PoolStats:
        with self._cond:
            return PoolStats(size=self.size, warm=self.warm, ready=len(self._ready), starting=len(self._starting),
                             running=len(self._running), long_running=len(self._long),
                             queued=len(self._queue), spawned=self._spawned,
                             failed_starts=self._failed_starts)

    def wait_ready(self, count: int | None = None, timeout: float = 60.0) -> bool:
        """Block until ``count`` workers (default: ``warm``) are ready; for benchmarks and tests."""
        want = self.warm if count is None else count
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._ready) < want:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return False
                self._cond.wait(timeout=left)
            return True

    def shutdown(self) -> None:
        """Kill every worker (idle, starting and running) and stop the manager; idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            workers = list(self._ready) + list(self._starting.values())
            running = list(self._running.values())
            self._ready.clear()
            self._starting.clear()
            self._cond.notify_all()
        self._wake()
        self._manager.join(timeout=5)
        for w in workers:
            _discard(w.child)
        for child in running:  # their callers' supervise() reaps them
            _kill(child)
        for server in [self._forkserver, *self._retired]:
            if server is not None:
                server.shutdown()
        # The wake pipe stays open: a run finishing now may still write to it, and a closed fd number
        # could already belong to someone else.

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- the manager thread -----------------------------------------------------------------------------

    def _fork_or_spawn(self) -> Child:
        """A worker from the fork server (started on first use, restarted if it died), else a new process.
        After ``FORKSERVER_FAILURES`` failures in a row the pool stops trying and says so."""
        if self._use_forkserver:
            try:
                self._retire_idle_servers()
                server = self._forkserver
                if server is not None and not server.lost and (
                        server.forks >= FORKSERVER_FORKS or time.monotonic() - server.started > FORKSERVER_AGE_S):
                    self._retired.append(server)  # a fresh memory layout for the next workers
                    self._forkserver = None
                if self._forkserver is None or self._forkserver.lost:
                    self._start_forkserver()
                with self._cond:
                    warm_up = self.warm_up and not self._queue  # a run waiting wants this worker now
                child = self._forkserver.spawn(warm_up=warm_up)
                self._fork_failures = 0
                return child
            except ForkServerError as exc:
                self._fork_failures += 1
                if self._forkserver is not None:
                    self._forkserver.shutdown()  # the next worker starts a new one
                    self._forkserver = None
                if self._fork_failures >= FORKSERVER_FAILURES:
                    self._use_forkserver = False
                    print(f"grader pool: the fork server failed {self._fork_failures} times in a row ({exc}); "
                          "starting each worker as a new process from now on", file=sys.stderr)
                else:
                    print(f"grader pool: the fork server failed ({exc}); this worker is a new process",
                          file=sys.stderr)
        return spawn_child(self.payload)

    def _retire_idle_servers(self) -> None:
        for server in list(self._retired):
            if server.lost or server.live_workers() == 0:
                server.shutdown()
                self._retired.remove(server)

    def _start_forkserver(self) -> None:
        if self._forkserver is not None:  # it died: its workers went with it
            self._forkserver.shutdown()
            self._forkserver = None
        server = ForkServer(self.payload)
        with self._cond:
            closed = self._closed
            if not closed:
                self._forkserver = server
        if closed:
            server.shutdown()
            raise PoolClosed("the grading pool is shut down")

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass  # already awake, or shut down

    def _manage(self) -> None:
        """The manager thread: no exception ends it (a pool without its manager would serve nobody)."""
        while True:
            try:
                if self._manage_once():
                    return
            except Exception as exc:  # noqa: BLE001
                _complain("managing the workers", exc)
                time.sleep(0.5)

    def _manage_once(self) -> bool:
        """One round of the manager: expire, start, watch. True once the pool is closed."""
        for server in [self._forkserver, *self._retired]:
            if server is not None:
                server.check()  # a dead server is noticed here, within a round (about a second)
        expired: list[_Worker] = []
        with self._cond:
            if self._closed:
                return True
            now = time.monotonic()
            for w in list(self._ready):
                if w.child.proc.poll() is not None or now - w.ready_at > self.max_idle_s:
                    self._ready.remove(w)
                    expired.append(w)
                    self._lost += 1
            missing = self.warm - len(self._ready) - len(self._starting)
            room = (self.size + self.long_runs + self.warm
                    - len(self._ready) - len(self._starting) - len(self._running))
            want = max(0, min(missing, room))
            if self._running.keys() - self._long and self._ready and not self._queue:
                want = 0  # top up once the run in progress is done: importing JAX would slow it down
            if self._max_spawns is not None:
                want = min(want, self._max_spawns - self._spawned + self._lost)
            if now < self._backoff_until:
                want = 0
        for w in expired:
            _discard(w.child)
        for _ in range(want):
            try:
                child = self._spawn()
            except PoolClosed:
                return True
            except Exception as exc:  # noqa: BLE001 - keep serving; retry after a pause
                print(f"grader pool: could not start a worker: {exc!r}", file=sys.stderr)
                self._note_failed_start()
                break
            with self._cond:
                self._spawned += 1
                closed = self._closed
                if not closed:
                    self._starting[child.res_r] = _Worker(child, time.monotonic())
            if closed:
                _discard(child)
                return True
        self._poll_starting(timeout=max(0.05, min(1.0, self._backoff_until - time.monotonic())))
        return False

    def _poll_starting(self, timeout: float) -> None:
        with self._cond:
            fds = list(self._starting)
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        for fd in fds:
            poller.register(fd, select.POLLIN)
        try:
            events = poller.poll(timeout * 1000)
        except OSError:
            return
        for fd, _ in events:
            if fd == self._wake_r:
                try:
                    os.read(self._wake_r, 4096)
                except OSError:
                    pass
                continue
            with self._cond:
                worker = self._starting.get(fd)
            if worker is None:
                continue
            try:
                first = os.read(fd, 1)
            except OSError:
                first = b""
            with self._cond:
                if self._starting.pop(fd, None) is None:
                    continue  # shut down meanwhile
                if first == READY_BYTE:
                    worker.ready_at = time.monotonic()
                    self._ready.append(worker)
                    self._backoff_until = 0.0
                    self._cond.notify_all()
                    continue
            self._note_failed_start(worker)
            _discard(worker.child)

    def _note_failed_start(self, worker: _Worker | None = None) -> None:
        detail = ""
        if worker is not None:
            _kill(worker.child)
            worker.child.proc.wait()
            try:
                os.set_blocking(worker.child.err_r, False)
                detail = os.read(worker.child.err_r, 2000).decode("utf-8", "replace").strip()[-500:]
            except OSError:
                pass
        with self._cond:
            self._failed_starts += 1
            self._lost += 1
            pause = min(30.0, 0.5 * 2 ** min(self._failed_starts, 6))
            self._backoff_until = time.monotonic() + pause
        print(f"grader pool: a worker died before it was ready (exit {worker.child.proc.returncode if worker else '-'})"
              f"; retrying in {pause:.1f} s. {detail}", file=sys.stderr)


OWN_TIME_CAP = 4.0
"""A run is dropped at the latest after this many times ``long_after_s`` of wall-clock time, however much of it
was spent waiting for a CPU (a bound on what the scheduler's counters are trusted for)."""


class _OwnTimeTimer:
    """Calls ``fire`` once the run rooted at ``pid`` has had ``after_s`` of its own time: wall-clock time less
    the time its processes spent runnable but waiting for a CPU (the kernel's ``run_delay`` in
    ``/proc/PID/task/TID/schedstat``).

    On a quiet machine the two are the same. In a class's burst they are not: thirty Runs and their verifiers
    share two cores, and a right answer that needs 0.5 s of CPU can take 3 s of wall-clock time waiting for
    one. Dropped by the wall clock, every such Run gave up its slot and its priority, the next one started
    beside it, and the queue turned into everyone sharing the CPU at once: nobody's verdict came early, the
    median came at nine tenths of the last. Counted by its own time, a run waiting for the CPU keeps its
    slot and the queue stays first-come first-served, while a loop (running) or a sleeper (blocked, which is
    its own time too) is still dropped after ``after_s``. Where the counters cannot be read, the wall clock
    decides, as before; in any case the run is dropped after ``OWN_TIME_CAP * after_s`` of wall-clock time."""

    def __init__(self, pid: int, after_s: float, fire: Callable[[], None]) -> None:
        self.pid, self.after_s, self.fire = pid, after_s, fire
        self.started = time.monotonic()
        self.waited0 = _cpu_wait_s(pid)
        self._timer: threading.Timer | None = None
        self._cancelled = False
        self._lock = threading.Lock()
        self._arm(after_s)

    def _arm(self, delay_s: float) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._timer = threading.Timer(delay_s, self._check)
            self._timer.daemon = True
            self._timer.start()

    def _check(self) -> None:
        elapsed = time.monotonic() - self.started
        waited = _cpu_wait_s(self.pid)
        own = elapsed if waited is None or self.waited0 is None else elapsed - max(0.0, waited - self.waited0)
        if own >= self.after_s or elapsed >= OWN_TIME_CAP * self.after_s:
            self.fire()
        else:
            self._arm(min(self.after_s - own, OWN_TIME_CAP * self.after_s - elapsed) + 0.05)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._timer is not None:
                self._timer.cancel()


def _tree_threads(root: int) -> tuple[dict[int, list[str]], dict[int, set[int]]]:
    """The threads (ids, as named in ``/proc/PID/task``) of ``root`` and each of its descendants, and every
    session on the machine with its processes."""
    kids: dict[int, list[int]] = {}
    sessions: dict[int, set[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                kids.setdefault(int(fields[1]), []).append(int(entry))
                sessions.setdefault(int(fields[3]), set()).add(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    threads: dict[int, list[str]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in threads:
            continue
        todo.extend(kids.get(pid, []))
        try:
            threads[pid] = os.listdir(f"/proc/{pid}/task")
        except OSError:
            threads[pid] = []
    return threads, sessions


def _cpu_wait_s(root: int) -> float | None:
    """Seconds the run rooted at ``root`` has spent waiting for a CPU: the largest ``run_delay`` among the
    threads of ``root`` and its descendants (a sandbox nests the child under its own processes; the learner's
    code runs on one thread, and XLA's threads wait beside it, not after it). None if unreadable."""
    most = None
    for pid, tids in _tree_threads(root)[0].items():
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    delay = int(f.read().split()[1]) / 1e9
            except (OSError, ValueError, IndexError):
                continue
            most = delay if most is None else max(most, delay)
    return most


def _lower_priority(root: int, nice: int, group_nice: int | None = None) -> list[str]:
    """Drop ``root`` and its descendants (a sandbox may nest the child) to niceness ``nice``, and their
    session's autogroup to ``group_nice`` (default ``nice``), so that the drop counts against every other process
    on the machine. Returns the sessions' autogroups it set.

    With ``kernel.sched_autogroup_enabled`` (the default on desktop kernels and here) the scheduler first
    shares CPU time between sessions, and a thread's nice ranks it only inside its own session; each worker
    starts a session of its own (``inside/zygote.py``), so a per-thread nice alone changes nothing against
    other runs or the server. So the session's autogroup gets the same nice (``/proc/PID/autogroup``), but only
    a session whose every process belongs to the run: never the grader's own. Each thread's nice is set too,
    for kernels without autogroups. Not ``SCHED_IDLE``: a run starved outright on a busy machine would reach
    its wall-clock limit and be blamed for it. Nothing needs undoing: a worker serves one run and its session
    ends with it, and the fork server puts its own attributes back before each fork."""
    threads, sessions = _tree_threads(root)
    tree = set(threads)
    for pid, tids in threads.items():
        for tid in tids:
            try:
                os.setpriority(os.PRIO_PROCESS, int(tid), nice)
            except (OSError, ValueError):
                pass
    group_nice = nice if group_nice is None else group_nice
    own = _autogroup(os.getpid())
    done: list[str] = []
    for sid, members in sessions.items():
        if sid not in tree or not members <= tree:
            continue  # a session the run shares with anyone else keeps its share
        group = _autogroup(sid)
        if group is None or group == own or group in done:
            continue
        for attempt in range(4):
            try:
                with open(f"/proc/{sid}/autogroup", "w") as f:
                    f.write(str(group_nice))  # the number alone ("nice N" is what reading shows)
                done.append(group)
                break
            except BlockingIOError:  # EAGAIN: without CAP_SYS_ADMIN, one change per 0.1 s machine-wide
                time.sleep(0.11)
            except OSError:
                break
    return done


def _autogroup(pid: int) -> str | None:
    """The scheduler autogroup of ``pid`` (``/autogroup-123``), or None without autogroups."""
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return None


def _doomed(child: Child) -> bool:
    """Whether a ready worker is about to die with its fork server (never give it a job)."""
    doomed = getattr(child.proc, "doomed", None)
    return bool(doomed and doomed())


def _kill(child: Child) -> None:
    killpg(child.proc.pid)


def _discard(child: Child) -> None:
    """Kill a worker that never got a job, reap it and free its pipes and scratch folder. Never raises."""
    try:
        _kill(child)
    except Exception as exc:  # noqa: BLE001
        _complain("killing an idle worker", exc)
    try:
        child.proc.wait(timeout=5)
    except Exception:  # noqa: BLE001
        pass
    try:
        child.close_pipes()
    except Exception as exc:  # noqa: BLE001
        _complain("closing an idle worker's pipes", exc)
    _clean(child)


def _clean(child: Child) -> None:
    """Remove a worker's scratch folder, bounded in time; what is left is said on stderr. Never raises."""
    try:
        report = remove_tree(child.scratch, deadline_s=CLEANUP_DEADLINE_S)
        if not report.complete:
            print(f"grader pool: {report}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001
        _complain("removing a scratch folder", exc)


def _complain(what: str, exc: BaseException) -> None:
    try:
        print(f"grader pool: {what} failed ({type(exc).__name__}: {exc}); serving on", file=sys.stderr)
    except Exception:  # noqa: BLE001 - stderr closed
        pass


_shared: dict[Path, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(payload: Path, **options: Any) -> WorkerPool:
    """The process-wide pool for ``payload`` (created on first use, with ``options`` for ``WorkerPool``; shut
    down at exit)."""
    key = Path(payload).resolve()
    with _shared_lock:
        pool = _shared.get(key)
        if pool is None or pool._closed:
            pool = _shared[key] = WorkerPool(key, **options)
            atexit.register(pool.shutdown)
        return pool


def shutdown_shared_pools() -> None:
    """Shut down every process-wide pool (tests end them between modules)."""
    with _shared_lock:
        pools = list(_shared.values())
    for pool in pools:
        pool.shutdown()

"""Warm helper processes of the grader's own, each serving one JSON request per line over stdin and stdout.

The requirement checks (``grader.grading.checker``) and the verifier (``grader.verifier.service``) each keep a few
idle helpers, so a report pays for the pipe and the JSON, not for starting Python and importing the grader.
A helper runs trusted code only; what it reads can still make it slow or large, so every answer has a
deadline (``TimeoutError`` past it: the caller kills the helper and says why) and the helper's own ``serve``
sets its address-space limit. A helper writes ``ready`` once it has imported what it needs.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELPER_ENV = {"JAX_PLATFORMS": "cpu"}
"""A helper computes on this machine's CPU, as the sandboxed child does: with the TPU extra installed
(``requirements-tpu.txt``) JAX would otherwise look for a TPU at start-up, warn, and keep libtpu loaded."""
START_TIMEOUT_S = 120.0
"""How long a new helper may take to import what it serves with (a loaded machine is slow to start Python)."""


SEEN_KEPT = 64
"""How many recent requests' keys a helper remembers for ``HelperPool.take(prefer=...)`` (as many as the
verifier keeps compiled programs)."""

WATCH_EVERY_S = 0.05
"""How often a helper at work is looked at (its resident memory, its CPU time), as the sandbox watches a child."""

LONG_GROUP_NICE = 5
"""The nice of a helper's autogroup once its answer has taken its pool's ``long_after_s`` of CPU (the sandbox's
``LONG_RUN_GROUP_NICE``: about a third of a fresh share). Put back to 0 when it answers (raising an autogroup's
nice and putting it back to 0 need no privilege)."""

LONG_EXTRA = 2
"""How many helpers past ``limit`` may be alive while that many are on long answers."""

MAX_LINE_BYTES = 64 << 20
"""The most a helper's answer may hold unless the caller says less (the verifier does: its answers' bound)."""


class AnswerTooLong(ValueError):
    """A helper's answer past the bound its reader set: the helper is killed, nothing of it is parsed."""


class Helper:
    """One helper process running ``serve`` (``"module:function"``); ``broke`` is the caller's exception for
    a helper that failed (the grader's fault, never the learner's), ``what`` names it in messages."""

    gone: Any = None
    """Called once when the helper is killed (its pool counts it out); None for a helper no pool made."""

    def __init__(self, serve: str, broke: type[Exception], what: str, gone: Any = None) -> None:
        module, function = serve.split(":")
        self.gone = gone  # called once when the helper is killed (its pool counts it out)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                   f"from {module} import {function}; {function}()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT,
            env=os.environ | HELPER_ENV,
            # A session of its own, so a scheduler autogroup of its own: with autogroups (the default) the
            # kernel shares the CPU between sessions first, and in the server's session every verifier and
            # checker together got one share against each grading worker's (each starts a session), so in a
            # class's burst the Runs piled up in front of the verifier and their verdicts came all at the end.
            start_new_session=True)
        self.broke, self.what = broke, what
        self.buffer = bytearray()
        self.served = 0
        self.ready = False
        self.seen: dict[str, None] = {}
        """The ``prefer`` keys of the last ``SEEN_KEPT`` requests it served (``HelperPool.take``), oldest first."""
        self.working_on: str | None = None
        """The ``prefer`` key of the request it is serving now (None when idle, or for a request without one)."""
        self.failed: Exception | None = None
        """Why it did not start (``HelperPool`` starts helpers in the background), for the request waiting on it."""
        self.long = False
        """Its answer has taken more than its pool's ``long_after_s`` of CPU: its autogroup is niced, and it no
        longer counts against the pool's limit or its idle places (``HelperPool.watch``)."""

    def cpu_s(self) -> float:
        """CPU seconds the helper's process has used (all its threads)."""
        with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def resident_bytes(self) -> int:
        with open(f"/proc/{self.proc.pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def set_group_nice(self, nice: int) -> bool:
        """Set the nice of the helper's scheduler autogroup (it leads its session); False without autogroups."""
        for _ in range(4):
            try:
                with open(f"/proc/{self.proc.pid}/autogroup", "w") as f:
                    f.write(str(nice))
                return True
            except BlockingIOError:  # EAGAIN: without CAP_SYS_ADMIN, one change per 0.1 s machine-wide
                time.sleep(0.11)
            except OSError:
                return False
        return False

    def _exit_status(self) -> int | None:
        """The helper's exit status once its output has closed: a process closes its pipes a moment before it
        is reaped, so wait for that moment (on a loaded machine it is not instant), not longer."""
        try:
            return self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return None

    def _line(self, deadline: float, limit: int = MAX_LINE_BYTES) -> bytes:
        """The next line, read in linear time (each chunk is searched once, appended once); past ``limit``
        bytes without its end, ``AnswerTooLong`` (the caller kills the helper)."""
        fd = self.proc.stdout.fileno()
        searched = 0
        while True:
            end = self.buffer.find(b"\n", searched)
            if end >= 0:
                break
            searched = len(self.buffer)
            if searched > limit:
                raise AnswerTooLong(f"the {self.what} sent more than {limit} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self.broke(f"the {self.what} stopped (exit {self._exit_status()})")
            self.buffer += chunk
        if end > limit:
            raise AnswerTooLong(f"the {self.what} sent more than {limit} bytes")
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        return line

    def wait_ready(self) -> None:
        """Wait for the helper's ``ready`` (not part of any answer's deadline)."""
        if not self.ready:
            try:
                line = self._line(time.monotonic() + START_TIMEOUT_S)
            except TimeoutError:
                line = b""
            if line != b"ready":
                raise self.broke(f"the {self.what} did not start")
            self.ready = True

    def ask(self, request: bytes, deadline: float, limit: int = MAX_LINE_BYTES) -> dict[str, Any]:
        """The helper's answer to ``request``: ``TimeoutError`` past ``deadline``, ``AnswerTooLong`` past
        ``limit`` bytes."""
        self.proc.stdin.write(request + b"\n")
        self.proc.stdin.flush()
        self.served += 1
        return json.loads(self._line(deadline, limit))

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        gone, self.gone = self.gone, None
        if gone is not None:
            gone(self)


class HelperPool:
    """Helpers kept for the next request: at most ``limit`` alive at once (working, idle or starting), at most
    ``idle`` of them kept waiting, each replaced after ``answers`` answers (None: never), all stopped when the
    server exits.

    The limit is what keeps a class's burst of thirty Runs cheap: without it every grading that found no idle
    helper started one of its own (a Python process importing JAX, ~250 MB and seconds of CPU each), so thirty
    Runs at once meant thirty verifiers and thirty checkers fighting over two cores. With it, a request that
    finds every helper busy waits for the next one to finish: the helpers' work (a compile, a walk) is
    CPU-bound, so more processes than cores would only share the same CPUs more slowly, in more memory."""

    def __init__(self, serve: str, broke: type[Exception], what: str, *, idle: int,
                 answers: int | None = None, limit: int | None = None, spare_after_s: float = 0.0,
                 long_after_s: float | None = None) -> None:
        self.serve, self.broke, self.what = serve, broke, what
        self.long_after_s = long_after_s
        """A helper whose answer takes more CPU than this (``watch``) gives up its place and its priority, as a
        grading's child does: a learner's endless ``lax.while_loop`` only ever runs here (the child only
        traces), and in a class it held one of two verifiers at a full share of the CPU until its time limit,
        while every other Run waited for the one left. None: never."""
        self.idle, self.answers = idle, answers
        self.limit = None if limit is None else max(1, limit)
        self.spare_after_s = spare_after_s
        """A helper past ``idle`` alive is started only for a request that has waited this long at the head of
        the line (one stuck on a long answer): in a burst the ``idle`` warm helpers, whose caches are warm, serve
        everyone, and no helper starts (seconds of CPU to import JAX) to be stopped again once it is over. A
        request whose key a busy helper is serving waits as long before it starts one, even below ``idle``."""
        self._idle: list[Helper] = []
        self._live: set[Helper] = set()
        self._waiting: deque[object] = deque()  # requests waiting for a helper, in the order they came
        self._changed = threading.Condition()
        atexit.register(self.shutdown)

    def _new(self) -> Helper:
        """A new helper, counted as live (the caller holds ``_changed``)."""
        helper = Helper(self.serve, self.broke, self.what, gone=self._gone)
        self._live.add(helper)
        return helper

    def _gone(self, helper: Helper) -> None:
        with self._changed:
            self._live.discard(helper)
            self._changed.notify_all()

    def _prune(self) -> None:
        """Forget helpers that died by themselves (a killed one is forgotten by ``kill``)."""
        for helper in [h for h in self._live if h.proc.poll() is not None]:
            self._live.discard(helper)
            if helper in self._idle:
                self._idle.remove(helper)

    def take(self, deadline: float | None = None, prefer: str | None = None) -> Helper:
        """The first helper free for this request, ready: an idle one, one given back, or one started for it
        (when fewer than ``limit`` are alive), whichever comes first. A helper starts in the background (seconds:
        Python and JAX imported), so a request that a busy helper frees sooner never waits for a start, and the
        started one stays for the next. ``TimeoutError`` once ``deadline`` passes; ``broke`` if the helper
        started for it fails to start and none came free meanwhile.

        Requests are served in the order they came. ``prefer`` is the request's key (a helper's caches are its
        own: the verifier's compiled programs and probes): of the idle helpers, one that served the key before
        is taken first; and when none is idle while a busy one is serving the same key now, the request waits
        for that one rather than start a helper that would do the same work again (its answer will be kept
        there), for up to ``spare_after_s`` (the same key can be a program that runs to its time limit)."""
        ticket = object()
        head_since = None  # when this request came to the head of the line
        started: Helper | None = None  # the helper this request started, if any
        with self._changed:
            self._waiting.append(ticket)
            try:
                while True:
                    if self._waiting[0] is ticket:  # first come, first served: a class's Runs keep their order
                        head_since = time.monotonic() if head_since is None else head_since
                        helper = self._idle_one(prefer)
                        if helper is not None:
                            return helper
                        if started is not None and started not in self._live:  # it failed, or was killed
                            if started.failed is not None:
                                raise started.failed
                            started = None
                        if started is None and self._may_start(prefer, time.monotonic() - head_since):
                            started = self._new()
                            self._start(started)
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError
                    wait = 0.5  # a helper given back, ready or gone wakes it sooner
                    if head_since is not None and started is None and self._below_limit():
                        start_at = head_since + self.spare_after_s  # when this request may start a helper
                        if start_at > time.monotonic():
                            wait = max(0.01, min(wait, start_at - time.monotonic()))
                    self._changed.wait(wait if left is None else min(wait, left))
            finally:
                self._waiting.remove(ticket)
                self._changed.notify_all()

    def _idle_one(self, prefer: str | None) -> Helper | None:
        """An idle live helper for a request with key ``prefer``, marked as serving it (the caller holds
        ``_changed``)."""
        while self._idle:
            ready = [i for i, h in enumerate(self._idle) if prefer is not None and prefer in h.seen]
            helper = self._idle.pop(ready[-1] if ready else -1)
            if helper.proc.poll() is not None:
                self._live.discard(helper)
                continue
            helper.working_on = prefer
            if prefer is not None:
                helper.seen.pop(prefer, None)
                helper.seen[prefer] = None
                while len(helper.seen) > SEEN_KEPT:
                    del helper.seen[next(iter(helper.seen))]
            return helper
        return None

    def _below_limit(self) -> bool:
        if self.limit is None:
            return True
        long = sum(h.long for h in self._live)
        return len(self._live) - long < self.limit and len(self._live) < self.limit + LONG_EXTRA

    def _may_start(self, prefer: str | None, waited_s: float) -> bool:
        """Whether a request at the head of the line that found no idle helper may start one now (the caller
        holds ``_changed``): below ``limit``, and, past ``idle`` alive or with a busy helper serving its key
        now, only once it has waited ``spare_after_s``."""
        self._prune()
        if not self._below_limit():
            return False
        spare = len(self._live) - sum(h.long for h in self._live) >= self.idle
        same = prefer is not None and any(h.working_on == prefer for h in self._live)
        return not (spare or same) or waited_s >= self.spare_after_s

    def _start(self, helper: Helper) -> None:
        """Wait for ``helper`` to start in a thread of its own, then give it back (the first request in line
        takes it); one that does not start is killed, with ``failed`` saying why."""
        def start() -> None:
            try:
                helper.wait_ready()
            except self.broke as exc:
                helper.failed = exc
                helper.kill()
                return
            self.give_back(helper)
        threading.Thread(target=start, daemon=True).start()

    def give_back(self, helper: Helper) -> None:
        helper.working_on = None
        with self._changed:
            restored = not helper.long or helper.set_group_nice(0)
            helper.long = helper.long and not restored
        if not restored:
            helper.kill()
            return
        with self._changed:
            if (helper.proc.poll() is None and len(self._idle) < self.idle
                    and (self.answers is None or helper.served < self.answers)):
                self._idle.append(helper)
                self._changed.notify_all()
                return
        helper.kill()

    def watch(self, helper: Helper, done: threading.Event, *, memory_limit: int | None = None,
              over: threading.Event | None = None, growth: bool = False) -> None:
        """Watch ``helper`` at work in a thread until ``done``: past ``memory_limit`` of resident memory (with
        ``growth``, of growth over what it held when the watch began: libtpu holds hundreds of MB before any
        compile) it is killed and ``over`` is set; past the pool's ``long_after_s`` of CPU on this answer its
        autogroup is niced (``LONG_GROUP_NICE``) and it stops counting against the limit, so the requests
        behind it get a helper of their own at once."""
        if memory_limit is None and self.long_after_s is None:
            return

        def run() -> None:
            try:
                base_memory = helper.resident_bytes() if growth else 0
                base_cpu = helper.cpu_s()
            except (OSError, ValueError, IndexError):
                return
            while not done.wait(WATCH_EVERY_S):
                try:
                    memory = helper.resident_bytes() if memory_limit is not None else 0
                    cpu = helper.cpu_s() if self.long_after_s is not None and not helper.long else 0.0
                except (OSError, ValueError, IndexError):
                    return
                if memory_limit is not None and memory - base_memory > memory_limit:
                    if over is not None:
                        over.set()
                    helper.kill()
                    return
                if self.long_after_s is not None and not helper.long and cpu - base_cpu > self.long_after_s:
                    with self._changed:  # (``give_back`` puts the nice back under the same lock)
                        if done.is_set():  # answered meanwhile: it may already serve someone else
                            return
                        helper.set_group_nice(LONG_GROUP_NICE)
                        helper.long = True
                        self._changed.notify_all()
        threading.Thread(target=run, daemon=True).start()

    def warm_up(self, most: int | None = None) -> None:
        """Start helpers in the background until ``idle`` (at most ``most``) are alive (idle, at work or
        starting), so the first requests (a class's first burst too) wait for none to import what it serves
        with. Called on every grading (``workers.warm_helpers``): in a burst, with every helper at work, it
        starts none."""
        with self._changed:
            self._prune()
            count = (self.idle if most is None else min(self.idle, most)) - len(self._live)
            if self.limit is not None:
                count = min(count, self.limit - len(self._live))
            helpers = [self._new() for _ in range(max(0, count))]
        for helper in helpers:
            self._start(helper)

    def shutdown(self) -> None:
        """Stop the idle helpers."""
        with self._changed:
            helpers, self._idle = self._idle, []
        for helper in helpers:
            helper.kill()

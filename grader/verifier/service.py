"""The verifier's processes: warm helpers that rebuild and run traced programs, never learner code.

A helper is a plain Python process of the grader's (``python -c "...serve()"``) that imports JAX with the
child's XLA flags (``child.import_jax``, so the numbers are the ones the child would have computed) and
serves one answer at a time over stdin and stdout as JSON lines. It never imports or runs a submission:
it reads only the child's answer, which is data. What it runs can still be slow or large (a rebuilt
``while`` loop that never ends, a program that allocates gigabytes), so each answer has a deadline, after
which the helper is killed, and the helper's address space is limited. Idle helpers are kept for the next
answer, so a Run pays for the pipe and XLA's compile, not for importing JAX.
"""
from __future__ import annotations

import atexit
import dataclasses
import json
import os
import resource
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ENABLED = os.environ.get("JAXPLAY_VERIFIER", "") == "1"
"""Whether gradings go through the verifier (``JAXPLAY_VERIFIER=1``). Off by default until the pipeline has
been measured and swept like the child's path (issue 23)."""
IDLE_HELPERS = 2
START_TIMEOUT_S = 120.0
HELPER_ADDRESS_SPACE = 8 << 30
"""The helper's address-space limit (XLA reserves much more than it touches, as in the sandbox)."""
ANSWERS_PER_HELPER = 200
"""A helper serves this many answers, then a fresh one takes its place (XLA's caches only grow)."""
ROOT = Path(__file__).resolve().parents[2]


class VerifierBroke(RuntimeError):
    """The verifier's process failed: the grader's fault, never the learner's."""


class _Helper:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                   "from grader.verifier.service import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
        self.buffer = b""
        self.served = 0
        self.ready = False

    def _line(self, deadline: float) -> bytes:
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            readable, _, _ = select.select([self.proc.stdout], [], [], left)
            if readable:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise VerifierBroke("the verifier's process ended")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def wait_ready(self) -> None:
        if not self.ready:
            try:
                line = self._line(time.monotonic() + START_TIMEOUT_S)
            except TimeoutError:
                raise VerifierBroke("the verifier's process did not start") from None
            if line != b"ready":
                raise VerifierBroke("the verifier's process did not start")
            self.ready = True

    def ask(self, request: bytes, deadline: float) -> dict[str, Any]:
        self.proc.stdin.write(request + b"\n")
        self.proc.stdin.flush()
        self.served += 1
        return json.loads(self._line(deadline))

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass


_lock = threading.Lock()
_idle: list[_Helper] = []


def _take() -> _Helper:
    with _lock:
        while _idle:
            helper = _idle.pop()
            if helper.proc.poll() is None:
                return helper
    return _Helper()


def _give_back(helper: _Helper) -> None:
    with _lock:
        if len(_idle) < IDLE_HELPERS and helper.served < ANSWERS_PER_HELPER:
            _idle.append(helper)
            return
    helper.kill()


def warm_up() -> None:
    """Start a helper now, so the first answer does not wait for JAX to import."""
    with _lock:
        if _idle:
            return
    helper = _Helper()
    helper.wait_ready()
    _give_back(helper)


@atexit.register
def shutdown() -> None:
    with _lock:
        helpers = list(_idle)
        _idle.clear()
    for helper in helpers:
        helper.kill()


def verified(job: dict[str, Any], outcome: Any, budget_s: float) -> Any:
    """``outcome`` (a ``RunOutcome`` of the child's) with its answer replaced by the verifier's: the outputs
    and probes of the rebuilt programs. Past ``budget_s`` the helper is killed and the outcome is a time
    limit; a helper out of memory, a memory limit. Anything but a child's ``ok`` answer passes unchanged."""
    result = outcome.result
    if not isinstance(result, dict) or result.get("status") != "ok":
        return outcome
    request = json.dumps({"job": job, "result": result}).encode()
    helper = _take()
    try:
        helper.wait_ready()
        answer = helper.ask(request, time.monotonic() + budget_s)
    except TimeoutError:
        helper.kill()
        return dataclasses.replace(outcome, result=None, limit="time")
    except (OSError, ValueError, VerifierBroke) as exc:
        helper.kill()
        if helper.proc.returncode is not None and helper.proc.returncode < 0:  # killed, e.g. out of memory
            return dataclasses.replace(outcome, result=None, limit="memory")
        raise VerifierBroke(f"the verifier's process failed ({type(exc).__name__}: {exc})") from None
    _give_back(helper)
    if answer.get("memory_error"):
        return dataclasses.replace(outcome, result=None, limit="memory")
    if "error" in answer:
        raise VerifierBroke(answer["error"])
    return dataclasses.replace(outcome, result=answer["result"])


def serve() -> None:
    """The helper's loop: ``{"job", "result"}`` per line on stdin, ``{"result"}`` per line on stdout."""
    from grader import child
    from grader.verifier.verify import verify

    t = child.import_jax()  # the child's XLA flags, set before JAX loads
    child.init_backend(t)
    t["child"] = child
    resource.setrlimit(resource.RLIMIT_AS, (HELPER_ADDRESS_SPACE, HELPER_ADDRESS_SPACE))
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            answer = {"result": verify(t, request["job"], request["result"])}
        except MemoryError:
            answer = {"memory_error": True}
        except Exception as exc:  # noqa: BLE001 - reported to the server as the grader's own failure
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()

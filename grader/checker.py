"""Requirement checks run in a process of their own, under a time budget.

The checks are the grader's code, but the traced programs they read are the learner's, and a walk that is
fine on ordinary programs can be slow on a pathological one (twenty nested one-step scans cost one data-flow
walk minutes). A pure-Python loop in a thread cannot be interrupted, so the checks of one report run in a
helper process that is killed when ``BUDGET_S`` runs out: the server's own threads only wait, and an overrun
is ``ChecksTooSlow`` (a Time Limit Exceeded verdict that says why), never a hang.

Helpers are plain Python processes of the grader's (trusted code, the server's environment), each serving
one request at a time over its stdin and stdout as JSON lines; idle ones are kept for the next report, so a
report pays for the pipe and the JSON, not for a start. Nothing here is sandboxed: the helper runs no
learner code, only reads the answer the sandbox already bounded (``grader.bounds``).
"""
from __future__ import annotations

import atexit
import json
import os
import resource
import select
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from grader.records import Evidence, RequirementResult

BUDGET_S = float(os.environ.get("JAXPLAY_CHECK_BUDGET_S", "10"))
"""Wall-clock seconds the checks of one report may take (a normal report takes milliseconds)."""
IDLE_HELPERS = 4
"""Helpers kept waiting for the next report."""
START_TIMEOUT_S = 120.0
"""How long a new helper may take to import the grader (a loaded machine is slow to start Python)."""
HELPER_MEMORY_BYTES = 2 << 30
"""The helper's address-space limit: a check that blows up fails there, not in the server."""
ROOT = Path(__file__).resolve().parents[1]


class ChecksTooSlow(Exception):
    """The checks of one report did not finish within the budget; the helper was killed."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"the requirement checks took more than {budget_s:g} s")
        self.budget_s = budget_s


class CheckerBroke(RuntimeError):
    """The helper process failed (it died, or answered garbage): the grader's fault, never the learner's."""


class _Helper:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                   "from grader.checker import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
        self.buffer = b""
        self.ready = False

    def _line(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise CheckerBroke(f"the checking process stopped (exit {self.proc.poll()})")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def wait_ready(self) -> None:
        """Wait for the helper to have imported the grader (not part of any report's budget)."""
        if not self.ready:
            try:
                self._line(time.monotonic() + START_TIMEOUT_S)
            except TimeoutError:
                raise CheckerBroke("the checking process did not start") from None
            self.ready = True

    def ask(self, request: bytes, deadline: float) -> dict[str, Any]:
        self.proc.stdin.write(request + b"\n")
        self.proc.stdin.flush()
        return json.loads(self._line(deadline))

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


_idle: list[_Helper] = []
_lock = threading.Lock()


def _take() -> _Helper:
    with _lock:
        while _idle:
            helper = _idle.pop()
            if helper.proc.poll() is None:
                return helper
    return _Helper()


def _give_back(helper: _Helper) -> None:
    with _lock:
        if len(_idle) < IDLE_HELPERS:
            _idle.append(helper)
            return
    helper.kill()


_warming = threading.Event()


def warm_up() -> None:
    """Start a helper in the background, so the first report does not wait for one (nothing to do when one
    is idle or starting already)."""
    with _lock:
        if _idle or _warming.is_set():
            return
        _warming.set()

    def start() -> None:
        helper = _Helper()
        try:
            helper.wait_ready()
        except CheckerBroke:
            helper.kill()
            return
        finally:
            _warming.clear()
        _give_back(helper)
    threading.Thread(target=start, daemon=True).start()


@atexit.register
def shutdown() -> None:
    """Stop the idle helpers."""
    with _lock:
        helpers = list(_idle)
        _idle.clear()
    for helper in helpers:
        helper.kill()


def run_checks(problem: Any, traces: list[dict[str, Any]], first_error: dict[str, Any] | None,
               budget_s: float | None = None) -> tuple[list[RequirementResult], bool]:
    """``grade.requirement_results`` for ``problem`` on the child's ``traces``, in a helper process within
    ``budget_s`` (default ``BUDGET_S``). Raises ``ChecksTooSlow`` or ``CheckerBroke``."""
    budget_s = BUDGET_S if budget_s is None else budget_s
    request = json.dumps({"folder": str(problem.folder), "traces": traces, "first_error": first_error}).encode()
    helper = _take()
    try:
        helper.wait_ready()
        answer = helper.ask(request, time.monotonic() + budget_s)
    except TimeoutError:
        helper.kill()
        raise ChecksTooSlow(budget_s) from None
    except (OSError, ValueError, CheckerBroke) as exc:
        helper.kill()
        raise CheckerBroke(f"the checking process failed ({type(exc).__name__}: {exc})") from None
    _give_back(helper)
    if "error" in answer:
        raise CheckerBroke(answer["error"])
    results = [RequirementResult(**dict(r, evidence=[Evidence(**e) for e in r["evidence"]]))
               for r in answer["results"]]
    return results, bool(answer["broke"])


def serve() -> None:
    """The helper's loop: one JSON request per line on stdin, one JSON answer per line on stdout."""
    import functools

    import problems
    from grader.grade import requirement_results

    resource.setrlimit(resource.RLIMIT_AS, (HELPER_MEMORY_BYTES, HELPER_MEMORY_BYTES))
    load = functools.lru_cache(maxsize=64)(lambda folder: problems.load_problem(Path(folder)))
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            results, broke = requirement_results(load(request["folder"]), request["traces"], request["first_error"])
            answer = {"results": [asdict(r) for r in results], "broke": broke}
        except Exception as exc:  # noqa: BLE001 - reported to the server as the grader's own failure
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()

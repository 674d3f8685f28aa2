"""Requirement checks run in a process of their own, under a time budget.

The checks are the grader's code, but the traced programs they read are the learner's, and a walk that is
fine on ordinary programs can be slow on a pathological one (twenty nested one-step scans cost one data-flow
walk minutes). A pure-Python loop in a thread cannot be interrupted, so the checks of one report run in a
helper process that is killed when ``BUDGET_S`` runs out: the server's own threads only wait, and an overrun
is ``ChecksTooSlow`` (a Time Limit Exceeded verdict that says why), never a hang.

Helpers are plain Python processes of the grader's (trusted code, the server's environment), each serving
one request at a time over its stdin and stdout as JSON lines; idle ones are kept for the next report, so a
report pays for the pipe and the JSON, not for a start. Nothing here is sandboxed: the helper runs no
learner code, only reads the answer the sandbox already bounded (``grader.grading.bounds``).
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from grader.grading.helpers import HelperPool
from grader.records import Evidence, RequirementResult

BUDGET_S = float(os.environ.get("JAXPLAY_CHECK_BUDGET_S", "10"))
"""Wall-clock seconds the checks of one report may take (a normal report takes milliseconds)."""
IDLE_HELPERS = 4
"""Helpers kept waiting for the next report."""
MAX_HELPERS = max(2, os.cpu_count() or 1) + 1
"""Helpers alive at once: the checks are a CPU-bound walk, so more processes than cores only share the same
CPUs; a report that finds them all busy waits for one (outside its ``BUDGET_S``, which starts when a helper
takes it)."""
HELPER_MEMORY_BYTES = 2 << 30
"""The helper's address-space limit: a check that blows up fails there, not in the server."""


class ChecksTooSlow(Exception):
    """The checks of one report did not finish within the budget; the helper was killed."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"the requirement checks took more than {budget_s:g} s")
        self.budget_s = budget_s


class CheckerBroke(RuntimeError):
    """The helper process failed (it died, or answered garbage): the grader's fault, never the learner's."""


_helpers = HelperPool("grader.grading.checker:serve", CheckerBroke, "checking process", idle=IDLE_HELPERS,
                      limit=MAX_HELPERS)
warm_up = _helpers.warm_up
"""Start a helper in the background, so the first report does not wait for one."""
shutdown = _helpers.shutdown
"""Stop the idle helpers."""


def run_checks(problem: Any, traces: list[dict[str, Any]], first_error: dict[str, Any] | None,
               budget_s: float | None = None, source: str = "") -> tuple[list[RequirementResult], bool]:
    """``requirements.requirement_results`` for ``problem`` on the child's ``traces`` and the submitted
    ``source`` (parsed there, never run), in a helper process within ``budget_s`` (default ``BUDGET_S``).
    Raises ``ChecksTooSlow`` or ``CheckerBroke``."""
    budget_s = BUDGET_S if budget_s is None else budget_s
    request = json.dumps({"folder": str(problem.folder), "traces": traces, "first_error": first_error,
                          "source": source}).encode()
    helper = _helpers.take()
    try:
        helper.wait_ready()
        answer = helper.ask(request, time.monotonic() + budget_s)
    except TimeoutError:
        helper.kill()
        raise ChecksTooSlow(budget_s) from None
    except (OSError, ValueError, CheckerBroke) as exc:
        helper.kill()
        raise CheckerBroke(f"the checking process failed ({type(exc).__name__}: {exc})") from None
    _helpers.give_back(helper)
    if "error" in answer:
        raise CheckerBroke(answer["error"])
    results = [RequirementResult(**dict(r, evidence=[Evidence(**e) for e in r["evidence"]]))
               for r in answer["results"]]
    return results, bool(answer["broke"])


def serve() -> None:
    """The helper's loop: one JSON request per line on stdin, one JSON answer per line on stdout."""
    import functools

    import problems
    from grader.grading.requirements import requirement_results

    resource.setrlimit(resource.RLIMIT_AS, (HELPER_MEMORY_BYTES, HELPER_MEMORY_BYTES))
    load = functools.lru_cache(maxsize=64)(lambda folder: problems.load_problem(Path(folder)))
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            results, broke = requirement_results(load(request["folder"]), request["traces"], request["first_error"],
                                                 request.get("source", ""))
            answer = {"results": [asdict(r) for r in results], "broke": broke}
        except Exception as exc:  # noqa: BLE001 - reported to the server as the grader's own failure
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()

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

import dataclasses
import hashlib
import json
import os
import resource
import sys
import threading
import time
from typing import Any

from grader.grading.helpers import AnswerTooLong, HelperPool

ENABLED = os.environ.get("JAXPLAY_VERIFIER", "1") != "0"
"""Whether gradings go through the verifier: the default; ``JAXPLAY_VERIFIER=0`` grades with the child's own
numbers and probes (as before issue 23), which code in the child can forge."""
IDLE_HELPERS = max(2, min(8, os.cpu_count() or 1))
"""Idle helpers kept: one per grading worker a machine usually runs (the pool's size is its cores), so
gradings finishing together do not start a helper, and import JAX, on a learner's clock."""
MAX_HELPERS = int(os.environ.get("JAXPLAY_VERIFIERS", IDLE_HELPERS + 1))
"""Helpers alive at once (``JAXPLAY_VERIFIERS``): one per core and one more, so a program that runs to its
time limit in one of them holds nobody up on a small machine; past that a grading waits for the next free
helper (its wait is the grader's queue, not the learner's clock: the time budget starts when a helper takes the
answer). A class's thirty Runs at once had started thirty helpers, ~250 MB of JAX each, on two cores."""
SPARE_AFTER_S = 3.0
"""The helper past one per core starts only for an answer that has waited this long for a free helper (one of
them is on a long program, up to its time limit): in a class's burst it had started every time (JAX imported
on the class's CPU, a cold cache) only to be stopped once the burst was over; with 1 s it still started once
in most bursts, behind two first compiles."""
LONG_AFTER_S = 2.0
"""A helper's CPU seconds on one answer past which it gives up its place and its priority (``HelperPool``'s
``long_after_s``): a Run's answer takes 0.1-0.4 s of a helper's CPU on a quiet machine, a Pallas kernel's Submit
in TPU interpret mode up to about 2.4 s, so past that it is mostly a loop headed for its time limit."""
HELPER_ADDRESS_SPACE = 8 << 30
"""The helper's address-space limit (XLA reserves much more than it touches, as in the sandbox)."""
ANSWERS_PER_HELPER = 200
"""A helper serves this many answers, then a fresh one takes its place (XLA's caches only grow)."""


MAX_ANSWER_BYTES = 8 << 20
"""The largest answer a helper sends (the outputs, probes and serialised programs of one grading): the same
bound as the child's answer (``Limits.result_bytes``). A larger one is an Output Limit, said by the helper; the
server reads at most this much (and a little more) whatever the helper sends."""
TOO_LARGE = ("Your traced programs and results came to %d MiB as the grader reads them, more than %d MiB. A "
             "sub-program called many times is counted at each call: call it in a `lax.scan` or `lax.fori_loop`, "
             "or return only what the problem asks for.")


class VerifierBroke(RuntimeError):
    """The verifier's process failed: the grader's fault, never the learner's."""


_helpers = HelperPool("grader.verifier.service:serve", VerifierBroke, "verifier's process", idle=IDLE_HELPERS,
                      answers=ANSWERS_PER_HELPER, limit=MAX_HELPERS, spare_after_s=SPARE_AFTER_S,
                      long_after_s=LONG_AFTER_S)
warm_up = _helpers.warm_up
"""Start a helper in the background, so the first answer does not wait for JAX to import."""
shutdown = _helpers.shutdown
"""Stop the idle helpers."""


def verified(job: dict[str, Any], outcome: Any, budget_s: float, memory_bytes: int = 2 << 30) -> Any:
    """``outcome`` (a ``RunOutcome`` of the child's) with its answer replaced by the verifier's: the outputs
    and probes of the rebuilt programs. The run keeps the child's limits: past ``budget_s`` the helper is
    killed and the outcome is a time limit; past ``memory_bytes`` of resident memory (the sandbox's limit for
    the child, which now only traces: the program's arrays are made here) or out of address space, a memory
    limit. Anything but a child's ``ok`` answer passes unchanged."""
    result = outcome.result
    if not isinstance(result, dict) or result.get("status") != "ok":
        return outcome
    request = json.dumps({"job": job, "result": result, "memory_bytes": memory_bytes}).encode()
    helper = _helpers.take(prefer=programs_key(job, result))
    over = threading.Event()
    done = threading.Event()
    try:
        helper.wait_ready()
        _helpers.watch(helper, done, memory_limit=memory_bytes, over=over)
        answer = helper.ask(request, time.monotonic() + budget_s, MAX_ANSWER_BYTES + 1024)
    except AnswerTooLong:
        helper.kill()
        return dataclasses.replace(outcome, result=None, limit="answer",
                                   result_error=f"more than {MAX_ANSWER_BYTES >> 20} MiB from the grader's run")
    except TimeoutError:
        helper.kill()
        return dataclasses.replace(outcome, result=None, limit="memory" if over.is_set() else "time")
    except (OSError, ValueError, VerifierBroke) as exc:
        helper.kill()
        if over.is_set() or helper.proc.returncode is not None and helper.proc.returncode < 0:  # killed, e.g. out of memory
            return dataclasses.replace(outcome, result=None, limit="memory")
        raise VerifierBroke(f"the verifier's process failed ({type(exc).__name__}: {exc})") from None
    finally:
        done.set()
    if over.is_set():  # answered in the instant the watch killed it: the memory was used all the same
        helper.kill()
        return dataclasses.replace(outcome, result=None, limit="memory")
    _helpers.give_back(helper)
    if answer.get("memory_error"):
        return dataclasses.replace(outcome, result=None, limit="memory")
    if "error" in answer:
        raise VerifierBroke(answer["error"])
    return dataclasses.replace(outcome, result=answer["result"])


def programs_key(job: dict[str, Any], result: dict[str, Any]) -> str:
    """Which helper to prefer for this answer: a digest of its traced programs' data and the problem. A helper
    keeps what it compiled and probed (``verify.py``), so the same programs (a class's Runs of one solution,
    a learner's Run again) go back to the helper that has them. Only a choice of helper: a child that forges
    it gets a helper without them, and the same answer."""
    programs = [t.get("program") for t in result.get("traces", []) if isinstance(t, dict)]
    text = json.dumps([job.get("problem"), programs], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def answer_bytes(answer: dict[str, Any]) -> bytes:
    """The helper's answer as one JSON line, bounded here (an answer past ``MAX_ANSWER_BYTES`` is an Output
    Limit's answer instead) and read with the same bound by the server."""
    data = json.dumps(answer).encode()
    if len(data) > MAX_ANSWER_BYTES:
        data = json.dumps({"result": {"status": "output_limit", "message": TOO_LARGE % (
            len(data) >> 20, MAX_ANSWER_BYTES >> 20)}}).encode()
    return data


def serve() -> None:
    """The helper's loop: ``{"job", "result"}`` per line on stdin, ``{"result"}`` per line on stdout."""
    from grader.learner import child
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
            answer = {"result": verify(t, request["job"], request["result"], request.get("memory_bytes"))}
        except MemoryError:
            answer = {"memory_error": True}
        except Exception as exc:  # noqa: BLE001 - reported to the server as the grader's own failure
            answer = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        out.write(answer_bytes(answer) + b"\n")
        out.flush()

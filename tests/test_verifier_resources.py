"""The verifier's resources are the run's resources (issue 29): one time budget for the child and the verifier
together, a program XLA plans too large is a Memory Limit before it runs, the verifier's answer is bounded
where it is written and where it is read (in linear time), and program data the rebuild cannot take is the
learner's runtime error with a sentence, never the grader's internal error."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import time

import pytest

import problems
from grader.grading import helpers, source_policy
from grader.grading.grade import grade
from grader.grading.workers import worker_pool
from grader.sandbox import Limits, RunOutcome
from grader.verifier import service

EMA = problems.get("exponential-moving-average-with-scan")


@pytest.fixture(scope="module")
def pool():
    with worker_pool(size=1, warm=1, warm_up=False) as workers:
        yield workers


@pytest.fixture
def verifier_on(monkeypatch):
    monkeypatch.setattr(service, "ENABLED", True)
    # these submissions patch the payload (sys.modules) to hand the verifier data no trace would: the layers
    # behind the source policy (grader/grading/source_policy.py), which refuses them first, are what is tested
    monkeypatch.setattr(source_policy, "ENABLED", False)


SPIN_THEN_LOOP = """
import time

import jax
import jax.numpy as jnp

_end = time.monotonic() + SPIN
while time.monotonic() < _end:  # the child's time, spent at import
    pass


def ema(x, init, decay):
    # a loop that never ends, handed over to be run by the verifier
    n = jax.lax.while_loop(lambda c: c[0] >= 0.0, lambda c: (c[0] + 1.0, c[1] * decay), (jnp.float32(0.0), init))
    return {"averages": x * n[1], "final": n[1]}
"""


@pytest.mark.slow
def test_the_child_and_the_verifier_share_one_time_limit(pool, verifier_on):
    """A child that spends most of the limit, then hands over an endless loop: the verifier has only what
    is left (before issue 29 it had a second full limit: 57 s for a 30 s limit)."""
    assert grade(EMA, EMA.reference, examples_only=True, run=pool.run).verdict.value == "accepted"  # warm helper
    wall = 8.0
    report = grade(EMA, SPIN_THEN_LOOP.replace("SPIN", "5.0"), examples_only=True, run=pool.run,
                   limits=Limits(wall_s=wall))
    assert report.verdict.value == "time_limit", report.message
    assert report.elapsed_s < wall + 2.5, report.elapsed_s


def test_the_verifier_gets_what_the_child_left_of_the_limit(verifier_on, monkeypatch):
    """What ``grade`` hands the verifier: the limit less the child's own time (at least a moment)."""
    given = []
    monkeypatch.setattr(service, "verified", lambda job, outcome, budget_s, memory_bytes: given.append(budget_s) or outcome)
    outcome = RunOutcome(result={"status": "ok", "cases": [], "traces": []}, elapsed_s=22.0)
    grade(EMA, EMA.reference, examples_only=True, run=lambda job, limits: outcome, limits=Limits(wall_s=30.0))
    assert given == [pytest.approx(8.0)]
    late = dataclasses.replace(outcome, elapsed_s=29.99)
    grade(EMA, EMA.reference, examples_only=True, run=lambda job, limits: late, limits=Limits(wall_s=30.0))
    assert given[-1] == pytest.approx(0.5)


FOUR_TERABYTES = """
import jax.numpy as jnp


def ema(x, init, decay):
    big = jnp.broadcast_to(x.sum() * decay, (1 << 40,))  # 4 TiB of float32, declared, never touched in the child
    return {"averages": x + jnp.cumsum(big)[-1], "final": init}
"""


def test_a_program_planned_past_the_memory_limit_is_a_memory_limit(pool, verifier_on):
    report = grade(EMA, FOUR_TERABYTES, examples_only=True, run=pool.run, limits=Limits(wall_s=120))
    assert report.verdict.value == "memory_limit", (report.verdict, report.message)
    assert "XLA's plan" in report.message


MALFORMED = """
import sys

import jax

payload = sys.modules.get("jaxplay_payload")
if payload is not None:
    encoder = payload._COMPANIONS["program"].ProgramEncoder
    _real = encoder.program

    def _forged(self, closed, _real=_real):
        data = _real(self, closed)
        data["jaxpr"]["eqns"][0]["params"]["extra"] = BAD
        return data

    encoder.program = _forged


def ema(x, init, decay):
    def step(a, row):
        a = decay * a + (1.0 - decay) * row
        return a, a
    final, averages = jax.lax.scan(step, init, x)
    return {"averages": averages, "final": final}
"""


@pytest.mark.parametrize("bad", ['{"frozenset": [{"list": [1, 2]}]}', '{"treedef": {"dict": [[1, "*"], ["1", "*"]]}}'],
                         ids=["frozenset-holding-a-list", "treedef-keys-1-and-'1'"])
def test_data_the_rebuild_cannot_take_is_a_runtime_error_with_a_sentence(pool, verifier_on, bad):
    report = grade(EMA, MALFORMED.replace("BAD", bad), examples_only=True, run=pool.run)
    assert report.verdict.value == "runtime_error", (report.verdict, report.message)
    assert "could not be rebuilt" in report.message or "unknown kind" in report.message, report.message


def test_the_verifier_bounds_its_answer_where_it_writes_it():
    small = service.answer_bytes({"result": {"status": "ok", "cases": []}})
    assert small == b'{"result": {"status": "ok", "cases": []}}'
    huge = service.answer_bytes({"result": {"status": "ok", "text": "x" * (service.MAX_ANSWER_BYTES + 1)}})
    assert len(huge) < 2000 and b'"output_limit"' in huge


def _talker(code: str) -> helpers.Helper:
    """A ``Helper`` whose process runs ``code`` (instead of a grader module's ``serve``)."""
    helper = helpers.Helper.__new__(helpers.Helper)
    helper.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    helper.broke, helper.what, helper.buffer, helper.served, helper.ready = RuntimeError, "test helper", bytearray(), 0, True
    return helper


def test_the_server_reads_a_helper_s_answer_with_a_bound_in_linear_time():
    """200 MB without a line's end: refused at the bound, after reading about the bound, in well under a
    second of work (the old read appended with ``bytes +=`` and searched the whole buffer on every chunk)."""
    helper = _talker("import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.buffer.write(chunk)\n"
                     "sys.stdout.buffer.flush()\n")
    started = time.process_time()
    try:
        with pytest.raises(helpers.AnswerTooLong):
            helper._line(time.monotonic() + 60, 8 << 20)
        assert len(helper.buffer) <= (8 << 20) + (2 << 20)
    finally:
        helper.kill()
    assert time.process_time() - started < 1.0
    helper = _talker("import sys\nsys.stdout.buffer.write(b'x' * (30 << 20) + b'\\n' + b'{\"a\": 1}\\n')\n"
                     "sys.stdout.buffer.flush()\n")
    try:
        started = time.process_time()
        assert len(helper._line(time.monotonic() + 60, 64 << 20)) == 30 << 20
        assert helper._line(time.monotonic() + 60) == b'{"a": 1}'
        assert time.process_time() - started < 1.0
    finally:
        helper.kill()

"""Answers are bounded in keys, nesting, message lengths and traced-program size as well as array elements:
by the child's encoder (``grader/learner/child.py``), and again by the parent on reading (``grader/sandbox/channels.py``
for bytes and values, ``grader/grading/bounds.py`` for what the grader reads), since learner code could send
anything with the run's token. An oversized answer is an Output Limit verdict at a bounded memory cost."""
from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest

import problems
from grader.grading import bounds
from grader.learner import child
from grader.grading.grade import grade
from grader.records import Verdict
from grader.sandbox import Limits
from grader.sandbox.runner import run_job

ROOT = Path(__file__).resolve().parents[1]
LR = problems.get("traced-learning-rate-schedule")
OVERSIZED = ROOT / "tests" / "payloads" / "oversized_answer.py"


class PeakRss:
    """The highest resident memory of this process while the block runs, sampled every few milliseconds."""

    def __enter__(self) -> "PeakRss":
        gc.collect()
        self.start = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(0.002)

    @property
    def grown_mib(self) -> float:
        return (self.peak - self.start) / 2**20


@pytest.mark.slow
def test_300_000_none_keys_are_an_output_limit_at_a_small_memory_cost():
    code = (ROOT / "tests" / "attacks" / "many_none_keys.py").read_text()
    grade(LR, LR.reference, examples_only=True)  # the grader's own imports, out of the measurement
    with PeakRss() as rss:
        report = grade(LR, code, examples_only=True)
    assert report.verdict is Verdict.OUTPUT_LIMIT, report.message
    assert "more than 10000 dictionary entries" in report.message
    assert rss.grown_mib < 30, f"the server grew by {rss.grown_mib:.0f} MiB"


@pytest.mark.parametrize("kind, why", [("bytes", "larger than 8 MiB"), ("values", "more than 500,000 values")])
def test_an_answer_past_the_sandbox_bounds_is_refused_before_it_is_parsed(kind, why):
    with PeakRss() as rss:
        outcome = run_job(OVERSIZED, {"kind": kind}, Limits(wall_s=120))
    assert outcome.limit == "answer" and outcome.result is None
    assert why in outcome.result_error
    assert rss.grown_mib < 40, f"the server grew by {rss.grown_mib:.0f} MiB reading a refused answer"


def test_an_answer_past_the_graders_bounds_is_an_output_limit():
    def hostile(job, limits):
        return run_job(OVERSIZED, {"kind": "items"}, limits)
    report = grade(LR, LR.reference, examples_only=True, run=hostile)
    assert report.verdict is Verdict.OUTPUT_LIMIT, report.message
    assert "more than 10,000 dictionary entries" in report.message


def _case(output=None, **fields):
    return dict({"name": "Example 1", "status": "ok", "output": output or {"t": "none"}}, **fields)


def _nested_program(depth: int) -> dict:
    program = {"eqns": []}
    for _ in range(depth - 1):
        program = {"eqns": [{"primitive": "scan", "subjaxprs": {"jaxpr": program}}]}
    return program


def _nested_tree(depth: int) -> dict:
    tree: object = "*"
    for _ in range(depth):
        tree = {"list": [tree]}
    return tree


@pytest.mark.parametrize("answer, words", [
    ({"cases": [_case({"t": "dict", "v": {"k" * 101: {"t": "none"}}})]}, "key of more than 100"),
    ({"cases": [_case(message="m" * 3000)]}, "case message"),
    ({"cases": [_case(traceback="t" * 20_000)]}, "case traceback"),
    ({"cases": [_case()] * 4}, "more than 3 cases"),
    ({"cases": [_case({"t": "list", "v": [{"t": "none"}] * (child.MAX_OUTPUT_ITEMS + 1)})]},
     "dictionary entries and list items"),
    ({"cases": [_case({"t": "array", "v": [0.0] * (child.MAX_OUTPUT_ELEMENTS + 1)})]}, "array elements"),
    ({"cases": [_case()], "traces": [{"jaxpr": {"eqns": [{"subjaxprs": {}}] * (child.MAX_PROGRAM_EQNS + 1)}}]},
     "equations"),
    ({"cases": [_case()], "traces": [{"jaxpr": _nested_program(33)}]}, "nested more than 32"),
    ({"cases": [_case()], "traces": [{"jaxpr": {"eqns": []}, "text": "x" * (5 << 20)}]}, "printed program"),
    ({"cases": [_case()], "message": "m" * 3000}, "a message of more than"),
    # the output structure the child hands the verifier (boundary/program.py's tree_data) is bounded the same way
    ({"cases": [_case()], "traces": [{"jaxpr": {"eqns": []}, "out_tree": {"dict": [["k%d" % i, {"none": True}]
                                                                              for i in range(child.MAX_OUTPUT_ITEMS + 1)]}}]},
     "dictionary entries and list items"),
    ({"cases": [_case()], "traces": [{"jaxpr": {"eqns": []}, "out_tree": {"dict": [["k" * 101, "*"]]}}]},
     "key of more than 100"),
    ({"cases": [_case()], "traces": [{"jaxpr": {"eqns": []}, "out_tree": _nested_tree(40)}]}, "nested more than 32"),
])
def test_the_parent_checks_every_bound_again(answer, words):
    assert words in (bounds.answer_problem(dict({"status": "ok", "traces": []}, **answer), 3) or "")


def test_a_right_answer_is_within_every_bound():
    report = grade(LR, LR.reference)
    assert report.verdict is Verdict.ACCEPTED, report.message


@pytest.mark.parametrize("code, words", [
    ("def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):\n"
     "    return {'k' * 101: base_lr}\n", "key of 101 characters"),
    ("import jax.numpy as jnp\n"
     "def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):\n"
     "    x = jnp.asarray(step, jnp.float32)\n"
     "    for _ in range(%d):\n"
     "        x = x * 1.0001 + 1.0\n"
     "    return x * 0.0 + base_lr\n" % (child.MAX_PROGRAM_EQNS // 2), "use `lax.scan`"),
    ("import jax, jax.numpy as jnp\n"
     "def learning_rate(step, base_lr, min_lr, warmup_steps, total_steps):\n"
     "    def nest(c, depth):\n"
     "        if depth == 0:\n"
     "            return c + 1.0\n"
     "        return jax.lax.scan(lambda carry, _: (nest(carry, depth - 1), None), c, None, length=1)[0]\n"
     "    return nest(jnp.asarray(base_lr), 40)\n", "nested more than 32 deep"),
])
def test_the_childs_encoder_stops_an_oversized_answer(code, words):
    report = grade(LR, code, examples_only=True)
    assert report.verdict is Verdict.OUTPUT_LIMIT, report.message
    assert words in report.message

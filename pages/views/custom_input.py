"""Custom input: run the learner's code and the reference on one edited example, side by side.

Both run in child processes through the same runner as grading, with the job format of
``grader.grading.grade.build_job`` holding one case; outputs come back in the child's tagged encoding and are
compared leaf by leaf with ``grader.grading.compare.compare`` (the reference's output standing in for "expected").
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from grader.grading.compare import compare, decode, to_expected
from grader.grading.grade import PER_CASE_S, RUN_BASE_S, Runner, job_for
from grader.records import LeafResult, learner
from grader.sandbox import Limits
from grader.sandbox import refusal
from problems import Problem

MAX_JSON_CHARS = 50_000
CASE = "Custom input"


@dataclass
class Side:
    """What one program (yours or the reference) did on the custom input."""

    ok: bool
    output: Any = None
    """Decoded output (plain nested data) when ``ok``."""
    message: str = ""
    stdout: str = ""
    stderr: str = ""
    traceback: str = ""
    raw: dict[str, Any] | None = None


@dataclass
class CustomResult:
    inputs: dict[str, Any]
    yours: Side
    reference: Side
    leaves: list[LeafResult]
    matches: bool


def parse_inputs(problem: Problem, text: str) -> dict[str, Any]:
    """The JSON object of arguments, checked against the problem's argument list; ValueError says why."""
    if len(text) > MAX_JSON_CHARS:
        raise ValueError(f"The input is longer than {MAX_JSON_CHARS:,} characters; keep custom cases small.")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    if not isinstance(value, dict):
        raise ValueError("The input must be a JSON object with one key per argument.")
    names = [a.name for a in problem.args]
    missing = [n for n in names if n not in value]
    extra = [k for k in value if k not in names]
    if missing or extra:
        bits = ([f"missing {', '.join(missing)}"] if missing else []) + \
               ([f"unknown {', '.join(extra)}"] if extra else [])
        raise ValueError(f"Arguments must be exactly {', '.join(names)}: {'; '.join(bits)}.")
    for arg in problem.args:
        v = value[arg.name]
        if arg.kind in ("int", "key") and (not isinstance(v, int) or isinstance(v, bool)):
            raise ValueError(f"`{arg.name}` must be a whole number" + (" (a PRNG seed)." if arg.kind == "key" else "."))
        if arg.kind == "ints" and (not isinstance(v, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                                      for i in v)):
            raise ValueError(f"`{arg.name}` must be a list of whole numbers ({arg.description}).")
        if arg.kind == "float" and (not isinstance(v, (int, float)) or isinstance(v, bool)):
            raise ValueError(f"`{arg.name}` must be a number.")
        if arg.kind in ("float32_tree", "tree"):
            shapes = {type(ex.inputs[arg.name]) for ex in problem.examples} & {dict, list}
            if shapes == {dict} and not isinstance(v, dict):
                raise ValueError(f"`{arg.name}` must be an object ({arg.description}).")
            if shapes == {list} and not isinstance(v, list):
                raise ValueError(f"`{arg.name}` must be a list ({arg.description}).")
            if not isinstance(v, (dict, list)):
                raise ValueError(f"`{arg.name}` must be an object or a list of arrays ({arg.description}).")
        if arg.kind in ("float32", "array") and not isinstance(v, (list, int, float, bool)):
            raise ValueError(f"`{arg.name}` must be a number or nested list of numbers ({arg.description}).")
    return value


def _side(problem: Problem, code: str, inputs: dict[str, Any], run: Runner, limits: Limits) -> Side:
    refused = refusal()  # as grade() does: code never runs where the required sandbox layers are missing
    if refused:
        return Side(ok=False, message=refused)
    outcome = run(job_for(problem, code, [(CASE, inputs)]), limits)
    side = Side(ok=False, stdout=outcome.stdout, stderr=outcome.stderr)
    result = outcome.result
    if outcome.limit:
        side.message = f"Stopped: {outcome.limit} limit exceeded."
    elif result is None:
        side.message = (learner(outcome.result_error) if outcome.result_error else
                        f"The program exited (status {outcome.exit_code}) without a result.")
    elif result.get("status") != "ok":
        side.message = learner(result.get("message", result.get("status", "error")))
        side.traceback = result.get("traceback", "")
    else:
        case = result["cases"][0]
        if case.get("status") != "ok":
            side.message, side.traceback = learner(case.get("message", "error")), case.get("traceback", "")
        else:
            side.ok, side.raw, side.output = True, case["output"], decode(case["output"])
    return side


ONE_CASE = Limits(wall_s=RUN_BASE_S + PER_CASE_S)
"""The app's limits for one custom case on a warm worker (a Run's base and one case's second)."""


def run_custom(problem: Problem, code: str, inputs: dict[str, Any], run: Runner,
               limits: Limits = Limits()) -> CustomResult:
    """Run the learner's code and the reference on ``inputs``; compare where both produced an output."""
    yours = _side(problem, code, inputs, run, limits)
    reference = _side(problem, problem.reference, inputs, run, limits)
    leaves: list[LeafResult] = []
    matches = False
    if yours.ok and reference.ok:
        matches, _, leaves = compare(to_expected(reference.raw), yours.raw, **problem.tolerance)
    return CustomResult(inputs=inputs, yours=yours, reference=reference, leaves=leaves, matches=matches)


def compact_json(value: Any, indent: str = "") -> str:
    """JSON with one row of numbers per line: an innermost list on one line, the lists and dicts that hold them
    one entry per line (``json.dumps(indent=1)`` puts every number on a line of its own)."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k))}: {compact_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, (list, tuple)):
        if all(not isinstance(v, (list, tuple, dict)) for v in value):
            return json.dumps(list(value), separators=(", ", ": "))
        return "[\n" + ",\n".join(inner + compact_json(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)

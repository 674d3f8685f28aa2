"""Every requirement's result on a submission's traced programs: what the checker's helper process
runs (``checker.py``), apart from ``grade.py`` so that the helper imports no ``workers``."""
from __future__ import annotations

import re
from typing import Any

from grader.records import RequirementResult, learner
from grader.toolkit.jaxpr_tools import Trace
from grader.toolkit.source import read as read_source
from problems import Problem


def requirement_results(problem: Problem, traces: list[dict[str, Any]], first_error: dict[str, Any] | None,
                        source: str = "") -> tuple[list[RequirementResult], bool]:
    """Every requirement's result on the traced programs (the verifier's rebuild) and the submitted ``source``
    (parsed here, never run: ``grader/toolkit/source.py``), and whether a check itself broke. Runs in the
    checking process (``checker.py``), never in the server's threads."""
    facts = read_source(source)
    traced = [Trace(args=t["args"], jaxpr=_quotable_jaxpr(t["jaxpr"]),
                    input_names=t.get("input_names", []), case=t.get("case", ""),
                    output_names=[quotable(n) for n in t.get("output_names", [])], probes=t.get("probes") or {},
                    step_reads=t.get("step_reads") or {}, source=facts, tpu=t.get("tpu"),
                    experiments=t.get("experiments") or {}, partitioned=t.get("partitioned"))
              for t in traces]
    for trace in traced:
        trace.siblings = traced  # every traced program of the submission (does a program grow with a shape?)
    results, grader_broke = [], False
    for req in problem.requirements:
        rr, broke = _check_requirement(problem, req, traced, first_error)
        rr.advice = bool(getattr(req, "advice", False))
        results.append(rr)
        grader_broke |= broke
    return results, grader_broke


_UNQUOTABLE = re.compile(r"[`\x00-\x1f\x7f]")


def quotable(text: str, limit: int = 100) -> str:
    """A name the learner chose (an output key, a primitive or policy of their own, a scope name), safe to
    quote inside a grader message's code span: no backtick to end the span early, no control characters."""
    return _UNQUOTABLE.sub("?", str(text))[:limit]


def _quotable_jaxpr(jaxpr: dict[str, Any]) -> dict[str, Any]:
    """The traced program with every learner-chosen name checks may quote made ``quotable`` (in place; one
    pass over the program): a foreign primitive's name and a custom policy's name."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.get("eqns", []):
            if eqn["primitive"].startswith("foreign:"):
                eqn["primitive"] = "foreign:" + quotable(eqn["primitive"][8:], 60)
            policy = eqn["params"].get("policy")
            if isinstance(policy, str) and policy.startswith("custom:"):
                eqn["params"]["policy"] = "custom:" + quotable(policy[7:], 60)
            stack.extend(eqn["subjaxprs"].values())
    return jaxpr


def _check_requirement(problem: Problem, req: Any, traces: list[Trace],
                       first_error: dict[str, Any] | None) -> tuple[RequirementResult, bool]:
    if not traces:
        why = first_error.get("message", "error") if first_error else "no case could be traced"
        return RequirementResult(req.id, req.text, False, f"Not checked: your function could not be traced ({why})."), False
    check = problem.checks.get(req.id)
    if check is None:
        return RequirementResult(req.id, req.text, False, "Not checked: the grader has no check for this "
                                 "requirement (a grader bug, not your fault)."), True
    try:
        results = [check(t) for t in traces]
    except Exception as exc:  # noqa: BLE001 - a crashing check is our bug, reported as ours
        return RequirementResult(req.id, req.text, False, f"Not checked: the grader's check failed "
                                 f"({learner(f'{type(exc).__name__}: {exc}')}); this is not your fault."), True
    failing = [(t, r) for t, r in zip(traces, results) if not r.passed]
    first = results[0]
    if not failing and first_error is not None:
        return RequirementResult(req.id, req.text, False, f"Not checked on every case: {first_error['name']} "
                                 f"raised ({first_error.get('message', 'error')}). On the cases "
                                 f"that traced: {first.message}", first.evidence), False
    unchecked = next((r for r in results if not r.checked), None)
    if unchecked is not None and all(r.passed or not r.checked for r in results):  # could not be checked here
        return RequirementResult(req.id, req.text, False, unchecked.message, unchecked.evidence, checked=False), False
    if not failing:
        return RequirementResult(req.id, req.text, True, first.message, first.evidence), False
    trace, res = failing[0]
    where = "" if trace is traces[0] else f"On {trace.case} ({_shape_note(trace)}): "
    evidence = res.evidence if trace is traces[0] else first.evidence
    return RequirementResult(req.id, req.text, False, where + res.message, evidence), False


def _shape_note(trace: Trace) -> str:
    bits = []
    for name, v in trace.args.items():
        if isinstance(v, int):
            bits.append(f"{name}={v}")
        elif isinstance(v, list):
            bits.append(f"{name}{tuple(v)}")
    return ", ".join(bits)

"""What the grader reads of a child's answer: the bounds ``child.py`` keeps, checked again on reading.

The child caps what it sends (outputs, keys, messages, traced programs), but learner code runs in the same
interpreter and could send anything with the run's token, so the parent checks the answer's shape and
sizes before comparing outputs or running requirement checks on it. The sandbox has already bounded the
answer's bytes and values (``grader.sandbox.channels``), so this walk is cheap.
"""
from __future__ import annotations

from typing import Any

from grader.learner import child

MESSAGE_CHARS = 2_000
"""A case's or the answer's message (the child cuts exception messages to 300 characters)."""
TRACEBACK_CHARS = 10_000
JAXPR_TEXT_CHARS = 4 << 20
NAME_CHARS = 200


def answer_problem(result: dict[str, Any], case_count: int) -> str | None:
    """Why ``result`` is larger or deeper than the grader reads (a short phrase), or None when it is not."""
    for key, cap in (("message", MESSAGE_CHARS), ("traceback", TRACEBACK_CHARS)):
        if len(str(result.get(key, ""))) > cap:
            return f"a {key} of more than {cap:,} characters"
    cases, traces = result.get("cases", []), result.get("traces", [])
    if not isinstance(cases, list) or not isinstance(traces, list):
        return "cases or traces that are not lists"
    if len(cases) > case_count or len(traces) > case_count:
        return f"more than {case_count} cases or traced programs"
    items = elements = equations = 0
    for case in cases:
        if not isinstance(case, dict):
            return "a case that is not an object"
        for key, cap in (("name", NAME_CHARS), ("message", MESSAGE_CHARS), ("traceback", TRACEBACK_CHARS)):
            if len(str(case.get(key, ""))) > cap:
                return f"a case {key} of more than {cap:,} characters"
        problem, case_items, case_elements = _output_size(case.get("output"))
        if problem:
            return problem
        items, elements = items + case_items, elements + case_elements
    if items > child.MAX_OUTPUT_ITEMS:
        return f"more than {child.MAX_OUTPUT_ITEMS:,} dictionary entries and list items in the outputs"
    if elements > child.MAX_OUTPUT_ELEMENTS:
        return f"more than {child.MAX_OUTPUT_ELEMENTS:,} array elements in the outputs"
    for trace in traces:
        if not isinstance(trace, dict) or not isinstance(trace.get("jaxpr"), dict):
            return "a traced program that is not an object"
        if len(str(trace.get("text", ""))) > JAXPR_TEXT_CHARS:
            return f"a printed program of more than {JAXPR_TEXT_CHARS:,} characters"
        problem, count = _program_size(trace["jaxpr"])
        if problem:
            return problem
        equations += count
        problem, tree_items = _tree_size(trace.get("out_tree"))
        if problem:
            return problem
        items += tree_items
        if items > child.MAX_OUTPUT_ITEMS:
            return f"more than {child.MAX_OUTPUT_ITEMS:,} dictionary entries and list items in the outputs"
    if equations > child.MAX_PROGRAM_EQNS:
        return f"traced programs of more than {child.MAX_PROGRAM_EQNS:,} equations"
    return None


def _output_size(output: Any) -> tuple[str | None, int, int]:
    """(problem, dictionary entries and list items, array elements) of one encoded output."""
    items = elements = 0
    stack = [(output, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > child.MAX_DEPTH + 1:
            return f"outputs nested more than {child.MAX_DEPTH} deep", 0, 0
        if not isinstance(node, dict):
            continue
        kind, value = node.get("t"), node.get("v")
        if kind == "dict" and isinstance(value, dict):
            items += len(value)
            if any(len(k) > child.MAX_KEY_CHARS for k in value):
                return f"a key of more than {child.MAX_KEY_CHARS} characters", 0, 0
            stack.extend((v, depth + 1) for v in value.values())
        elif kind in ("list", "tuple") and isinstance(value, list):
            items += len(value)
            stack.extend((v, depth + 1) for v in value)
        elif kind == "array":
            elements += _leaf_count(value)
        if items > child.MAX_OUTPUT_ITEMS:
            break
    return None, items, elements


def _tree_size(tree: Any) -> tuple[str | None, int]:
    """(problem, dictionary entries and list items) of one output structure as the child handed it over for
    the verifier (``boundary/program.py``'s ``tree_data``)."""
    items, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        if depth > child.MAX_DEPTH:
            return f"outputs nested more than {child.MAX_DEPTH} deep", 0
        for kind, body in node.items():
            if not isinstance(body, list):
                continue
            items += len(body)
            if kind == "dict":
                pairs = [p for p in body if isinstance(p, list) and len(p) == 2]
                if any(len(str(k)) > child.MAX_KEY_CHARS for k, _ in pairs):
                    return f"a key of more than {child.MAX_KEY_CHARS} characters", 0
                stack.extend((v, depth + 1) for _, v in pairs)
            else:
                stack.extend((v, depth + 1) for v in body)
        if items > child.MAX_OUTPUT_ITEMS:
            break
    return None, items


def _leaf_count(value: Any) -> int:
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif node is not None:
            count += 1
    return count


def _program_size(jaxpr: dict[str, Any]) -> tuple[str | None, int]:
    """(problem, equations) of one traced program as the child serialised it."""
    count, stack = 0, [(jaxpr, 1)]
    while stack:
        j, depth = stack.pop()
        if depth > child.MAX_PROGRAM_DEPTH:
            return f"traced programs nested more than {child.MAX_PROGRAM_DEPTH} deep", 0
        eqns = j.get("eqns", []) if isinstance(j, dict) else []
        if not isinstance(eqns, list):
            return "a traced program whose equations are not a list", 0
        count += len(eqns)
        if count > child.MAX_PROGRAM_EQNS:
            break
        for eqn in eqns:
            subs = eqn.get("subjaxprs", {}) if isinstance(eqn, dict) else {}
            if isinstance(subs, dict):
                stack.extend((sub, depth + 1) for sub in subs.values())
    return None, count

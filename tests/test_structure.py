"""The region tree of a traced program (``grader/toolkit/structure.py``) and where evidence sits in it."""
from __future__ import annotations

import pytest

from grader.toolkit import structure
from grader.grading.grade import grade
from grader.records import Report
from grader.grading.workers import run_job

import problems


def eqn(prim: str, stack: str = "", subs: dict | None = None, **params) -> dict:
    return {"primitive": prim, "name_stack": stack, "params": params, "subjaxprs": subs or {}, "invars": [],
            "outvars": [], "line": None, "source_line": None}


def prog(*eqns: dict) -> dict:
    return {"invars": [], "outvars": [], "constvars": [], "eqns": list(eqns)}


def kinds(region) -> list:
    return [(c.kind, [k for k in kinds(c)]) if c.children else c.kind for c in region.children]


def test_grad_inside_a_scan_is_a_scan_holding_a_forward_and_a_backward_pass():
    body = prog(eqn("dot_general", "jvp(loss)"), eqn("tanh", "jvp(loss)"), eqn("mul", "transpose(jvp(loss))"),
                eqn("dot_general", "transpose(jvp(loss))"), eqn("add"))
    root = structure.build(prog(eqn("reshape"), eqn("scan", subs={"jaxpr": body}, length=4, reverse=True)))
    assert kinds(root) == [("scan", ["forward", "backward"])]
    scan = root.children[0]
    assert scan.label == "scan · length 4 · reverse" and scan.eqns == 1 and root.eqns == 1
    forward, backward = scan.children
    assert (forward.span, backward.span) == (2, 2) and forward.primitives[0] in ("dot_general", "tanh")
    assert [r.label for r in structure.locate(root, "1/jaxpr/3")][-1] == "backward pass (transpose)"
    assert [r.kind for r in structure.locate(root, "1")] == ["program", "scan"]
    assert [r.kind for r in structure.locate(root, "0")] == ["program"]


def test_a_checkpoint_outside_grad_sits_in_both_passes_and_inside_grad_holds_them():
    inner = prog(eqn("tanh"))
    outside = structure.build(prog(eqn("remat2", "jvp(f)", {"jaxpr": inner}, policy="dots_saveable"),
                                   eqn("remat2", "transpose(jvp(f))", {"jaxpr": inner})))
    assert kinds(outside) == [("forward", ["checkpoint"]), ("backward", ["checkpoint"])]
    inside = structure.build(prog(eqn("remat2", "", {"jaxpr": prog(eqn("sin", "jvp(f)"), eqn("cos", "transpose(jvp(f))"))})))
    assert kinds(inside) == [("checkpoint", ["forward", "backward"])]


def test_cond_branches_and_while_parts_are_regions_and_names_carry_no_markup():
    cond = eqn("cond", subs={"branches[0]": prog(eqn("sin")), "branches[1]": prog(eqn("cos"))})
    loop = eqn("while", subs={"cond_jaxpr": prog(eqn("lt")), "body_jaxpr": prog(eqn("add"))})
    jit = eqn("pjit", "vmap(g)", {"jaxpr": prog(eqn("exp"))}, name='<img src=x onerror="alert(1)">')
    root = structure.build(prog(cond, loop, jit))
    assert [c.label for c in root.children[0].children] == ["branch 0", "branch 1"]
    assert [c.label for c in root.children[1].children] == ["condition", "body"]
    assert [r.kind for r in structure.locate(root, "0/branches[1]/0")] == ["program", "cond", "part"]
    vmapped = root.children[2]
    assert vmapped.kind == "vmap" and vmapped.children[0].label == "jit · imgsrcxonerroralert1"


def test_a_deeply_nested_program_is_capped_and_still_counted():
    body = prog(eqn("add"))
    for _ in range(400):
        body = prog(eqn("scan", subs={"jaxpr": body}, length=1))
    root = structure.build(body, max_regions=50)
    depth, region = 0, root
    while region.children:
        region, depth = region.children[0], depth + 1
    assert depth == 50 and region.eqns == 351  # 350 scans below the cap and the add


@pytest.mark.slow
def test_graded_report_carries_the_structure_and_it_survives_json():
    problem = problems.get("gradient-accumulation-with-scan")
    report = grade(problem, problem.reference, examples_only=True, run=run_job)
    assert [c.kind for c in report.structure.children] == ["scan"]
    assert {c.kind for c in report.structure.children[0].children} == {"forward", "backward"}
    again = Report.from_json(report.to_json(marks=True))
    assert again.structure == report.structure and again.requirements == report.requirements
    assert again.cases == report.cases and again.verdict is report.verdict

"""The trusted programs' plans shipped with the problems (issue 32): each is for the code, sizes and releases
of this checkout (else the Cost tab would compile them again on every server, minutes on a TPU target), one is
compiled again here and matches figure for figure, and a measurement uses them instead of compiling."""
from __future__ import annotations

import json

import pytest

import problems
from grader.cost import plans
from grader.cost.measure import measure_cost, measure_trusted
from grader.cost.targets import tpu_extra

INSTALLED, WHY = tpu_extra()
needs_tpu = pytest.mark.skipif(not INSTALLED, reason=f"the TPU extra is not installed: {WHY}")
WITH_INSIGHT = sorted(s for s, p in problems.registry().items() if p.insight is not None)
TARGET = "tpu-v5e"


def _current_key(problem) -> str:
    insight = problem.insight
    at = insight.sizes_for(False)
    sweep = insight.sweep.points(at, False) if insight.sweep is not None else None
    codes = {p.file: insight.code(p.name) for p in insight.programs_for("tpu")}
    return plans.plan_key(problem, TARGET, codes, at, sweep)


@needs_tpu
@pytest.mark.parametrize("slug", WITH_INSIGHT)
def test_every_problem_ships_a_tpu_plan_for_this_code_and_these_releases(slug):
    problem = problems.get(slug)
    path = plans.path_for(problem, TARGET)
    assert path.exists(), f"no plan: python benchmarks/plans.py {slug}"
    data = json.loads(path.read_text())
    assert data["key"] == _current_key(problem), (
        f"the shipped plan is stale (a reference, a baseline, a size or a release changed): "
        f"python benchmarks/plans.py {slug}")
    shipped = plans.load(problem, TARGET, data["key"])
    assert shipped and all(c.ok for c in shipped.values())


@needs_tpu
def test_a_shipped_plan_is_what_the_compiler_plans_now():
    """The cheapest problem's trusted programs compiled again: every figure but the compile time the same."""
    problem = problems.get("int8-matmul-with-per-channel-scales")
    key, figures = measure_trusted(problem, TARGET)
    assert not isinstance(figures, str), figures
    shipped = plans.load(problem, TARGET, key)
    assert shipped is not None, "stale or missing: python benchmarks/plans.py"
    assert set(shipped) == set(figures)
    for k, cost in figures.items():
        assert plans.comparable(cost) == plans.comparable(shipped[k]), k


@needs_tpu
def test_a_measurement_compiles_only_the_learners_programs_when_a_plan_is_shipped(tmp_path):
    problem = problems.get("int8-matmul-with-per-channel-scales")
    report = measure_cost(problem, problem.reference, target=TARGET, cache=True)
    assert report.ok, report.error
    jobs = {j["job"]: j for j in report.jobs}
    assert jobs["trusted"].get("shipped") is True and jobs["learner"]["programs"] >= 1
    ref = report.program("reference")
    mine = report.program("learner")
    assert ref.peak_bytes == mine.peak_bytes and ref.flops == mine.flops  # the reference as the learner's code


def test_a_plan_for_other_code_is_never_used(tmp_path, monkeypatch):
    """A key that does not match (a changed reference, another release) leaves the plan unused."""
    problem = problems.get("int8-matmul-with-per-channel-scales")
    path = plans.path_for(problem, TARGET)
    if not path.exists():
        pytest.fail("no plan shipped: python benchmarks/plans.py int8-matmul-with-per-channel-scales")
    key = json.loads(path.read_text())["key"]
    assert plans.load(problem, TARGET, key) is not None
    assert plans.load(problem, TARGET, "0" * 64) is None
    monkeypatch.setattr(plans, "versions", lambda target: {"jax": "0.0.0"})
    insight = problem.insight
    at = insight.sizes_for(False)
    codes = {p.file: insight.code(p.name) for p in insight.programs_for("tpu")}
    assert plans.plan_key(problem, TARGET, codes, at, None) != key
    codes[next(iter(codes))] += "\n# changed\n"
    monkeypatch.undo()
    assert plans.plan_key(problem, TARGET, codes, at, None) != key

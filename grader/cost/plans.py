"""The trusted programs' plans, shipped with each problem (issue 32).

The reference's, the baseline's and the compared programs' figures are the same for every learner: for a TPU
target they are the TPU compiler's plan for one chip at the problem's declared size, which needs no TPU and
does not depend on the server's CPU. ``benchmarks/plans.py`` compiles them once and writes
``problems/<slug>/plans/<target>.json``; a measurement then compiles only the learner's programs (the TPU
plan of remat's six stacked programs took minutes on a busy server).

A plan is used only when its ``key`` matches: the problem's entry and arguments, the trusted programs' code,
the sizes and sweep points, the target, and the jax, jaxlib and libtpu releases (``plan_key``). A change to
any of these makes the shipped plan unused (the server measures and keeps its own, as before), and
``tests/test_cost_plans.py`` fails until the plans are written again; it also recompiles one and compares.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from grader.cost.records import ProgramCost, Residual
from problems import Problem

FOLDER = "plans"
VOLATILE = ("compile_s",)
"""Fields that say how long this machine took, not what was planned: not compared, not part of a plan."""


def versions(target: str) -> dict[str, str]:
    """The releases a plan depends on (read from the installed packages' metadata, nothing imported)."""
    names = ("jax", "jaxlib") + (("libtpu",) if target != "cpu" else ())
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def plan_key(problem: Problem, target: str, codes: dict[str, str], at: dict[str, int],
             sweep_values: list[int] | None) -> str:
    """What a plan's figures depend on, hashed."""
    insight = problem.insight
    assert insight is not None
    text = json.dumps({"slug": problem.slug, "entry": problem.entry, "args": [asdict(a) for a in problem.args],
                       "codes": sorted(codes.items()), "at": sorted(at.items()), "sweep": sweep_values,
                       "shapes": insight.shapes, "residuals": insight.residuals,
                       "all_devices": insight.tpu_all_devices, "target": target, "versions": versions(target)},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def path_for(problem: Problem, target: str) -> Path:
    return problem.folder / FOLDER / f"{target}.json"


def _sizes_key(sizes: Any) -> tuple:
    return tuple((str(k), int(v)) for k, v in sizes)


def load(problem: Problem, target: str, key: str) -> dict[tuple, ProgramCost] | None:
    """The shipped figures by (program, sizes), or None when there are none or they are for other code,
    sizes or releases."""
    path = path_for(problem, target)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    known = {f.name for f in fields(ProgramCost)}
    out: dict[tuple, ProgramCost] = {}
    try:
        for entry in data["programs"]:
            figures = {k: v for k, v in entry["figures"].items() if k in known and k != "residuals"}
            cost = ProgramCost(**figures)
            cost.residuals = [Residual(**r) for r in entry["figures"].get("residuals", [])]
            out[(entry["program"], _sizes_key(entry["sizes"]))] = cost
    except (KeyError, TypeError, ValueError):
        return None
    return out


def dump(problem: Problem, target: str, key: str, figures: dict[tuple, ProgramCost]) -> dict[str, Any]:
    """A plan as its JSON holds it."""
    programs = []
    for (program, sizes), cost in figures.items():
        data = {k: v for k, v in asdict(cost).items() if k not in VOLATILE}
        programs.append({"program": program, "sizes": [list(s) for s in sizes], "figures": data})
    return {"problem": problem.slug, "target": target, "key": key, "versions": versions(target),
            "written_by": "python benchmarks/plans.py", "programs": programs}


def comparable(cost: ProgramCost) -> dict[str, Any]:
    """A program's figures without what varies from compile to compile (its time)."""
    return {k: v for k, v in asdict(cost).items() if k not in VOLATILE}

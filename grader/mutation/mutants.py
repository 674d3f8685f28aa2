"""Grade the catalogue's mutants of a problem's reference (``grader/mutation/mutate.py``) on its hidden cases.

A mutant *survives* when it returns what the reference returns on every hidden case (within the problem's
tolerances): a learner who made that mistake would be accepted. Every survivor must be killed by a hidden case
added to the problem's ``cases.py``, or listed, with the reason it computes the same function, in
``problems/<slug>/equivalent_mutants.json``::

    [{"key": "dtype@8:40-8:51#bfloat16", "description": "...", "reason": "..."}]

(``key`` as ``python -m grader mutants SLUG`` prints it; ``description`` is for the reader). A listed mutant
that a case kills, or a key the catalogue no longer makes, is reported too (``stale``): the list must stay
true. Mutants run like submissions, on a warm pool, with no counterfactual probes and no requirement checks:
only the outputs count.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Callable

import problems
from grader.grading.compare import compare
from grader.grading.grade import _shape_key, job_for
from grader.mutation.mutate import Mutant, mutants
from grader.sandbox import Limits, RunOutcome
from grader.sandbox.outcome import LOST_STATUS

KILLED, SURVIVED, EQUIVALENT, STALE, ERROR = "killed", "survived", "equivalent", "stale", "error"
GRADER_FAILURES = (LOST_STATUS, "sandbox_unavailable", "tampered")
"""Statuses that say nothing about the mutant (the worker was lost, the sandbox is off): never a kill."""


class GraderFailed(RuntimeError):
    """The run could not tell whether the mutant differs."""
MUTANT_WALL_S = 60.0
"""A mutant's time limit (all hidden cases, compiles included; a slow mutant is killed by it)."""


@dataclass
class MutantResult:
    problem: str
    id: str
    key: str
    operator: str
    description: str
    line: int
    """The reference's line the change is on."""
    verdict: str
    """``killed``, ``survived``, ``equivalent`` (listed and surviving), ``stale`` (listed but killed, or
    listed and no longer made) or ``error`` (the grader could not run it: never counted as a kill)."""
    detail: str = ""
    """What killed it (the first failing case and why), or the listed reason it is equivalent."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def equivalents(problem: problems.Problem) -> dict[str, str]:
    """The problem's listed equivalent mutants: key -> reason."""
    path = problem.folder / "equivalent_mutants.json"
    if not path.exists():
        return {}
    return {e["key"]: e["reason"] for e in json.loads(path.read_text())}


def killed_by(problem: problems.Problem, outcome: RunOutcome, cases: list[problems.Case]) -> str:
    """Why the mutant's run on ``cases`` differs from the reference ('' when it does not)."""
    result = outcome.result
    if outcome.limit:
        return f"{outcome.limit} limit"
    if result and result.get("status") in GRADER_FAILURES:
        raise GraderFailed(f"{result.get('status')}: {str(result.get('message', ''))[:160]}")
    if not result or result.get("status") != "ok":
        return f"run failed: {(result or {}).get('status', 'no result')}"
    got = {c["name"]: c for c in result.get("cases", [])}
    for case in cases:
        c = got.get(case.name)
        if c is None or c.get("status") != "ok":
            return f"{case.name}: {'not run' if c is None else str(c.get('message', 'error'))[:120]}"
        passed, message, _ = compare(case.expected, c["output"], **problem.tolerance)
        if not passed:
            return f"{case.name}: {message[:160]}"
    return ""


def first_shape(problem: problems.Problem) -> tuple[list[problems.Case], list[problems.Case]]:
    """The hidden cases split in two runs: those of the first case's traced program (its shapes and static
    values), then the rest."""
    key = _shape_key(problem, problem.hidden[0].inputs)
    first = [c for c in problem.hidden if _shape_key(problem, c.inputs) == key]
    return first, [c for c in problem.hidden if c not in first]


Runner = Callable[[dict[str, Any], Limits], RunOutcome]


def run_mutants(chosen: list[problems.Problem], run: Runner, *, threads: int = 2,
                select: Callable[[Mutant], bool] = lambda m: True, source: str | None = None,
                run_equivalents: bool = True) -> list[MutantResult]:
    """Every mutant of every problem in ``chosen`` graded on its hidden cases (``threads`` at once on
    ``run``), and every stale equivalence entry. ``source`` (one problem only) mutates another right answer
    than the reference, such as a gallery file in a style the reference does not use; the equivalence list
    is the reference's, so its entries are not checked then. Without ``run_equivalents`` the listed
    equivalents are not graded (they are the costly ones: a survivor runs every hidden shape), only checked
    to be still made; the full check, that each still survives, is the command's."""
    assert source is None or len(chosen) == 1, "another source is one problem's"
    work: list[tuple[problems.Problem, Mutant]] = []
    for problem in chosen:
        work += [(problem, m) for m in mutants(source or problem.reference) if select(m)]

    def one(item: tuple[problems.Problem, Mutant]) -> MutantResult:
        problem, m = item
        listed = equivalents(problem).get(m.key) if source is None else None
        if listed is not None and not run_equivalents:
            return MutantResult(problem.slug, m.id, m.key, m.operator, m.description, m.line, EQUIVALENT,
                                f"{listed} (listed; not graded in this run)")
        why = ""
        try:
            for cases in first_shape(problem):  # most mutants die on the first shape: one compile, not several
                job = job_for(problem, m.source, [(c.name, c.inputs) for c in cases])
                job["probe_cases"] = []
                why = killed_by(problem, run(job, Limits(wall_s=MUTANT_WALL_S)), cases)
                if why:
                    break
        except (GraderFailed, RuntimeError) as exc:  # the pool's failures included: not a kill
            return MutantResult(problem.slug, m.id, m.key, m.operator, m.description, m.line, ERROR,
                                f"the grader could not run it: {exc}")
        if listed is not None:
            verdict, detail = (STALE, f"listed as equivalent but killed ({why})") if why else (EQUIVALENT, listed)
        else:
            verdict, detail = (KILLED, why) if why else (SURVIVED, "passes every hidden case")
        return MutantResult(problem.slug, m.id, m.key, m.operator, m.description, m.line, verdict, detail)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        results = list(pool.map(one, work))
    for problem in chosen if source is None else []:  # listed keys the catalogue no longer makes
        made = {m.key for m in mutants(problem.reference)}
        for key, reason in equivalents(problem).items():
            if key not in made:
                results.append(MutantResult(problem.slug, "-", key, key.split("@")[0], "no longer made by the catalogue", 0,
                                            STALE, reason))
    return results


def failing(results: list[MutantResult]) -> list[MutantResult]:
    """The results a problem author must act on: survivors, stale equivalence entries, and mutants the
    grader could not run."""
    return [r for r in results if r.verdict in (SURVIVED, STALE, ERROR)]

"""Mutation-adequate hidden cases: every problem's hidden cases tell every mutant of its reference from the
reference (``grader/mutation/mutate.py``'s catalogue, graded by ``grader/mutation/mutants.py``), except the ones its folder
lists as equivalent with a reason (``equivalent_mutants.json``), and every listed one still survives.

Cost: the catalogue makes about 700 mutants over the twenty references (its size is fixed by the
operators, not sampled: a sample would let a survivor through on some runs). Each is graded on a warm worker,
first on the hidden cases of the first case's shape (one compile; most mutants die there), then, if it
survives, on the rest. The listed equivalents (about a hundred) are not graded here, only checked to be still
made: they survive by definition, so each would run every hidden shape, which costs more than all the
others together. `python -m grader mutants` grades them too and reports any that a case now kills.
Measured: the whole module in 15 minutes on 2 cores shared with three other sessions (load average 19,
under nice 10), so a few minutes on 2 idle cores, well inside CI's hour. Keep new operators to changes a learner makes, and
prefer killer cases in shapes the cases already use (each new shape is one more compile per survivor).
"""
from __future__ import annotations

import ast
import dataclasses

import pytest

import problems
from grader.mutation.mutants import KILLED, SURVIVED, failing, run_mutants
from grader.mutation.mutate import mutants
from grader.grading.workers import worker_pool

SLUGS = list(problems.registry())


@pytest.fixture(scope="module")
def pool():
    with worker_pool(2, warm=2, warm_up=False) as workers:
        yield workers


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_no_mutant_survives_the_hidden_cases(pool, slug):
    results = run_mutants([problems.get(slug)], pool.run, threads=2, run_equivalents=False)
    assert results, f"{slug}: the catalogue made no mutant of its reference"
    bad = failing(results)
    assert not bad, "\n".join(f"{r.verdict} {r.id} line {r.line} [{r.key}] {r.description}: {r.detail}"
                              for r in bad)


@pytest.mark.slow
def test_a_survivor_is_reported_when_no_case_reaches_the_edge(pool):
    """Without its killer cases (13 and 15: fewer finite candidates than beams), beam search's `-inf` ->
    `-1e9` mutant survives, and the sweep says so; with them it is killed."""
    beam = problems.get("beam-search-step")
    thin = dataclasses.replace(beam)
    thin.__dict__["hidden"] = tuple(c for c in beam.hidden if c.name not in ("Hidden 13", "Hidden 15"))
    inf = lambda m: m.operator == "inf-as-finite"  # noqa: E731
    [weak] = run_mutants([thin], pool.run, select=inf)
    [strong] = run_mutants([beam], pool.run, select=inf)
    assert (weak.verdict, strong.verdict) == (SURVIVED, KILLED), (weak, strong)
    assert weak in failing([weak]) and "-1e9" in weak.description


def test_every_mutant_differs_from_the_reference_by_one_change():
    for slug in SLUGS:
        reference = problems.get(slug).reference
        made = mutants(reference)
        base = ast.unparse(ast.parse(reference))
        texts = [m.source for m in made]
        assert len(set(texts)) == len(texts), f"{slug}: two mutants are the same program"
        assert base not in texts
        assert len({m.key for m in made}) == len(made), f"{slug}: two mutants share a key"
        for m in made:
            compile(m.source, m.key, "exec")
        assert [m.id for m in made] == [m.id for m in mutants(reference)], "ids must be reproducible"


def test_the_catalogue_makes_the_classic_mistakes():
    source = ("import jax.numpy as jnp\n"
              "def f(x, m, n):\n"
              "    y = jnp.where(m < n, x / jnp.sqrt(x.sum(axis=0)), -jnp.inf)\n"
              "    z = jnp.round(x.astype(jnp.float32)).T\n"
              "    return [y + 2 * z, ~m]\n")
    descriptions = {m.operator: set() for m in mutants(source)}
    for m in mutants(source):
        descriptions[m.operator].add(m.description)
    assert {"comparison", "inf-as-finite", "eps", "floor", "dropped-term", "swapped-operands", "mask-inverted",
            "rounding", "cast-dropped", "dtype", "axis", "container", "off-by-one"} <= set(descriptions)
    assert any("Lt -> LtE" in d for d in descriptions["comparison"])
    assert any("-1e9" in d for d in descriptions["inf-as-finite"])
    assert any("bfloat16" in d for d in descriptions["dtype"])
    assert any("List -> Tuple" in d for d in descriptions["container"])

"""Rows that decide a verdict are properties of the program, not of its labels.

Everything the learner's process writes beside a program is a label: each equation's name stack
(``jvp(...)``, ``transpose(...)``, ``vmap(...)``), the JAX entry points it says were running (``api``), the
source line it says made the equation, and the source text itself (parsed on the trusted side, but spelled by
the learner: a call that never runs, a shadowed name). A requirement row that decides the verdict must give the
same answer whatever those labels say. ``decisions_without_labels`` runs a problem's checks again on the same
traced programs with every label erased, and again with labels forged to claim every structure the problems
ask about, and returns the deciding rows whose answer changed. The registry sweep calls it on every graded
file (``tests/test_problem_sweep.py``).
"""
from __future__ import annotations

import copy
from typing import Any

FORGED_STACK = "transpose(jvp(vmap(vmap(checkpoint(forged)))))"
FORGED_API = ["value_and_grad", "grad", "vjp", "jvp", "vmap", "vmap", "custom_vjp", "checkpoint", "remat",
              "lax.fori_loop", "lax.scan", "lax.map"]
FORGED_SOURCE = '''import jax
from jax import lax


def forged(params, x, y, n, *rest):
    # every transformation the problems ask about, called on nothing that runs
    f = lambda *a: jax.value_and_grad(lambda *b: 0.0)(*a)
    g = jax.jvp(jax.grad(lambda w: 0.0), (0.0,), (1.0,))
    h = jax.vmap(jax.vmap(lambda a, b: a - b))
    k = jax.checkpoint(lambda a: a, policy=jax.checkpoint_policies.dots_saveable)
    q = jax.custom_vjp(lambda a: a)
    s = lax.scan(lambda c, a: (c, jax.value_and_grad(lambda w: 0.0)(c)), 0.0, x)
    t = lax.stop_gradient(x)
    return None
'''


def _relabel(jaxpr: dict[str, Any], stack: str | None, api: list[str] | None) -> None:
    todo = [jaxpr]
    while todo:
        j = todo.pop()
        for eqn in j.get("eqns", []):
            eqn["name_stack"] = stack if stack is not None else ""
            if api is None:
                eqn.pop("api", None)
                eqn.pop("api_all", None)
            else:
                eqn["api"] = list(api)
                eqn["api_all"] = list(api)
            eqn["source_line"] = None if api is None else 1
            todo.extend(eqn.get("subjaxprs", {}).values())


def relabelled(traces: list[dict[str, Any]], forged: bool) -> list[dict[str, Any]]:
    """The same traced programs with every label erased (``forged`` False) or forged."""
    out = copy.deepcopy(traces)
    for t in out:
        if isinstance(t.get("jaxpr"), dict):
            _relabel(t["jaxpr"], FORGED_STACK if forged else None, FORGED_API if forged else None)
    return out


def decisions(results: list[Any]) -> dict[str, bool]:
    """Each deciding row's answer (advice and rows not checked here left out)."""
    return {r.id: r.passed for r in results if r.checked and not getattr(r, "advice", False)}


def decisions_without_labels(problem: Any, traces: list[dict[str, Any]], first_error: Any,
                             results: list[Any]) -> list[str]:
    """The deciding rows whose answer changes when the labels are erased or forged: ``["id: erased -> False",
    ...]`` (empty when every deciding row reads the program only)."""
    from grader.grading.requirements import requirement_results
    want = decisions(results)
    changed = []
    for forged, source in ((False, ""), (True, FORGED_SOURCE)):
        got, _ = requirement_results(problem, relabelled(traces, forged), first_error, source)
        for rid, passed in decisions(got).items():
            if rid in want and want[rid] != passed:
                changed.append(f"{rid}: with labels {'forged' if forged else 'erased'} it "
                               f"{'passes' if passed else 'fails'}")
    return changed

"""Axis labels and batch cuts (``grader/toolkit/axes.py``): vmap and hand-batched code keep the examples together, every
way of walking them one at a time cuts the batch axis, and slicing another axis cuts nothing."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from grader.toolkit.axes import Axes, reshape_labels
from grader.toolkit.jaxpr_tools import Trace, iter_eqns

ROOT = Path(__file__).resolve().parents[1]
QKV = {"q": [[[1.0, 0.5], [0.0, 2.0]], [[0.3, -1.0], [1.0, 1.0]], [[2.0, 0.1], [-0.5, 0.2]]],
       "k": [[[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]] * 3,
       "v": [[[1.0], [2.0], [3.0]]] * 3}


@pytest.fixture(scope="module")
def child():
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_axes_tests", ROOT / "grader" / "learner" / "child.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.T = module.start_jax()
    return module


def traced(child, code: str, args: dict) -> Trace:
    job = {"code": code, "entry": "f", "args": [{"name": k, "kind": "float32"} for k in args],
           "cases": [{"name": "Example 1", "args": args}], "probe_cases": []}
    result = child.run_job(child.T, job)
    assert result["status"] == "ok" and result["cases"][0]["status"] == "ok", result
    t = result["traces"][0]
    return Trace(args=t["args"], jaxpr=t["jaxpr"], input_names=t["input_names"], output_names=t["output_names"])


def cut_dots(trace: Trace) -> list[set]:
    """For each matrix product, the arguments whose batch axis its operands had cut."""
    axes = Axes(trace, {"q": 0, "k": 0, "v": 0})
    return [set().union(*(axes.cut.get(n, ()) for n in r.in_nodes))
            for r in iter_eqns(trace.jaxpr) if r.primitive == "dot_general"]


HEAD = "import jax, jax.numpy as jnp\ndef attend(q, k, v):\n    return jax.nn.softmax(q @ k.T, axis=-1) @ v\n"
BATCHED = {
    "vmap": HEAD + "def f(q, k, v):\n    return jax.vmap(attend)(q, k, v)\n",
    "einsum": ("import jax, jax.numpy as jnp\ndef f(q, k, v):\n"
               "    return jnp.einsum('bts,bse->bte', jax.nn.softmax(jnp.einsum('btd,bsd->bts', q, k)), v)\n"),
    "query loop in vmap": (HEAD + "def f(q, k, v):\n"
                           "    one = lambda q, k, v: jnp.stack([attend(q[t:t+1], k, v)[0] for t in range(2)])\n"
                           "    return jax.vmap(one)(q, k, v)\n"),
}
LOOPED = {
    "python loop": HEAD + "def f(q, k, v):\n    return jnp.stack([attend(q[b], k[b], v[b]) for b in range(3)])\n",
    "lax.map": HEAD + "def f(q, k, v):\n    return jax.lax.map(lambda e: attend(*e), (q, k, v))\n",
    "fori_loop": (HEAD + "def f(q, k, v):\n"
                  "    body = lambda b, o: o.at[b].set(attend(q[b], k[b], v[b]))\n"
                  "    return jax.lax.fori_loop(0, 3, body, jnp.zeros((3, 2, 1)))\n"),
    "pick row b of a batched result": (
        HEAD + "def f(q, k, v):\n"
        "    return jnp.stack([jax.vmap(attend)(q, k, v)[b] for b in range(3)])\n"),
}


@pytest.mark.parametrize("name", BATCHED)
def test_batched_code_never_cuts_the_batch_axis(child, name):
    assert all(not c for c in cut_dots(traced(child, BATCHED[name], QKV)))


@pytest.mark.parametrize("name", LOOPED)
def test_every_way_of_walking_the_examples_cuts_the_batch_axis(child, name):
    trace = traced(child, LOOPED[name], QKV)
    axes = Axes(trace, {"q": 0, "k": 0, "v": 0})
    assert axes.cuts_at, "no equation was seen cutting the batch axis"
    if name != "pick row b of a batched result":
        assert any(c for c in cut_dots(trace))


def test_matrix_product_labels_follow_the_operands(child):
    code = "import jax.numpy as jnp\ndef f(q, k, v):\n    return jnp.einsum('btd,bsd->bts', q, k)\n"
    trace = traced(child, code, QKV)
    axes = Axes(trace, {"q": 0, "k": 0})
    dot = next(r for r in iter_eqns(trace.jaxpr) if r.primitive == "dot_general")
    labels = axes.of(dot.out_nodes[0])
    assert labels == (frozenset({("arg", "q", 0), ("arg", "k", 0)}), frozenset({("arg", "q", 1)}),
                      frozenset({("arg", "k", 1)}))
    assert axes.batch_roots(labels, 0) == {"q", "k"} and not axes.batch_roots(labels, 2)


def test_an_identity_basis_is_labelled_as_made_by_iota(child):
    code = "import jax, jax.numpy as jnp\ndef f(x):\n    return jax.jacrev(lambda x: jnp.tanh(x).sum(1))(x)\n"
    trace = traced(child, code, {"x": [[0.5, 1.0], [2.0, -1.0], [0.1, 0.2]]})
    axes = Axes(trace, {"x": 0})
    assert any(Axes.basis_axes(axes.of(n)) and axes.batch_roots(axes.of(n))
               for r in iter_eqns(trace.jaxpr) for n in r.out_nodes)


def test_reshape_merges_and_keeps_unit_axes_labels():
    a, b, c = (frozenset({x}) for x in "abc")
    assert reshape_labels((a, b, c), [2, 3, 4], [6, 4]) == (a | b, c)
    assert reshape_labels((a, b, c), [1, 3, 4], [3, 4]) == (a | b, c)
    assert reshape_labels((a, b), [6, 4], [2, 3, 4]) == (a, a, b)

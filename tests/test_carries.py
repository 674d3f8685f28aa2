"""The toolkit that decides whether a structure carries the answer: probes, data flow, look-alikes.

The child's pieces run in this process (JAX imported once); the parent's pieces read what they produce.
Each decorative spelling from the issue gets its probe; each right spelling must still carry.
"""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

from grader.toolkit.carries import carries, groups, paths_around
from grader.toolkit.dataflow import Flow
from grader.toolkit.jaxpr_tools import SCAN, Trace, find, iter_eqns

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def child():
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_tests", ROOT / "grader" / "learner" / "child.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.T = module.start_jax()
    return module


def traced(child, code: str, args: dict, entry: str = "f", probe_primitives: tuple = ()) -> Trace:
    """Trace ``code``'s ``entry`` on float32 ``args`` through the child's own path (probes included)."""
    job = {"code": code, "entry": entry, "args": [{"name": k, "kind": "float32"} for k in args],
           "cases": [{"name": "Example 1", "args": args}], "probe_primitives": list(probe_primitives)}
    result = child.run_job(child.T, job)
    assert result["status"] == "ok", result
    assert result["cases"][0]["status"] == "ok", result["cases"][0]
    t = result["traces"][0]
    return Trace(args=t["args"], jaxpr=t["jaxpr"], input_names=t["input_names"], output_names=t["output_names"],
                 probes=t["probes"], step_reads=t.get("step_reads") or {})


X = {"x": [[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]]}

REAL = """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": total}
"""

DECORATIVE = {
    "times zero": """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": jnp.tanh(x).sum(0) + 0.0 * total}
""",
    "where false": """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": jnp.where(jnp.isnan(x).any(), total, jnp.tanh(x).sum(0))}
""",
    "add and subtract": """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": jnp.tanh(x).sum(0) + total - total}
""",
    "stop_gradient swap": """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": total + jax.lax.stop_gradient(jnp.tanh(x).sum(0) - total)}
""",
    "discarded": """
import jax, jax.numpy as jnp
def f(x):
    jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": jnp.tanh(x).sum(0)}
""",
}


def test_a_scan_that_computes_the_answer_carries_it(child):
    trace = traced(child, REAL, X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, around_from=("x",))
    assert carry.ok and carry.measured, carry.message()


@pytest.mark.parametrize("spelling", list(DECORATIVE))
def test_a_decorative_scan_is_caught_however_it_is_spelled(child, spelling):
    trace = traced(child, DECORATIVE[spelling], X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, around_from=("x",), what="the scan")
    assert not carry.ok
    assert carry.decorative or carry.around, carry
    assert "the scan" in carry.message() or "The scan" in carry.message()


def test_an_output_that_is_nan_on_the_probed_case_does_not_make_a_scan_decorative(child):
    code = """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + r / 0.0, None), jnp.zeros(2), x)
    return {"total": 0.0 * total}
"""
    trace = traced(child, code, X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, around_from=("x",))
    assert not carry.still and not carry.measured, carry


COUNT = """
import jax, jax.numpy as jnp
def f(x):
    return {"n": jnp.sum(x[:, 0] < 1.0).astype(jnp.float32)}
"""
X4 = {"x": [[0.5, 1.0], [0.25, -1.0], [2.0, 0.5], [1.5, 3.0]]}  # two of four below 1: flipping all keeps the count


def test_a_comparison_whose_flip_leaves_a_count_unchanged_is_seen_moving_by_another_perturbation(child):
    trace = traced(child, COUNT, X4, probe_primitives=("lt",))
    (lt,) = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "lt"]
    target = next(t for t in trace.probes["targets"] if t["key"] == f"eqn:{lt.path}")
    assert target["variants"] > 1, "flipping every boolean leaves two of four: the first perturbation is absorbed"
    carry = carries(trace, lt, around_from=("x",))
    assert carry.ok and not carry.invisible and not carry.still, carry


@pytest.mark.parametrize("variant", [1, 2])
def test_the_compiled_probes_compute_every_variant_as_the_numpy_probes_do(child, variant):
    import jax
    import jax.numpy as jnp
    t = child.T
    cf, is_own = t["counterfactual"], lambda p: id(p) in t["own_primitives"]
    stack = lambda e: child.name_stack_text(t, getattr(e.source_info, "name_stack", None))  # noqa: E731

    def f(x):
        return jnp.sum(x[:, 0] < 1.0), jnp.tanh(x) * 2.0, (x > 0).astype(jnp.int32) + 3

    x = jnp.asarray(X4["x"], jnp.float32)
    closed = jax.make_jaxpr(f)(x)
    prims = ("lt", "tanh", "convert_element_type")
    compiled = cf.Probes(t, closed, is_own, stack, prims)
    numpy_probes = cf.NumpyProbes(t, closed, is_own, stack, prims)
    assert [p.key for p in compiled.targets] == [p.key for p in numpy_probes.targets]
    n = len(compiled.targets)
    for k in range(n):
        got = [np.asarray(o) for o in compiled.fn(np.int32(k + n * variant), x)[0]]
        want = numpy_probes._run([np.asarray(x)], which=k, variant=variant)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.astype(np.float64), np.asarray(w).astype(np.float64), rtol=1e-6)


def test_an_update_that_underflows_to_zero_is_invisible_not_decorative(child):
    """A wrong answer: the scan is the only path from x to the output, but its result is scaled by a factor
    that underflows, so no perturbation moves the output. The data flow shows no path around: the row must
    not call the scan decorative (nor claim a computation around it)."""
    code = """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": 1.0 + total * 1e-30 * 1e-30}
"""
    trace = traced(child, code, X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, around_from=("x",), what="the scan")
    assert carry.measured and carry.ok and not carry.decorative, carry
    assert carry.invisible == ["total"] and "could not see" in carry.note
    bare = carries(trace, scan, what="the scan")  # no inputs named: those the scan reads are used
    assert bare.ok and bare.invisible == ["total"], bare


def test_an_unmoved_output_with_a_path_around_is_still_decorative_and_says_so(child):
    code = """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": jnp.tanh(x).sum(0) + total * 1e-30 * 1e-30}
"""
    trace = traced(child, code, X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, what="the scan")
    assert carry.decorative and not carry.invisible and not carry.discarded, carry
    assert "path around" in carry.message()


def test_a_discarded_scan_is_called_discarded(child):
    trace = traced(child, DECORATIVE["discarded"], X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, what="the scan")
    assert carry.decorative and carry.discarded and "discarded" in carry.message(), carry


def test_a_scan_that_contributes_beside_another_computation_is_a_path_around_it(child):
    code = """
import jax, jax.numpy as jnp
def f(x):
    total, _ = jax.lax.scan(lambda c, r: (c + jnp.tanh(r), None), jnp.zeros(2), x)
    return {"total": 0.5 * total + 0.5 * jnp.tanh(x).sum(0)}
"""
    trace = traced(child, code, X)
    (scan,) = find(trace.jaxpr, SCAN)
    carry = carries(trace, scan, around_from=("x",))
    assert not carry.decorative and carry.around == ["total"]
    assert carry.around_evidence, "the message should point at the computation around the scan"


def test_paths_around_several_structures_from_one_input_leaf(child):
    code = """
import jax, jax.numpy as jnp
def f(x, w):
    half = (x.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
    return {"a": half.sum(), "b": half.sum() + (x @ w).sum(), "c": w.sum()}
"""
    trace = traced(child, code, {"x": [[1.0, 2.0]], "w": [[0.5], [0.25]]})
    dots = find(trace.jaxpr, {"dot_general"})
    half = [d for d in dots if d.eqn["invars"][0]["dtype"] == "float16"]
    names, evidence = paths_around(trace, half, trace.inputs("x"))
    assert names == ["b"] and evidence and evidence[0].primitive == "dot_general"
    assert paths_around(trace, dots, trace.inputs("x")) == ([], [])
    assert paths_around(trace, dots, trace.inputs("w"), outputs=["a", "c"])[0] == ["c"]


def test_a_primitive_named_scan_is_not_jaxs_scan(child):
    code = """
import jax, jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir
p = Primitive("scan")
p.def_impl(lambda x: jnp.tanh(x).sum(0))
p.def_abstract_eval(lambda a: jax.core.ShapedArray(a.shape[1:], a.dtype))
mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.tanh(x).sum(0), multiple_results=False))
def f(x):
    return {"total": p.bind(x)}
"""
    trace = traced(child, code, X)
    assert not find(trace.jaxpr, SCAN)
    assert [r.primitive for r in iter_eqns(trace.jaxpr)] == ["foreign:scan"]


def test_backward_pass_groups_carry_gradients_and_a_decoy_grad_does_not(child):
    code = """
import jax, jax.numpy as jnp
def f(x):
    loss = lambda w: jnp.sum(jnp.tanh(w) ** 2)
    return {"g": jax.grad(loss)(x)}
"""
    decoy = """
import jax, jax.numpy as jnp
def f(x):
    decoy = jax.grad(lambda w: jnp.sum(w ** 2))(x)
    t = jnp.tanh(x)
    return {"g": 2 * t * (1 - t ** 2) + 0.0 * decoy}
"""
    trace = traced(child, code, X)
    (backward,) = [g for g in groups(trace) if "transpose" in g.chain]
    assert carries(trace, backward, outputs=["g"]).ok
    trace = traced(child, decoy, X)
    (backward,) = [g for g in groups(trace) if "transpose" in g.chain]
    assert carries(trace, backward, outputs=["g"]).decorative


def test_equations_know_which_jax_entry_points_made_them(child):
    code = """
import jax, jax.numpy as jnp
@jax.custom_vjp
def q(w):
    return jnp.round(w * 4) / 4
def fwd(w):
    return jnp.round(w * 4) / 4, w
def bwd(w, g):
    return (g * (jnp.abs(w) <= 1),)
q.defvjp(fwd, bwd)
def f(x):
    return {"g": jax.grad(lambda w: jnp.sum(q(w) ** 2))(x)}
"""
    trace = traced(child, code, X)
    rounding = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "round"]
    assert rounding and all("custom_vjp.fwd" in r.api and "grad" in r.api for r in rounding), \
        [(r.primitive, r.api) for r in rounding]


NESTED_VMAP = {
    "plain": "jax.vmap(jax.vmap(one, (None, 0)), (0, None))(x, y)",
    "inside a jit": "jax.jit(lambda x, y: jax.vmap(jax.vmap(one, (None, 0)), (0, None))(x, y))(x, y)",
    "around a jit": "jax.vmap(jax.vmap(jax.jit(one), (None, 0)), (0, None))(x, y)",
    "split by a jit": "jax.vmap(jax.jit(jax.vmap(one, (None, 0))), (0, None))(x, y)",
}


@pytest.mark.parametrize("spelling", NESTED_VMAP, ids=list(NESTED_VMAP))
def test_a_vmap_of_a_vmap_is_seen_twice_through_every_enclosing_jit(child, spelling):
    code = f"""
import jax, jax.numpy as jnp
def one(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))
def f(x, y):
    return {{"d": {NESTED_VMAP[spelling]}}}
"""
    trace = traced(child, code, {"x": [[0.0, 1.0], [2.0, 3.0]], "y": [[1.0, 1.0], [0.0, 0.5], [2.0, 2.0]]})
    (root,) = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "sqrt"]
    assert root.api_chain == ["vmap", "vmap"], (root.api_chain, root.api)


def test_a_cached_jit_body_keeps_its_own_markers_wherever_it_is_called(child):
    """A jitted function traced first inside two vmaps and then called outside them: JAX reuses the traced
    body, whose equations say only what ran inside it, so the call outside carries no vmap."""
    code = """
import jax, jax.numpy as jnp
@jax.jit
def hand(x, y):
    return jnp.sqrt(jnp.sum((x[:, None] - y[None]) ** 2, -1))
def f(x, y):
    jax.vmap(jax.vmap(lambda a, b: hand(x, y)[0, 0] + a[0] * b[0], (None, 0)), (0, None))(x, y)
    return {"d": hand(x, y)}
"""
    trace = traced(child, code, {"x": [[0.0, 1.0], [2.0, 3.0]], "y": [[1.0, 1.0], [0.0, 0.5], [2.0, 2.0]]})
    out = trace.flow.outputs[0]
    path, _ = trace.flow.made_by[out]
    made = trace.eqn_at[path]
    assert made.api_chain == [], made.api_chain
    inner = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "sqrt" and r.path.startswith(made.path + "/")]
    assert inner and all("vmap" not in r.api_chain for r in inner), [r.api_chain for r in inner]


BLOCKS = """
import jax, jax.numpy as jnp
def f(x, block_size):
    n = x.shape[0] // block_size
    def step(c, blk):
        return c + jnp.sum(jnp.tanh(blk)), None
    total, _ = jax.lax.scan(step, 0.0, x.reshape(n, block_size, -1) if CONTIGUOUS else
                            x.reshape(block_size, n, -1).transpose(1, 0, 2))
    return {"total": total}
"""


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous blocks", "strided rows"])
def test_step_influence_by_block_size_reads_one_block_per_step(child, contiguous):
    """``step_influence = {"inputs": ["x"], "block_size": "block_size"}``: the blocks are the input's rows
    divided by the block size (here 6 rows of 2, so 3 blocks); contiguous blocks are read one per step, while
    a strided split gives step j rows j and j + 3, from two blocks."""
    code = BLOCKS.replace("CONTIGUOUS", str(contiguous))
    job = {"code": code, "entry": "f", "step_influence": {"inputs": ["x"], "block_size": "block_size"},
           "args": [{"name": "x", "kind": "float32"}, {"name": "block_size", "kind": "int", "static": True}],
           "cases": [{"name": "Example 1", "args": {"x": [[0.1 * i, -0.2 * i] for i in range(6)], "block_size": 2}}]}
    result = child.run_job(child.T, job)
    reads = result["traces"][0]["step_reads"]
    assert reads["blocks"] == 3, reads
    (per_block,) = reads["reads"].values()
    expected = ([[b == j for j in range(3)] for b in range(3)] if contiguous else
                [[True, True, False], [True, False, True], [False, True, True]])
    assert per_block == expected, per_block


def _nested_scans(depth: int) -> dict:
    """A serialised program of ``depth`` nested one-step scans, each carrying one value (no JAX needed)."""
    def level(d: int, prefix: str) -> dict:
        a, b = {"id": f"{prefix}a", "shape": [], "dtype": "float32"}, {"id": f"{prefix}b", "shape": [], "dtype": "float32"}
        if d == 0:
            eqn = {"primitive": "sin", "invars": [a], "outvars": [b], "params": {}, "name_stack": "",
                   "subjaxprs": {}, "line": None, "source_line": None}
        else:
            eqn = {"primitive": "scan", "invars": [a], "outvars": [b], "name_stack": "", "line": None,
                   "source_line": None, "params": {"num_consts": 0, "num_carry": 1, "length": 1},
                   "subjaxprs": {"jaxpr": level(d - 1, prefix + "n")}}
        return {"invars": [a], "constvars": [], "outvars": [b], "eqns": [eqn]}
    return level(depth, "v")


def test_data_flow_through_twenty_nested_scans_is_linear():
    jaxpr = _nested_scans(20)
    started = time.monotonic()
    flow = Flow(jaxpr)
    assert flow.outputs_reached(flow.inputs) == [0]
    trace = Trace(args={}, jaxpr=jaxpr, input_names=["x"], output_names=["y"])
    assert carries(trace, find(jaxpr, SCAN)[0], around_from=("x",)).around == []
    assert time.monotonic() - started < 0.5
    assert len(flow.edges) < 10 * 20


CASES = {
    "dot_general batch and contraction": ("jnp.einsum('bij,bjk->bik', x[None], x.T[None] + 1.0)", None),
    "gather by index array": ("x[jnp.array([2, 0, 1])] * jnp.take(x, jnp.array([1]), axis=1)", None),
    "cumulative and argmax": ("jnp.cumsum(x, axis=0) + jnp.argmax(x, axis=1)[:, None]", None),
    "dynamic slice and update": ("jax.lax.dynamic_update_slice(x, jax.lax.dynamic_slice(x, (1, 0), (1, 2)) * 3, (0, 0))", None),
    "rounding, powers, clip": ("jnp.round(x * 3) ** 3 + jnp.clip(x, -0.5, 0.5) + jnp.sign(x) * jnp.abs(x) ** 0.5", None),
    "softmax (custom_jvp, stop_gradient)": ("jax.nn.softmax(x * 40.0, axis=-1)", None),
    "scan, while and cond": ("jax.lax.fori_loop(0, 3, lambda i, c: jax.lax.cond(i % 2 == 0, lambda a: a * 1.5, lambda a: a - 1.0, c), x)"
                             " + jax.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] + 0.5), (0, x))[1]", None),
    "checkpoint and grad": ("jax.grad(lambda w: jnp.sum(jax.checkpoint(lambda v: jnp.tanh(v @ v.T), "
                            "policy=jax.checkpoint_policies.dots_saveable)(w)))(x)", None),
    "integer division and remainder": ("(jnp.arange(6).reshape(3, 2) - 3) // 2 + jax.lax.rem(jnp.arange(6).reshape(3, 2) - 3, 4) + x", None),
    "sort and top_k (eager fallback)": ("jnp.sort(x, axis=0) + jax.lax.top_k(x, 1)[0]", None),
    "stack and reduce_precision": ("jnp.stack([x, x * 2], axis=1).sum(axis=1) + jax.lax.reduce_precision(x, 8, 23)"
                                   " + jax.lax.reduce_precision(x, 5, 10)", None),
}
NO_EAGER = {"stack and reduce_precision": {"stack": 0, "reduce_precision": 1}}
"""Primitives the evaluator computes itself: how often each may still be bound with JAX (compiled on first
use in a fresh worker, on the learner's clock)."""


@pytest.mark.parametrize("name", list(CASES))
def test_the_numpy_evaluator_reproduces_the_compiled_program(child, name):
    expression, _ = CASES[name]
    t = child.T
    import jax
    import jax.numpy as jnp  # noqa: F401 - used by the expressions
    fn = eval(f"lambda x: {expression}", {"jax": jax, "jnp": jnp})
    x = np.asarray(X["x"], np.float32)
    closed = jax.make_jaxpr(fn)(x)
    want = jax.jit(t["jaxpr_as_fun"](closed))(x)
    evaluator = t["jaxpr_numpy"].NumpyEvaluator(t, lambda p: id(p) in t["own_primitives"])
    eager, bound = evaluator.eager, []
    evaluator.eager = lambda eqn, invals: bound.append(eqn.primitive.name) or eager(eqn, invals)
    got = evaluator.run(closed, [x])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=1e-5, atol=1e-5)
    for prim, most in NO_EAGER.get(name, {}).items():
        assert bound.count(prim) == most, bound


TREE_UPDATES = {
    "leaf by leaf": ("jax.tree.map(lambda a, b: a - 0.5 * b, x, y)", [("x", "a"), ("x", "b")]),
    "concatenated and split": ("dict(zip(['a', 'b'], jnp.split(jnp.concatenate([x['a'], x['b']]) - "
                               "jnp.concatenate([y['a'], y['b']]), [2])))", []),
}


@pytest.mark.parametrize("name", list(TREE_UPDATES))
def test_origins_tell_which_leaves_each_result_comes_from(child, name):
    from grader.toolkit.dataflow import MIXED
    from grader.toolkit.jaxpr_tools import name_path
    expression, own = TREE_UPDATES[name]
    code = f"import jax, jax.numpy as jnp\ndef f(x, y):\n    return {expression}\n"
    job = {"code": code, "entry": "f", "args": [{"name": "x", "kind": "tree"}, {"name": "y", "kind": "tree"}],
           "cases": [{"name": "Example 1", "args": {"x": {"a": [1.0, 2.0], "b": [3.0]}, "y": {"a": [0.5, 0.5], "b": [1.0]}}}]}
    result = child.run_job(child.T, job)
    t = result["traces"][0]
    trace = Trace(args=t["args"], jaxpr=t["jaxpr"], input_names=t["input_names"], output_names=t["output_names"])
    labels = {n: name_path(arg)[1:] for n, arg in zip(trace.flow.inputs, trace.input_names)}
    found = trace.flow.origins(labels)
    got = [(name_path(o)[0], found.get(n)) for o, n in zip(trace.output_names, trace.flow.outputs)]
    if own:
        assert got == [(leaf, (leaf,)) for _, leaf in own]
    else:
        assert [label for _, label in got] == [MIXED, MIXED]


def test_opaque_sources_are_callbacks_and_own_primitives_that_feed_the_result(child):
    from grader.toolkit.jaxpr_tools import opaque_sources
    code = """
import jax, jax.numpy as jnp, numpy as np
def f(x):
    jax.debug.print("x = {}", x)
    unused = jax.pure_callback(lambda a: np.asarray(a) + 1, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    used = jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return {"y": x + 0.0 * used}
"""
    trace = traced(child, code, X)
    found = opaque_sources(trace)
    assert [r.primitive for r in found] == ["pure_callback"]
    assert trace.eqn_at[found[0].path].eqn["source_line"] == 6  # the used one, not line 5


def test_host_callback_rule_counts_the_callbacks_that_reach_what_it_is_about(child):
    """``leaves.host_callback(..., into=...)``: a callback (buffer_callback too, which writes its outputs from
    Python) that computes the decision fails the rule; one that feeds only another output, or a
    ``jax.debug.callback`` that returns nothing, does not."""
    from grader.toolkit.leaves import host_callback
    code = """
import jax, jax.numpy as jnp, numpy as np
from jax.experimental.buffer_callback import buffer_callback
def _ok(ctx, out, a):
    np.from_dlpack(out)[...] = np.isfinite(np.from_dlpack(a)).all()
def f(x):
    jax.debug.callback(lambda a: None, x)
    logged = jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    ok = buffer_callback(_ok, jax.ShapeDtypeStruct((), jnp.bool_))(x) if DECIDE else jnp.all(jnp.isfinite(x))
    return {"y": jnp.where(ok, x, 0.0), "logged": logged}
"""
    for decide in (True, False):
        trace = traced(child, code.replace("DECIDE", str(decide)), X)
        select = next(r for r in iter_eqns(trace.jaxpr) if r.primitive == "select_n")
        scoped = host_callback(trace, "fine", "the host decides", "decide in JAX", into=select.in_nodes[:1],
                               into_name="the condition")
        assert scoped.passed is not decide, scoped.message
        if decide:
            assert "`buffer_callback`" in scoped.message and "flow into the condition" in scoped.message
        everything = host_callback(trace, "fine", "the host computes", "compute in JAX")
        assert not everything.passed and "pure_callback" in everything.message  # `logged` is an output


def test_an_equation_whose_results_wrap_onto_the_next_line_gets_the_line_that_names_it(child):
    """A scan with many results prints them over two lines; its equation is on the line that names `scan`,
    and the equations after it still get their own lines (not every line cleared)."""
    text = "\n".join([
        "{ lambda ; a:f32[3]. let",
        "    _:i32[] b:f32[3] _:f32[2,3] _:f32[2,3] _:f32[2,3] _:f32[2,3] _:f32[2,3]",
        "      _:f32[2,3] _:f32[2] = scan[",
        "      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }",
        "      length=2",
        "    ] a",
        "    e:f32[3] = stop_gradient b",
        "  in (e,) }",
    ])
    inner = {"eqns": [{"primitive": "sin", "subjaxprs": {}}]}
    structured = {"eqns": [{"primitive": "scan", "subjaxprs": {"jaxpr": inner}},
                           {"primitive": "stop_gradient", "subjaxprs": {}}]}
    child.attach_lines(structured, text)
    lines = text.split("\n")
    scan, stop = structured["eqns"]
    assert "= scan[" in lines[scan["line"] - 1]
    assert "stop_gradient" in lines[stop["line"] - 1]
    assert inner["eqns"][0]["line"] == 4

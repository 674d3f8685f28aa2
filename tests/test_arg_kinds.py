"""Problems may take more than float32 arrays: any dtype, nested pytrees with lists, PRNG keys, Python
numbers. The child builds each kind, names each input leaf, and the comparison checks dtypes."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from grader.grading.compare import compare, to_expected

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def child():
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_kinds", ROOT / "grader" / "learner" / "child.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.T = module.start_jax()
    return module


CODE = """
import jax, jax.numpy as jnp
def f(w, q, tree, key, scale, n):
    acc = jax.lax.dot_general(q, w, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    noise = jax.random.uniform(key, (2,))
    leaves = jax.tree.map(lambda a: a * scale, tree)
    return {"acc": acc, "top": jnp.argmax(acc, axis=1), "noise": noise, "tree": leaves,
            "half": jnp.ones(2, jnp.bfloat16) * n}
"""

ARGS = [{"name": "w", "kind": "array", "dtype": "int8"}, {"name": "q", "kind": "array", "dtype": "int8"},
        {"name": "tree", "kind": "tree"}, {"name": "key", "kind": "key"}, {"name": "scale", "kind": "float"},
        {"name": "n", "kind": "int", "static": True}]
INPUTS = {"w": [[1, -2], [3, 4]], "q": [[127, -128], [5, 6]],
          "tree": {"layers": [{"w": [1.0, 2.0]}, {"w": [3.0]}], "ragged": [[1.0, 2.0, 3.0], [4.0]]},
          "key": 7, "scale": 0.5, "n": 3}


def test_every_kind_reaches_the_function_and_comes_back_typed(child):
    job = {"code": CODE, "entry": "f", "args": ARGS, "cases": [{"name": "Example 1", "args": INPUTS}]}
    result = child.run_job(child.T, job)
    case = result["cases"][0]
    assert case["status"] == "ok", case
    trace = result["traces"][0]
    assert trace["input_names"] == ["w", "q", "tree['layers'][0]['w']", "tree['layers'][1]['w']",
                                    "tree['ragged'][0]", "tree['ragged'][1]", "key", "scale"]
    assert trace["args"]["tree"] == {"layers": [{"w": [2]}, {"w": [1]}], "ragged": [[3], [1]]}
    assert trace["args"]["key"] == "key" and trace["args"]["n"] == 3
    out = case["output"]["v"]
    assert out["acc"]["dtype"] == "int32" and out["acc"]["v"] == [[-257, -766], [23, 14]]
    assert out["top"]["dtype"] == "int32"
    assert out["half"]["dtype"] == "bfloat16" and out["half"]["v"] == [3.0, 3.0]
    expected = to_expected(case["output"])
    assert expected["acc"] == {"t": "array", "dtype": "int32", "v": [[-257, -766], [23, 14]]}
    assert expected["tree"]["layers"]["t"] == "list"
    assert compare(expected, case["output"], rtol=0, atol=0)[0]


def test_a_static_tuple_of_ints_arrives_as_a_tuple_and_fixes_the_traced_shapes(child):
    """``ints`` (bucket sizes, say): a hashable tuple of Python ints, so it can be static, and the program is
    traced per value; the checks see the numbers in ``Trace.args``."""
    code = """
import jax.numpy as jnp
def f(x, sizes):
    assert isinstance(sizes, tuple) and all(type(s) is int for s in sizes), sizes
    width = min(s for s in sizes if s >= x.shape[0])
    return jnp.pad(x, (0, width - x.shape[0]))
"""
    args = [{"name": "x", "kind": "array"}, {"name": "sizes", "kind": "ints", "static": True}]
    job = {"code": code, "entry": "f", "args": args,
           "cases": [{"name": "Example 1", "args": {"x": [1.0, 2.0, 3.0], "sizes": [2, 4, 8]}},
                     {"name": "Example 2", "args": {"x": [1.0, 2.0, 3.0], "sizes": [3, 8]}}]}
    result = child.run_job(child.T, job)
    assert [c["status"] for c in result["cases"]] == ["ok", "ok"], result["cases"]
    assert [c["output"]["shape"] for c in result["cases"]] == [[4], [3]]
    assert [t["args"]["sizes"] for t in result["traces"]] == [[2, 4, 8], [3, 8]]
    assert all(t["input_names"] == ["x"] for t in result["traces"])


def test_a_worker_has_several_cpu_devices_for_collectives(child):
    code = """
import jax, jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P
def f(x):
    mesh = Mesh(jax.devices()[:4], ("i",))
    ring = lambda b: jax.lax.ppermute(b, "i", [(j, (j + 1) % 4) for j in range(4)])
    return jax.shard_map(ring, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
"""
    job = {"code": code, "entry": "f", "args": [{"name": "x", "kind": "array"}],
           "cases": [{"name": "Example 1", "args": {"x": [1.0, 2.0, 3.0, 4.0]}}]}
    case = child.run_job(child.T, job)["cases"][0]
    assert case["status"] == "ok", case
    assert case["output"]["v"] == [4.0, 1.0, 2.0, 3.0]


def test_a_key_argument_is_the_key_jax_makes_from_the_seed(child):
    """Keys are built from their data, without JAX's eager seeding: the same key, bit for bit, and the same
    random numbers, for the seeds problems use and at the edges (other seeds go through ``jax.random.key``)."""
    import jax
    for seed in (0, 1, 7, 12345, 2 ** 31 - 1, -1, 2 ** 31):
        built, made = child.prng_key(child.T, seed), jax.random.key(seed)
        assert built.dtype == made.dtype
        assert (jax.random.key_data(built) == jax.random.key_data(made)).all(), seed
        assert (jax.random.uniform(built, (3,)) == jax.random.uniform(made, (3,))).all(), seed

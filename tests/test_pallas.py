"""Pallas kernels as data: a ``pallas_call`` program round-trips through the verifier's rebuild to the same
output bytes; forged Pallas data is refused, not run; the "Compiles for a TPU v5e" row is computed on the
trusted side only, says "not checked" (never passes) without the TPU extra, and reports Mosaic's refusals.

Shapes are tiny (interpret mode compiles a while loop over the grid: about a second per shape) and each
program is compiled once per module. The TPU compiles need the extra (requirements-tpu.txt; CI installs
it): without it those two are skipped and the "not checked" path is tested instead.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from jax.extend import core as jcore  # noqa: E402

import problems  # noqa: E402
from grader.cost.targets import tpu_extra  # noqa: E402
from grader.boundary import program  # noqa: E402
from grader.records import RequirementResult, Verdict, pick_verdict  # noqa: E402
from grader.verifier import rebuild, tpu_compile  # noqa: E402

INSTALLED, WHY = tpu_extra()
needs_tpu = pytest.mark.skipif(not INSTALLED, reason=f"the TPU extra is not installed: {WHY}")


def _kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def matmul(a, b, bm=2, bn=3, bk=4, row_block=None):
    (m, k), n = a.shape, b.shape[1]
    rows = row_block or bm
    return pl.pallas_call(
        _kernel, grid=(m // rows, n // bn, k // bk),
        in_specs=[pl.BlockSpec((rows, bk), lambda i, j, kk: (i, kk)), pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((rows, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((rows, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(a, b)


def prefetch_sum(lengths, x):
    """Scalar prefetch (lengths in SMEM), ``pl.ds`` reads in a ``fori_loop``: the indexers and the SMEM Ref."""
    def kernel(len_ref, x_ref, o_ref):
        i = pl.program_id(0)

        def body(r, acc):
            return acc + x_ref[pl.ds(r * 8, 8), :]
        acc = jax.lax.fori_loop(0, 2, body, jnp.zeros((8, 128), jnp.float32))
        o_ref[...] = acc * len_ref[i].astype(jnp.float32)

    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(2,),
                                        in_specs=[pl.BlockSpec((16, 128), lambda i, lens: (i, 0))],
                                        out_specs=pl.BlockSpec((8, 128), lambda i, lens: (i, 0)))
    return pl.pallas_call(kernel, grid_spec=spec, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32))(lengths, x)


def _data(fn, *args):
    closed = jax.make_jaxpr(fn)(*args)
    return closed, json.loads(json.dumps(program.ProgramEncoder().program(closed)))  # plain JSON, as sent


@pytest.fixture(scope="module")
def matmul_case():
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (4, 8)).astype(jnp.bfloat16)
    b = rng.uniform(-2, 2, (8, 6)).astype(jnp.bfloat16)
    closed, data = _data(matmul, a, b)
    return a, b, closed, data


def test_pallas_call_round_trips_to_the_same_output_bytes(matmul_case):
    a, b, closed, data = matmul_case
    rebuilt = rebuild.rebuild(data)
    eqn = rebuilt.jaxpr.eqns[0]
    assert eqn.primitive.name == "pallas_call"
    assert eqn.params["interpret"] is program.tpu_interpret()  # the CPU's mode: a TPU's, simulated
    gm, traced = eqn.params["grid_mapping"], closed.jaxpr.eqns[0].params["grid_mapping"]
    assert gm.grid == traced.grid == (2, 2, 2)
    assert [bm.block_shape for bm in gm.block_mappings] == [bm.block_shape for bm in traced.block_mappings]
    assert gm.scratch_avals == traced.scratch_avals
    assert eqn.params["compiler_params"] == closed.jaxpr.eqns[0].params["compiler_params"]
    got = rebuild.run_program(rebuilt, [a, b])[0]
    want = np.asarray(jax.jit(jcore.jaxpr_as_fun(program.interpret_pallas(closed)))(a, b)[0])  # as traced
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, np.asarray(a, np.float32) @ np.asarray(b, np.float32), rtol=1e-5, atol=1e-5)


def test_scalar_prefetch_indexers_and_smem_round_trip():
    lengths = np.array([2, 3], np.int32)
    x = np.arange(32 * 128, dtype=np.float32).reshape(32, 128) / 1000
    closed, data = _data(prefetch_sum, lengths, x)
    text = json.dumps(data)
    assert '"NDIndexer"' in text and '"Slice"' in text and "SMEM" in text
    got = rebuild.run_program(rebuild.rebuild(data), [lengths, x])[0]
    want = np.asarray(jax.jit(jcore.jaxpr_as_fun(program.interpret_pallas(closed)))(lengths, x)[0])
    assert got.tobytes() == want.tobytes()
    expected = np.concatenate([(x[0:8] + x[8:16]) * 2, (x[16:24] + x[24:32]) * 3])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def _find(node, pred):
    if isinstance(node, dict):
        if pred(node):
            yield node
        for v in node.values():
            yield from _find(v, pred)
    elif isinstance(node, list):
        for v in node:
            yield from _find(v, pred)


@pytest.mark.parametrize("forge", ["class", "node", "effect", "space", "mesh"])
def test_forged_pallas_data_is_refused(matmul_case, forge):
    data = json.loads(json.dumps(matmul_case[3]))
    if forge == "class":  # a class outside the allow-list, named like a Pallas dataclass
        next(_find(data, lambda d: d.get("dc") == "pallas.core:Blocked"))["dc"] = "pallas.core:os.system"
    elif forge == "node":  # a tree node of a kind the rebuilder does not make
        data["subprograms"].append({"open": {"constvars": [], "invars": [], "outvars": [], "eqns": []}})
        eqn = next(_find(data, lambda d: d.get("p") == "get"))
        eqn["params"]["tree"] = {"pytree": {"n": "Popen", "aux": None, "kids": []}}
    elif forge == "effect":  # a write effect on a variable that does not exist
        eqn = next(_find(data, lambda d: d.get("p") == "swap" and d.get("effects")))
        eqn["effects"][0]["ref"] = {"v": 999}
    elif forge == "space":  # a Ref in a memory space of another enum
        aval = next(_find(data, lambda d: d.get("kind") == "AbstractRef"))
        aval["space"] = {"enum": "Precision", "name": "HIGHEST"}
    else:  # a pallas_call over a mesh (core_map), which the grader does not rebuild
        eqn = next(_find(data, lambda d: d.get("p") == "pallas_call"))
        eqn["params"]["mesh"] = {"dict": []}
    with pytest.raises(rebuild.NotRebuildable):
        rebuild.rebuild(data)


def test_the_childs_compile_claims_are_dropped(monkeypatch):
    """A child that writes a compile record of its own (or a program it says compiled) gets only what the
    trusted side computed from its program data."""
    monkeypatch.setattr(tpu_compile, "compile_record", lambda *a: {"status": "refused", "message": "m", "kernels": []})
    result = {"status": "ok", "traces": [{"tpu": {"status": "compiled"}, "kernels": [], "args": {}}],
              "tpu_trace": {"program": {}}}
    tpu_compile.attach({"tpu_compile": {"args": []}}, result)
    assert result["traces"][0]["tpu"]["status"] == "refused" and "tpu_trace" not in result
    result = {"status": "ok", "traces": [{"tpu": {"status": "compiled"}}]}
    tpu_compile.attach({}, result)  # a problem without the row: nothing is believed, nothing added
    assert "tpu" not in result["traces"][0]


def test_without_the_extra_the_row_is_not_checked_and_never_passes(monkeypatch):
    monkeypatch.setattr(tpu_compile, "extra_missing", lambda: "libtpu is not installed")
    record = tpu_compile.compile_record({"format": 1})
    assert record["status"] == "not_checked" and "libtpu is not installed" in record["message"]
    from grader.toolkit import Trace, tpu_compiles
    res = tpu_compiles(Trace(args={}, jaxpr={"eqns": []}, tpu=record))
    assert not res.passed and not res.checked
    rows = [RequirementResult("a", "", True, ""), RequirementResult("tpu", "", False, res.message, checked=False)]
    assert pick_verdict(error=None, cases=[_passed()], requirements=rows) is Verdict.ACCEPTED
    rows[1] = RequirementResult("tpu", "", False, "refused")
    assert pick_verdict(error=None, cases=[_passed()], requirements=rows) is Verdict.REQUIREMENTS_NOT_MET


def _passed():
    from grader.records import CaseResult
    return CaseResult("Example 1", False, True, "ok")


@pytest.fixture(scope="module")
def device():
    return tpu_compile._device()


@needs_tpu
def test_mosaic_compiles_the_kernel_for_a_v5e(device):
    sds = [jax.ShapeDtypeStruct((256, 256), jnp.bfloat16)] * 2
    _, data = _data(lambda a, b: matmul(a, b, 128, 128, 128), *sds)
    record = tpu_compile.compile_on(device, data)
    assert record["status"] == "compiled", record
    assert record["peak_bytes"] >= 3 * 256 * 256 * 2  # at least the arguments and the output


@needs_tpu
def test_mosaic_refuses_a_block_it_cannot_tile_and_says_which(device):
    sds = [jax.ShapeDtypeStruct((256, 256), jnp.bfloat16)] * 2
    _, data = _data(lambda a, b: matmul(a, b, 128, 128, 128, row_block=1), *sds)
    record = tpu_compile.compile_on(device, data)
    assert record["status"] == "refused" and record["kind"] == "tiling", record
    assert "divisible by 8 and 128" in record["message"] and "args[0]" in record["message"]
    assert "(1, 128)" in record["message"] and "Traceback" not in record["message"]
    assert len(record["message"]) <= tpu_compile.MESSAGE_CHARS + 3


def test_a_run_leaves_the_compile_to_submit_and_says_so():
    import problems
    from grader.grading.grade import build_job
    problem = problems.get("blocked-matmul-with-pallas")
    run, submit = build_job(problem, "", True), build_job(problem, "", False)
    assert "tpu_compile" not in run and run["tpu_compile_on_submit"]
    assert submit["tpu_compile"]["args"][0] == {"shape": [2048, 2048], "dtype": "bfloat16"}
    result = {"status": "ok", "traces": [{}]}
    tpu_compile.attach(run, result)
    record = result["traces"][0]["tpu"]
    assert record["status"] == "not_checked" and "submit" in record["message"]


def test_the_pallas_track_lists_its_kernels_in_the_order_they_build_on_each_other():
    """Blocked matmul (grid, blocks, a guarded accumulator) first, whatever the difficulty labels say."""
    track = problems.by_topic()["Pallas"]
    orders = [p.track_order for p in track]
    assert orders == list(range(1, len(track) + 1)), [(p.slug, p.track_order) for p in track]
    assert track[0].slug == "blocked-matmul-with-pallas" and track[0].difficulty == "Hard"
    assert list(problems.by_topic())[-1] == "Pallas"


# ------------------------------------------------------------------------------------------------------
# KernelFlow: values followed through a kernel's Refs, and the grid steps a write runs at

def _kernel_view(fn, *args):
    """The pallas_call of ``fn`` as the checks see it: the child's own serialiser."""
    import importlib.util
    from pathlib import Path
    from grader.toolkit import Trace, pallas_calls
    path = Path(__file__).resolve().parents[1] / "grader" / "learner" / "child.py"
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_pallas_tests", path)
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    jaxpr = child.JaxprSerializer(child.start_jax()).jaxpr(jax.make_jaxpr(fn)(*args))
    trace = Trace(args={}, jaxpr=jaxpr, input_names=[], output_names=[])
    return pallas_calls(trace)[0]


def _guarded_by_cond(a_ref, b_ref, o_ref, acc_ref):
    kk = pl.program_id(2)
    jax.lax.cond(kk == 0, lambda: acc_ref.__setitem__(..., jnp.zeros_like(acc_ref)), lambda: None)
    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(jnp.logical_and(kk + 1 == pl.num_programs(2), pl.program_id(0) >= 0))
    def _():
        o_ref[...] = acc_ref[...]


@pytest.mark.parametrize("kernel", [_kernel, _guarded_by_cond], ids=["pl.when", "lax.cond and a compound guard"])
def test_kernel_flow_evaluates_each_writes_guard_at_every_grid_point_and_follows_refs(kernel):
    from grader.toolkit import KernelFlow
    a = jnp.ones((4, 8), jnp.bfloat16)
    b = jnp.ones((8, 6), jnp.bfloat16)

    def fn(a, b):
        return pl.pallas_call(
            kernel, grid=(2, 2, 2),
            in_specs=[pl.BlockSpec((2, 4), lambda i, j, kk: (i, kk)), pl.BlockSpec((4, 3), lambda i, j, kk: (kk, j))],
            out_specs=pl.BlockSpec((2, 3), lambda i, j, kk: (i, j)),
            out_shape=jax.ShapeDtypeStruct((4, 6), jnp.float32),
            scratch_shapes=[pltpu.VMEM((2, 3), jnp.float32)])(a, b)

    kf = KernelFlow(_kernel_view(fn, a, b))
    a_ref, b_ref, out, acc = range(4)
    points = {(i, j, kk) for i in range(2) for j in range(2) for kk in range(2)}
    steps = {}
    for w, ref, _ in kf.writes:
        steps.setdefault(ref, []).append(kf.steps(w))
    assert sorted(steps[acc], key=len) == [{p for p in points if p[2] == 0}, points]  # the reset, the update
    assert steps[out] == [{p for p in points if p[2] == 1}]
    assert kf.refs[acc] in kf.reach(a_ref) and kf.refs[out] in kf.reach(b_ref)  # through the scratch buffer
    (update,) = [v for w, ref, v in kf.writes if ref == acc and kf.steps(w) == points]
    assert kf.refs[acc] in kf.sources(update) and "dot_general" in kf.primitives(kf.sources(update))
    assert [kf.ref_index(r.in_nodes[0]) for r in kf.eqns if r.primitive == "get"] == [acc, a_ref, b_ref, acc]


def test_kernel_flow_says_none_where_a_guard_depends_on_data():
    from grader.toolkit import KernelFlow

    def kernel(x_ref, o_ref):
        @pl.when(x_ref[0, 0] > 0)
        def _():
            o_ref[...] = x_ref[...]

    x = jnp.ones((8, 128), jnp.float32)
    call = _kernel_view(lambda x: pl.pallas_call(kernel, grid=(1,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                                                 out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                                                 out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(x), x)
    kf = KernelFlow(call)
    assert [kf.steps(w) for w, _, _ in kf.writes] == [None]


def test_mosaics_message_is_cut_to_plain_words_without_python_reprs():
    """Issue 46: the refusal ended "in memory space <MemorySpace.DEFAULT: 'default'>"."""
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1\n"
            "ValueError: Block spec for args[0] in pallas_call <the verifier> has block shape (1, 128), array shape "
            "(2048, 2048), in memory space <MemorySpace.DEFAULT: 'default'>. See details at https://docs.jax.dev/x\n"
            "got dtype('float32') for <function kernel at 0x7f3a2b> in <Kind.VMEM: 2>")
    out = tpu_compile.cut(text)
    assert "in the default memory space." in out and "your pallas_call" in out
    assert "<" not in out and "0x" not in out and "dtype(" not in out, out
    assert "got float32 for kernel in vmem" in out

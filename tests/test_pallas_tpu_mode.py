"""Kernels graded as a TPU runs them (issue 43): TPU interpret mode on the trusted side, index maps run at every
grid point and read fail-closed, and a compile row that compiles the graded kernel only.

The gallery files of the five Pallas problems grade the same faults end to end (``python -m grader gallery``,
in the sweep); these tests pin the mechanisms: what the interpreter's faults are said as, the table of
evaluated index maps, the kernel signature, and the compile record's statuses.
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

from grader.boundary import program  # noqa: E402
from grader.toolkit import Trace, block_indices, pallas_calls, revisited_output, tpu_compiles, unevaluated  # noqa: E402
from grader.verifier import kernel_signature, rebuild, tpu_compile, verify  # noqa: E402


def _acc_kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def matmul(a, b, bm=2, bn=3, bk=4, a_map=None, out_map=None, grid_order=None, semantics=None, kernel=None):
    (m, k), n = a.shape, b.shape[1]
    grid = (m // bm, n // bn, k // bk)
    return pl.pallas_call(
        kernel or _acc_kernel, grid=grid,
        in_specs=[pl.BlockSpec((bm, bk), a_map or (lambda i, j, kk: (i, kk))),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), out_map or (lambda i, j, kk: (i, j))),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=semantics or ("parallel", "parallel", "arbitrary")),
    )(a, b)


A = np.random.default_rng(0).uniform(-2, 2, (4, 8)).astype(np.float32)
B = np.random.default_rng(1).uniform(-2, 2, (8, 6)).astype(np.float32)


def _run(fn):
    """``fn`` traced, handed over as data, rebuilt and run as the verifier does: (outputs or the fault said,
    the rebuilt program)."""
    closed = jax.make_jaxpr(fn)(A, B)
    data = json.loads(json.dumps(program.ProgramEncoder().program(closed)))
    rebuilt = rebuild.rebuild(data)
    try:
        return rebuild.run_program(rebuilt, [A, B])[0], rebuilt
    except Exception as exc:  # noqa: BLE001 - the fault is what is tested
        return verify.kernel_fault(exc, rebuilt) or f"unexplained: {exc}", rebuilt


def test_a_right_kernel_gives_the_same_numbers_as_generic_interpret_mode():
    out, _ = _run(matmul)
    np.testing.assert_allclose(out, A @ B, rtol=1e-5, atol=1e-5)


def test_an_index_map_past_the_end_is_a_fault_naming_the_operand_block_and_step():
    said, _ = _run(lambda a, b: matmul(a, b, a_map=lambda i, j, kk: (i, jnp.where(kk == 1, kk + 5, kk))))
    assert isinstance(said, str) and said.startswith("A block outside its array"), said
    assert "grid step (0, " in said and "block (0, 6)" in said and "`args[0]`" in said
    assert "(blocks of (2, 4))" in said and "shape (4, 8)" in said


def test_a_slice_past_its_block_is_a_fault_naming_the_buffer_and_step():
    def kernel(a_ref, b_ref, o_ref, acc_ref):
        kk = pl.program_id(2)

        @pl.when(kk == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        start = jnp.where(kk == 1, 2, 0)
        acc_ref[...] += jnp.dot(a_ref[pl.ds(start, 2), :], b_ref[...], preferred_element_type=jnp.float32)

        @pl.when(kk == 1)
        def _():
            o_ref[...] = acc_ref[...]

    said, _ = _run(lambda a, b: matmul(a, b, kernel=kernel))
    assert isinstance(said, str) and said.startswith("A read outside a buffer at grid step (0, "), said
    assert "[2:4, 0:4]" in said and "shape (2, 4)" in said


def test_an_output_block_left_and_come_back_to_is_a_fault_and_fails_the_grid_row():
    def contraction_first(a, b):
        (m, k), n = a.shape, b.shape[1]

        def kernel(a_ref, b_ref, o_ref):
            @pl.when(pl.program_id(0) == 0)
            def _():
                o_ref[...] = jnp.zeros_like(o_ref)
            o_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
        return pl.pallas_call(kernel, grid=(k // 4, m // 2, n // 3),
                              in_specs=[pl.BlockSpec((2, 4), lambda kk, i, j: (i, kk)),
                                        pl.BlockSpec((4, 3), lambda kk, i, j: (kk, j))],
                              out_specs=pl.BlockSpec((2, 3), lambda kk, i, j: (i, j)),
                              out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32))(a, b)

    said, _ = _run(contraction_first)
    assert isinstance(said, str) and said.startswith("An output block the grid comes back to"), said
    call = _view(contraction_first)
    row = revisited_output(call)
    assert row is not None and not row.passed and "visited again at step (1, 0, 0)" in row.message, row


def test_a_scratch_buffer_read_before_it_is_written_holds_nan():
    def kernel(a_ref, b_ref, o_ref, acc_ref):  # never zeroed
        acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == 1)
        def _():
            o_ref[...] = acc_ref[...]

    out, _ = _run(lambda a, b: matmul(a, b, kernel=kernel))
    assert np.isnan(out).all()


def test_a_reduction_axis_marked_parallel_gets_wrong_numbers():
    out, _ = _run(lambda a, b: matmul(a, b, semantics=("parallel", "parallel", "parallel")))
    assert not np.allclose(out, A @ B, atol=1e-3, equal_nan=False)


def test_dimension_semantics_that_do_not_match_the_grid_are_said_in_a_sentence():
    said, _ = _run(lambda a, b: matmul(a, b, semantics=("parallel", "arbitrary")))
    assert isinstance(said, str) and "2 dimension semantics for a grid of 3 axes" in said, said


# ------------------------------------------------------------------------------------------------------
# Index maps: run at every grid point by the verifier, read fail-closed by the checks

def _view(fn, evaluate=True):
    """The first pallas_call of ``fn`` as the checks see it, from the verifier's serialiser."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "grader" / "learner" / "child.py"
    spec = importlib.util.spec_from_file_location("jaxplay_child_for_tpu_mode_tests", path)
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    jaxpr = child.JaxprSerializer(child.start_jax(), evaluate=evaluate).jaxpr(jax.make_jaxpr(fn)(A, B))
    return pallas_calls(Trace(args={}, jaxpr=jaxpr, input_names=[], output_names=[]))[0]


def test_an_index_map_the_equations_cannot_say_is_run_at_every_grid_point():
    fn = lambda a, b: matmul(a, b, a_map=lambda i, j, kk: (jnp.abs(i) % 7, jnp.abs(kk)))  # noqa: E731
    call = _view(fn)
    assert [block_indices(call, 0, (i, j, kk)) for i, j, kk in [(1, 0, 1), (0, 1, 0)]] == [[1, 1], [0, 0]]
    assert unevaluated(call, [0, 1, 2]) is None


def test_without_the_table_an_index_map_nothing_evaluated_fails_closed():
    fn = lambda a, b: matmul(a, b, a_map=lambda i, j, kk: (jnp.cos(i * 1.0).astype(jnp.int32) * 0 + i, kk))  # noqa: E731
    call = _view(fn, evaluate=False)
    assert block_indices(call, 0, (0, 0, 0)) is None
    said = unevaluated(call, [0])
    assert said and "could not be evaluated at grid step (0, 0, 0)" in said
    assert block_indices(_view(fn), 0, (1, 0, 1)) == [1, 1]  # the verifier ran it


# ------------------------------------------------------------------------------------------------------
# The compile row compiles the graded kernel

def _signature(fn, *shapes):
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    return kernel_signature.signature(jax.make_jaxpr(fn)(*args))


def test_the_same_kernel_at_two_sizes_has_one_signature_up_to_the_sizes():
    small = _signature(lambda a, b: matmul(a, b, 2, 3, 4), (4, 8), (8, 6))
    big = _signature(lambda a, b: matmul(a, b, 128, 128, 128), (2048, 2048), (2048, 2048))
    facts_small = {"a": [4, 8], "b": [8, 6], "bm": 2, "bn": 3, "bk": 4}
    facts_big = {"a": [2048, 2048], "b": [2048, 2048], "bm": 128, "bn": 128, "bk": 128}
    assert kernel_signature.differs(small, big, facts_small, facts_big) is None


def test_another_kernel_body_or_other_blocks_at_the_tpu_size_differ():
    facts_small = {"a": [4, 8], "b": [8, 6], "bm": 2, "bn": 3, "bk": 4}
    facts_big = {"a": [2048, 2048], "b": [2048, 2048], "bm": 128, "bn": 128, "bk": 128}
    small = _signature(lambda a, b: matmul(a, b, 2, 3, 4), (4, 8), (8, 6))

    def other(a_ref, b_ref, o_ref, acc_ref):
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    body = _signature(lambda a, b: matmul(a, b, 128, 128, 128, kernel=other), (2048, 2048), (2048, 2048))
    assert "different kernel body" in kernel_signature.differs(small, body, facts_small, facts_big)
    rows = _signature(lambda a, b: matmul(a, b, 8, 128, 128), (2048, 2048), (2048, 2048))  # bm ignored there
    said = kernel_signature.differs(small, rows, facts_small, facts_big)
    assert said and "not the same function of the sizes" in said, said


def test_a_different_kernel_at_the_tpu_size_fails_the_row(monkeypatch):
    monkeypatch.setattr(tpu_compile, "compile_record", lambda *a: {"status": "compiled", "kernels": [{"kernel": "x"}]})
    result = {"status": "ok", "traces": [{"kernels": [{"kernel": "y"}], "args": {}}], "tpu_trace": {"program": {}}}
    tpu_compile.attach({"tpu_compile": {"args": []}, "args": []}, result)
    record = result["traces"][0]["tpu"]
    assert record["status"] == "different_kernel" and "different kernel" in record["message"]
    row = tpu_compiles(Trace(args={}, jaxpr={"eqns": []}, tpu=record))
    assert not row.passed and row.checked


def test_a_compile_without_a_verdict_fails_the_row_and_only_a_server_without_libtpu_is_unchecked(monkeypatch):
    monkeypatch.setattr(tpu_compile, "extra_missing", lambda: None)

    class Broke:
        def take(self, **_):
            raise tpu_compile.CompileHelperBroke("the TPU compile process stopped (exit 1)")

    monkeypatch.setattr(tpu_compile, "_helpers", Broke())
    record = tpu_compile.compile_record({"format": 1, "unique": 1})
    row = tpu_compiles(Trace(args={}, jaxpr={"eqns": []}, tpu=record))
    assert record["server"] and not row.checked and "Install requirements-tpu.txt" in row.message
    assert tpu_compile.compile_record({"format": 1, "unique": 2}, budget_s=0)["status"] == "failed"
    for record in ({"status": "failed", "message": "m"}, {"status": "not_checked", "message": "m"}):
        row = tpu_compiles(Trace(args={}, jaxpr={"eqns": []}, tpu=record))
        assert not row.passed and row.checked  # "not checked" without the server's reason is never accepted


@pytest.mark.parametrize("text, start", [
    ('IndexError: Out-of-bounds block index (1, -1) for input "x_ref" in iteration (1, 0) on device 0 (core 0): '
     "reading [(slice(2, 4, 1), slice(-4, 0, 1))] but input has shape (4, 16).", "A block outside its array"),
    ("ValueError: Out-of-bounds write of (0 0 vmem 7): writing [(slice(8, 16, 1),)] but buffer has shape (8,) .",
     "A write outside a buffer"),
    ("RuntimeError: Revisited block (slice(0, 2, 1), slice(0, 3, 1)) of output 0 in iteration (1, 0, 0). The block "
     "was previously visited in iterations (0, 0, 0) through (0, 0, 0) .", "An output block the grid comes back to"),
])
def test_each_fault_of_tpu_interpret_mode_is_said_in_a_sentence(text, start):
    said = program.kernel_fault(text, [("x", (2, 4), (4, 16))])
    assert said and said.startswith(start) and "slice(" not in said, said

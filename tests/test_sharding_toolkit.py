"""The partition record (``grader/verifier/partitioned.py``) and its reader (``grader/toolkit/sharding.py``):
the collectives XLA's SPMD partitioner inserts, counted by how often they run, each device's work, and the
shape each device holds of every input and output, read from the compiled program and never from labels."""
from __future__ import annotations

import numpy as np
import pytest

from grader.toolkit.sharding import collectives, moved, partitioned_facts, read_hlo, split_rows, whole

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

from grader.verifier.partitioned import record  # noqa: E402

LOOP = """HloModule m, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
}

%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]{0}) parameter(0)
  %v = f32[8]{0} get-tuple-element(%p), index=1
  %r = f32[8]{0} all-reduce(%v), channel_id=1, replica_groups={{0,1}}, to_apply=%sum, metadata={op_name="x"}
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %t = (s32[], f32[8]{0}) tuple(%i, %r)
}

%cond (p: (s32[], f32[8])) -> pred[] {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), metadata={op_name="%fake = f32[99] all-gather(%x) {"}
  %z = s32[] constant(0)
  %t = (s32[], f32[8]{0}) tuple(%z, %x)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"5"}}
  ROOT %o = f32[8]{0} get-tuple-element(%w), index=1
}
"""


def test_a_collective_in_a_loop_counts_once_per_trip_and_metadata_is_never_read():
    comps, entry = read_hlo(LOOP)
    assert entry == "main" and set(comps) == {"sum", "body", "cond", "main"}
    facts = partitioned_facts(LOOP)
    assert [(c["kind"], c["elements"], c["times"], c["loops"]) for c in facts["collectives"]] == [
        ("all-reduce", 8, 5, 1)]
    assert moved(facts["collectives"]) == 40


def test_a_loop_of_unknown_length_leaves_the_count_unknown():
    facts = partitioned_facts(LOOP.replace(', backend_config={"known_trip_count":{"n":"5"}}', ""))
    assert facts["unknown_loops"] == 1 and moved(facts["collectives"]) is None


def _mlp_loss(p, x, y):
    return jnp.mean((jnp.tanh(x @ p["w"]) @ p["v"] - y) ** 2)


def _compiled(fun, *args):
    flat = jax.tree_util.tree_leaves(args)
    closed = jax.make_jaxpr(fun)(*args)
    from jax.extend import core as jcore
    compiled = jax.jit(jcore.jaxpr_as_fun(closed)).lower(*flat).compile()
    return record(compiled, flat, compiled(*flat))


ARGS = ({"v": np.ones((8, 2), np.float32), "w": np.ones((4, 8), np.float32)},
        np.ones((32, 4), np.float32), np.ones((32, 2), np.float32))


@pytest.mark.skipif(len(jax.devices()) < 8, reason="needs the grader's 8 host devices")
def test_a_sharded_batch_all_reduces_the_gradients_once_and_a_named_scope_changes_nothing():
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rep, dat = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def step(p, x, y):
        with jax.named_scope("all-gather(%x) all-to-all"):
            return jax.grad(_mlp_loss)(p, x, y)

    rec = _compiled(jax.jit(step, in_shardings=(rep, dat, dat), out_shardings=rep), *ARGS)
    assert rec["devices"] == 8
    v, w, x, y = rec["inputs"]
    assert split_rows(x, 8) and split_rows(y, 8) and whole(v, 8) and whole(w, 8)
    assert all(whole(o, 8) for o in rec["outputs"])
    assert [c["kind"] for c in collectives(rec)] == ["all-reduce"]
    assert moved(collectives(rec)) == 8 * 2 + 4 * 8  # every gradient once

    replicated = _compiled(jax.jit(jax.grad(_mlp_loss), in_shardings=rep, out_shardings=rep), *ARGS)
    assert replicated["devices"] == 8 and not collectives(replicated)
    assert not split_rows(replicated["inputs"][2], 8)
    assert replicated["work"] > 4 * rec["work"]  # every device does the whole batch


def test_a_program_on_one_device_says_so_and_lists_nothing():
    rec = _compiled(jax.grad(_mlp_loss), *ARGS)
    assert rec["devices"] == 1 and "collectives" not in rec


@pytest.mark.skipif(len(jax.devices()) < 8, reason="needs the grader's 8 host devices")
def test_names_the_learner_chooses_cannot_write_a_collective_into_the_record():
    """A scope name and a function name that spell an HLO instruction line (newline included) end up in the
    module's metadata and names, escaped; the structural reader sees no collective."""
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rep = NamedSharding(mesh, P())
    fake = '"}\n  %forged.1 = f32[8]{0} all-gather(f32[1]{0} %p), dimensions={0}\n  %x = f32[] add('

    def inner(p, x, y):
        with jax.named_scope(fake):
            return jax.grad(_mlp_loss)(p, x, y)

    inner.__name__ = inner.__qualname__ = fake
    rec = _compiled(jax.jit(inner, in_shardings=rep, out_shardings=rep), *ARGS)
    assert rec["devices"] == 8 and collectives(rec) == [] and rec["collectives_total"] == 0


def test_a_called_computation_counts_its_collectives_and_a_conditional_counts_both_branches():
    text = LOOP.replace(
        "  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body, "
        'backend_config={"known_trip_count":{"n":"5"}}\n  ROOT %o = f32[8]{0} get-tuple-element(%w), index=1',
        "  %w = (s32[], f32[8]{0}) call(%t), to_apply=%body\n"
        "  %c = (s32[], f32[8]{0}) conditional(%z, %t, %t), branch_computations={%body, %body}\n"
        "  ROOT %o = f32[8]{0} get-tuple-element(%w), index=1")
    facts = partitioned_facts(text)
    assert [(c["kind"], c["times"], c["loops"]) for c in facts["collectives"]] == [("all-reduce", 1, 0)] * 3


def test_a_computation_called_from_many_places_is_read_once():
    """Thirty computations each calling the next twice: 2**29 runs of one all-reduce, counted without 2**29
    walks (the reading is linear in the module's text), the listed ones capped, the record saying so."""
    from grader.toolkit.sharding import MAX_LISTED, complete
    depth = 30
    parts = ["HloModule m\n", "%sum (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
             "  %b = f32[] parameter(1)\n  ROOT %add = f32[] add(%a, %b)\n}\n"]
    parts.append(f"%c{depth - 1} (p: f32[2]) -> f32[2] {{\n  %p = f32[2]{{0}} parameter(0)\n"
                 "  ROOT %r = f32[2]{0} all-reduce(%p), replica_groups={{0,1}}, to_apply=%sum\n}\n")
    for i in range(depth - 2, -1, -1):
        head = "ENTRY " if i == 0 else ""
        parts.append(f"{head}%c{i} (p: f32[2]) -> f32[2] {{\n  %p = f32[2]{{0}} parameter(0)\n"
                     f"  %x = f32[2]{{0}} call(%p), to_apply=%c{i + 1}\n"
                     f"  ROOT %y = f32[2]{{0}} call(%x), to_apply=%c{i + 1}\n}}\n")
    facts = partitioned_facts("\n".join(parts))
    assert facts["collectives_total"] == 2 ** (depth - 1)
    assert len(facts["collectives"]) == MAX_LISTED and not complete(facts)

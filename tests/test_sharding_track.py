"""The sharding track (issue 45) on Home: after the JAX track's topics and before the Pallas track, its
problems in the order they build on each other."""
from __future__ import annotations

import problems


def test_the_sharding_track_comes_after_the_jax_track_and_before_pallas():
    topics = list(problems.by_topic())
    assert topics[-2:] == ["Sharding", "Pallas"], topics
    track = problems.by_topic()["Sharding"]
    assert [p.track_order for p in track] == list(range(1, len(track) + 1)), [(p.slug, p.track_order) for p in track]
    assert track[0].slug == "data-parallel-train-step"


def _reference(problem):
    import types
    module = types.ModuleType("reference")
    exec(compile(problem.reference, str(problem.folder / "reference.py"), "exec"), module.__dict__)
    return module.__dict__[problem.entry]


def test_the_references_collectives_agree_with_an_independent_compile():
    """The record the checks read (the verifier's rebuild, read structurally) against JAX's own jit of the
    reference, its all-reduces counted from the compiled text with a plain search."""
    import re
    from dataclasses import asdict

    import jax
    import numpy as np
    from jax.extend import core as jcore

    from grader.learner import child
    from grader.toolkit.sharding import collectives, moved
    from grader.verifier.partitioned import record

    t = child.import_jax()
    want = {"data-parallel-train-step": lambda a: sum(np.size(v) for v in a[0].values()) + 1,
            "tensor-parallel-mlp": lambda a: np.size(a[0])}
    for slug, numbers in want.items():
        problem = problems.get(slug)
        specs = [asdict(a) for a in problem.args]
        args = child.build_args(t, problem.examples[0].inputs, specs)
        fn = _reference(problem)
        closed = jax.make_jaxpr(fn)(*args)
        flat = jax.tree_util.tree_leaves(args)
        compiled = jax.jit(jcore.jaxpr_as_fun(closed)).lower(*flat).compile()
        rec = record(compiled, flat, compiled(*flat))
        text = jax.jit(fn).lower(*args).compile().as_text()
        independent = re.findall(r"^\s*(?:ROOT )?%\S+ = (.*?) all-reduce(?:-start)?\(", text, re.M)
        assert [c["kind"] for c in collectives(rec)] == ["all-reduce"] * len(independent) == ["all-reduce"], slug
        sizes = sum(int(np.prod([int(d) for d in dims.split(",") if d] or [1]))
                    for dims in re.findall(r"\[([\d,]*)\]", independent[0]))
        assert moved(collectives(rec)) == sizes == numbers(args), slug
        assert rec["devices"] == 8

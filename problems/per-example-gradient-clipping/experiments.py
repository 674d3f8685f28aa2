"""Experiments for per-example-gradient-clipping, run by the verifier on the rebuilt program (trusted side).

``batched-per-example-grads`` asks for "all B per-example gradients with one batched backward pass". That is
a claim about values: the program is evaluated on fresh parameters and data that never entered the learner's
process, and the grader looks, among the values it computes outside any loop, for an array that holds every
example's gradient of every parameter at once (an axis of length B beside the parameter's own axes), up to a
constant factor. How it is computed (``jax.vmap`` of ``jax.grad``, ``vjp`` under ``vmap``, a batched backward
pass written by hand) is the learner's; a loop over the examples computes them one step at a time, and a
Python loop computes B separate gradients, neither of which is one array.
"""
import secrets

LEAVES = ("w1", "b1", "w2", "b2")


def _loss(jnp, params, x, y):
    """One example's loss, as the statement defines it."""
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return (hidden @ params["w2"] + params["b2"] - y) ** 2


_ORACLES: dict = {}


def per_example_gradients(program):
    """``{"examples": B, "leaves": {leaf: [{"path", "k", "axis", "c"}, ...]}}``: where the program holds every
    example's gradient of each parameter at once, outside any loop, on two independent draws (a result counts
    when it holds them on both, with the same factor)."""
    jax, jnp = program.jax, program.jnp
    from grader.verifier.experiments import find_batched
    if "per_example" not in _ORACLES:  # jitted once per process: one compile per shape for every program
        _ORACLES["per_example"] = jax.jit(jax.vmap(jax.grad(lambda p, a, b: _loss(jnp, p, a, b)), in_axes=(None, 0, 0)))
    per_example = _ORACLES["per_example"]
    found = None
    for _ in range(2):
        fresh = program.randomized(secrets.randbits(32), only=("params", "x", "y"))
        values = program.values(outside_loops=True, **fresh)
        oracle = per_example(fresh["params"], fresh["x"], fresh["y"])
        here = {leaf: {(m["path"], m["k"]): m for m in find_batched(values, oracle[leaf])} for leaf in LEAVES}
        if found is None:
            found = here
        else:  # the same results, with the same factor, on both draws
            found = {leaf: {key: m for key, m in found[leaf].items() if key in here[leaf]
                            and abs(here[leaf][key]["c"] - m["c"]) <= 1e-3 * max(1.0, abs(m["c"]))}
                     for leaf in LEAVES}
    return {"examples": int(program.args["x"].shape[0]),
            "leaves": {leaf: list(found[leaf].values()) for leaf in LEAVES}}


EXPERIMENTS = {"per_example": per_example_gradients}

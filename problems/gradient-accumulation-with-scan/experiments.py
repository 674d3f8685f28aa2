"""Experiments for gradient-accumulation-with-scan, run by the verifier on the rebuilt program (trusted side).

``grad-inside-scan`` asks that each step of the scan "runs the forward and backward pass of one microbatch".
That is a claim about values, so it is measured: the program is evaluated on fresh parameters and data that
never entered the learner's process, and at every step of each loop of ``num_microbatches`` steps the grader
looks, among every value the loop's body computes, for that step's microbatch's loss and for the gradient of
that loss with respect to each parameter (up to a constant factor: a sum or a mean over the rows, divided by
``num_microbatches`` early or late). How the body computes them (``jax.value_and_grad``, ``jax.vjp``, a
backward pass written out by hand) is the learner's choice; where they are, the checks follow the data flow
(``checks.py``).
"""
import secrets

LEAVES = ("w1", "b1", "w2", "b2")


def _loss(jnp, params, x, y):
    """The statement's loss of one microbatch (its mean over the microbatch's rows)."""
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


_ORACLES: dict = {}


def _oracle(jax, jnp):
    """One microbatch's loss and gradient, jitted once per process (XLA's cache then keeps one compile per
    shape, shared by every program graded here)."""
    if "value_and_grad" not in _ORACLES:
        _ORACLES["value_and_grad"] = jax.jit(jax.value_and_grad(lambda p, a, b: _loss(jnp, p, a, b)))
    return _ORACLES["value_and_grad"]


def per_step_loss_and_gradient(program):
    """``_per_step`` on two independent draws; where a share is not found on the first (two targets that happen
    to lie within rounding of each other can pair a step with the wrong one), a second, fresh attempt."""
    first = _per_step(program)
    if all(_whole(found, key) for found in first["loops"].values() for key in ("loss",) + LEAVES):
        return first
    again = _per_step(program)
    for path, found in first["loops"].items():
        for key, matches in again["loops"].get(path, {}).items():
            if key != "steps" and matches:
                found[key] = list(found.get(key) or []) + matches  # each attempt consistent on its own draws
    return first


def _whole(found: dict, key: str) -> bool:
    """Whether some result holds every share once, over both draws (an order that is a permutation)."""
    steps = 2 * int(found.get("steps") or 0)
    return any(sorted(m["order"]) == list(range(steps)) for m in found.get(key) or [])


def _per_step(program):
    """For every loop whose number of steps L divides the batch: where its body holds, at each step, the loss of
    one share of B / L consecutive rows and the gradient of that loss for each parameter
    (``{"loops": {path: {"steps": L, "loss": [...], "w1": [...], ...}}}``, each a list of ``{"path", "k",
    "c", "order"}``: the body's result, the constant it is off by, and the share each step holds).

    The program is evaluated twice, on two independent draws of parameters and data; a result counts only if it
    holds the same multiple of the shares in both (``order`` covers the 2L steps: the first L index the first
    draw's shares, the next L the second's), so that no value that happens to be proportional to a small target
    on one draw is taken for it."""
    jax, jnp = program.jax, program.jnp
    from grader.verifier.experiments import find_per_step
    draws = [program.randomized(secrets.randbits(32), only=("params", "x", "y")) for _ in range(2)]
    batch = draws[0]["x"].shape[0]
    value_and_grad = _oracle(jax, jnp)
    loops = {}
    for loop in program.loops():
        steps_per_draw = loop.length
        if not steps_per_draw or batch % steps_per_draw:
            continue
        rows = batch // steps_per_draw
        steps = []
        for fresh in draws:
            got = program.steps(loop, **fresh)
            if len(got) != steps_per_draw:
                break
            steps += got
        else:
            found = {"steps": steps_per_draw}
            # the shares each step may hold: consecutive rows (microbatch j is rows jS..(j+1)S-1), or every
            # L-th row (a strided split, whose rows microbatch-rows-only judges)
            for split, part in (("", lambda m: slice(m * rows, (m + 1) * rows)),
                                ("strided:", lambda m: slice(m, batch, steps_per_draw))):
                losses, grads = [], []
                for fresh in draws:
                    for m in range(steps_per_draw):
                        loss, grad = value_and_grad(fresh["params"], fresh["x"][part(m)], fresh["y"][part(m)])
                        losses.append(loss)
                        grads.append(grad)
                found[split + "loss"] = find_per_step(steps, losses)
                for leaf in LEAVES:
                    found[split + leaf] = find_per_step(steps, [g[leaf] for g in grads])
            loops[loop.path] = found
    return {"loops": loops, "microbatches": program.args["num_microbatches"]}


EXPERIMENTS = {"per_step": per_step_loss_and_gradient}

"""`jax.value_and_grad` runs in the scan body on an irrelevant function (times zero), beside a backward pass
written by hand that computes each microbatch's gradient: the decoy decides nothing, and each step does
compute its microbatch's forward and backward pass.

expect: accepted
"""
import jax
import jax.numpy as jnp


def _manual(params, x, y):
    z = x @ params["w1"] + params["b1"]
    h = jnp.tanh(z)
    o = h @ params["w2"] + params["b2"]
    r = 2.0 * (o - y) / x.shape[0]
    dz = (r @ params["w2"].T) * (1.0 - h ** 2)
    grads = {"w1": x.T @ dz, "b1": dz.sum(0), "w2": h.T @ r, "b2": r.sum(0)}
    return jnp.sum((o - y) ** 2) / x.shape[0], grads


def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs, ys = x.reshape(n, -1, x.shape[1]), y.reshape(n, -1, y.shape[1])

    def step(carry, batch):
        _, decoy = jax.value_and_grad(lambda p: sum(jnp.sum(v ** 2) for v in jax.tree.leaves(p)))(params)
        loss, grads = _manual(params, *batch)
        grads = jax.tree.map(lambda g, d: g + 0.0 * d, grads, decoy)
        return jax.tree.map(jnp.add, carry, (loss, grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": loss / n, "grads": jax.tree.map(lambda g: g / n, grads)}

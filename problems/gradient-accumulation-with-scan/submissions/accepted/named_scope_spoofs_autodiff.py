"""A hand-written backward pass whose equations are named like autodiff's (``jvp(...)``,
``transpose(jvp(...))``): the names decide nothing either way; each step computes its microbatch's loss and
gradient, so it is accepted.

expect: accepted
"""
import jax, jax.numpy as jnp
from jax import lax
def loss_fn(p, x, y):
    o = jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]
def manual(p, x, y):
    S = x.shape[0]
    with jax.named_scope("jvp(loss)"):
        a = x @ p["w1"] + p["b1"]; h = jnp.tanh(a); o = h @ p["w2"] + p["b2"]
        r = o - y; l = jnp.sum(r ** 2) / S
    with jax.named_scope("transpose(jvp(loss))"):
        do = 2 * r / S
        da = (do @ p["w2"].T) * (1 - h ** 2)
        g = {"w1": x.T @ da, "b1": da.sum(0), "w2": h.T @ do, "b2": do.sum(0)}
    return l, g
def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1]); ys = y.reshape(n, -1, y.shape[1])
    def step(c, b):
        l, g = manual(params, *b)
        return (c[0] + l, jax.tree.map(jnp.add, c[1], g)), None
    (l, g), _ = lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": l / n, "grads": jax.tree.map(lambda t: t / n, g)}

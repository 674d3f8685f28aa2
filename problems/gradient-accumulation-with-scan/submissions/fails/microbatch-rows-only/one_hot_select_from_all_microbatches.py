"""One hot select from all microbatches.

expect: requirements_not_met
fails: microbatch-rows-only
"""
import jax, jax.numpy as jnp
from jax import lax
def loss_fn(p, x, y):
    o = jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]
def grad_accumulation(params, x, y, num_microbatches):
    # python loop over microbatches hidden inside ONE scan step of length n? No: scan step j does all n
    n = num_microbatches; S = x.shape[0] // n
    def step(c, j):
        # every step processes its own rows via a one-hot contraction over the full reshaped batch
        xs = x.reshape(n, S, -1); ys = y.reshape(n, S, -1)
        oh = jax.nn.one_hot(j, n)
        xb = jnp.einsum("n,nsd->sd", oh, xs); yb = jnp.einsum("n,nsk->sk", oh, ys)
        l, g = jax.value_and_grad(loss_fn)(params, xb, yb)
        return (c[0] + l, jax.tree.map(jnp.add, c[1], g)), None
    (l, g), _ = lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), jnp.arange(n))
    return {"loss": l / n, "grads": jax.tree.map(lambda t: t / n, g)}

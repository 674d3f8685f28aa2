"""grad of a Python loop over tiled params.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# One jax.grad call, with respect to per-example copies of the parameters, but the function it
# differentiates is a Python loop over the examples (x[n], y[n]): one backward pass that holds B unrolled
# copies of the per-example computation, not a batched one.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    tiled = jax.tree.map(lambda p: jnp.broadcast_to(p, (n,) + p.shape), params)
    total = lambda ps: sum(_loss(jax.tree.map(lambda a: a[i], ps), x[i], y[i]) for i in range(n))  # noqa: E731
    grads = jax.grad(total)(tiled)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}

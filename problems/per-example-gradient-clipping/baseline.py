"""The naive "before": a Python loop over the examples, one `jax.grad` per example, so the traced program
holds B copies of the forward and backward pass instead of one batched copy."""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return (hidden @ params["w2"] + params["b2"] - y) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    per_example = [jax.grad(_loss)(params, x[i], y[i]) for i in range(x.shape[0])]
    grads = jax.tree.map(lambda *g: jnp.stack(g), *per_example)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    norms = jnp.sqrt(sum(squares))
    factor = max_norm / jnp.maximum(norms, max_norm)

    def clip_and_average(g):
        return jnp.mean(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0)

    return {"grads": jax.tree.map(clip_and_average, grads), "norms": norms}

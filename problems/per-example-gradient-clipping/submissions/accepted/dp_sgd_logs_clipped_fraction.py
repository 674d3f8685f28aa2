"""A DP-SGD step that reports, from inside the compiled program, how many examples were clipped
(`jax.debug.print`, as training loops log it): the print only reads values, so the clipping is still
decided in the traced program, with `jnp.minimum`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def loss_fn(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.square(hidden @ params["w2"] + params["b2"] - y)


def clipped_mean_grad(params, x, y, max_norm):
    per_example = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, x, y)
    flat = jax.vmap(lambda g: ravel_pytree(g)[0])(per_example)
    norms = jnp.linalg.norm(flat, axis=-1)
    factors = jnp.minimum(1.0, max_norm / norms)
    jax.debug.print("clipped {c} of {b} examples", c=jnp.sum(norms > max_norm), b=norms.shape[0])
    grads = jax.tree.map(lambda g: jnp.einsum("b,b...->...", factors, g) / g.shape[0], per_example)
    return {"grads": grads, "norms": norms}

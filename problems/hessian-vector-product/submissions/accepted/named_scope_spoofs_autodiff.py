"""A product written out by hand inside `jax.named_scope("jvp(transpose(jvp(loss)))")`: a name stack that
only looks like autodiff's.

Forward-over-reverse is advice (the traced program cannot tell the ways apart); what decides is that no
D-by-D array is formed, and this program forms none.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    with jax.named_scope("jvp(transpose(jvp(loss)))"):
        n = x.shape[0]
        p = jax.nn.sigmoid(x @ w)
        grad = x.T @ (p - y) / n
        by_hand = x.T @ (p * (1 - p) * (x @ v)) / n
    return {"grad": grad, "hvp": by_hand}

"""take rows, reshaped keys.

expect: accepted
fails: none
"""
# Query rows picked with jnp.take inside the vmapped function (a gather on the query axis), keys flattened
# and reshaped back, and jax.jit around the vmap: indexing or reshaping the other axes is not a loop over the
# examples.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    keys = k.reshape(-1).reshape(k.shape)
    rows = []
    for t in range(q.shape[0]):
        q_t = jnp.take(q, t, axis=0)
        s = keys @ q_t * (q.shape[-1] ** -0.5)
        rows.append(jax.nn.softmax(s) @ v)
    return jnp.stack(rows)


attention = jax.jit(jax.vmap(attend))

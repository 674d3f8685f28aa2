"""A batch of queries against one example's keys, per example.

expect: requirements_not_met
fails: batched-not-looped
"""
# Each step of a Python loop runs a batched-looking product of *all* queries with example b's keys and then
# keeps row b: every equation has a batch axis, but the keys and values are taken one example at a time.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    outs = []
    for b in range(q.shape[0]):
        s = jnp.einsum("btd,sd->bts", q, k[b]) / jnp.sqrt(q.shape[-1])
        outs.append(jnp.einsum("bts,se->bte", jax.nn.softmax(s, axis=-1), v[b])[b])
    return jnp.stack(outs)

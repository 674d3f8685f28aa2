"""Log softmax then exp.

expect: accepted
fails: none
"""
# Hand-batched with `...` einsums; the weights are exp(log_softmax(s)): log_softmax subtracts the row
# maximum inside, and exp(s - m - log(sum(exp(s - m)))) never exceeds 1.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    s = jnp.einsum("...td,...sd->...ts", q, k) / jnp.sqrt(q.shape[-1])
    weights = jnp.exp(jax.nn.log_softmax(s, axis=-1))
    return jnp.einsum("...ts,...se->...te", weights, v)

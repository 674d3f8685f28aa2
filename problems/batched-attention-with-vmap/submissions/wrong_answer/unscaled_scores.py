"""Unscaled scores.

expect: wrong_answer
fails: none
"""
# Forgets the 1/sqrt(d) scaling of the scores.
import jax


def attend(q, k, v):
    return jax.nn.softmax(q @ k.T, axis=-1) @ v


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)

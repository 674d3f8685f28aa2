"""Scan over examples.

expect: requirements_not_met
fails: batched-not-looped
"""
# Right numbers, but lax.scan steps through the examples, stacking one output per step.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    def step(carry, example):
        qb, kb, vb = example
        s = qb @ kb.T / jnp.sqrt(qb.shape[-1])
        return carry, jax.nn.softmax(s, axis=-1) @ vb

    _, out = jax.lax.scan(step, None, (q, k, v))
    return out

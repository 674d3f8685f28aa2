"""No tensor parallelism: the whole block on one device. Right numbers.

expect: requirements_not_met
fails: column-parallel, row-parallel, one-all-reduce
"""
import jax.numpy as jnp


def megatron_mlp(x, w1, b1, w2, b2):
    return jnp.tanh(x @ w1 + b1) @ w2 + b2

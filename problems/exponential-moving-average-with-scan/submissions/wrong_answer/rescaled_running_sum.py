"""A scan that carries S_t = S_{t-1} + x_t / beta^t and outputs beta^t (m_0 + (1 - beta) S_t): the same
average on paper, but beta^-t overflows float32 for small beta over long sequences, and beta = 0 divides
by zero.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def ema(x, init, decay):
    def step(carry, row):
        total, power = carry
        power = power * decay
        total = total + row / power
        return (total, power), power * (init + (1.0 - decay) * total)

    _, averages = jax.lax.scan(step, (jnp.zeros_like(init), jnp.float32(1.0)), x)
    return {"averages": averages, "final": averages[-1]}

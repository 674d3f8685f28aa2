"""The tanh written out with `exp`, `(exp(2z) - 1) / (exp(2z) + 1)`: right for moderate pre-activations, NaN
once 2z passes float32 exp's range (z > 44), which the constraints allow (pre-activations up to 64).

expect: wrong_answer
fails: checkpoint-dots-saveable,checkpoint-inside-grad,tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _tanh(z):
    e = jnp.exp(2.0 * z)
    return (e - 1.0) / (e + 1.0)


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(lambda p: x + _tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                           policy=jax.checkpoint_policies.dots_saveable)
    value, grads = jax.value_and_grad(lambda p: jnp.mean((block(p) - y) ** 2))(params)
    return {"loss": value, "grads": grads}

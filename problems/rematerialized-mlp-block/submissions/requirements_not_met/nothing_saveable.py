"""`nothing_saveable` instead of `dots_saveable`: rows 1 and 3 both name the policy.

expect: requirements_not_met
fails: checkpoint-dots-saveable, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.nothing_saveable)
    value, grads = jax.value_and_grad(lambda p: jnp.mean((block(p, x) - y) ** 2))(params)
    return {"loss": value, "grads": grads}

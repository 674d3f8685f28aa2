"""`@jax.checkpoint` with no policy: the default recomputes everything, so neither the row that names
`dots_saveable` nor the row that asks for a differentiated `dots_saveable` region holding the tanh holds.

expect: requirements_not_met
fails: checkpoint-dots-saveable, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


@jax.checkpoint
def block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    value, grads = jax.value_and_grad(lambda p: jnp.mean((block(p, x) - y) ** 2))(params)
    return {"loss": value, "grads": grads}

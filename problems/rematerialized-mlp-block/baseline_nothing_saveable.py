"""The other end: `jax.checkpoint` with `nothing_saveable` keeps only the block's inputs and recomputes both
matrix products and the tanh in the backward pass."""
import jax
import jax.numpy as jnp


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.nothing_saveable)

    def loss_fn(p):
        return jnp.mean((block(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}

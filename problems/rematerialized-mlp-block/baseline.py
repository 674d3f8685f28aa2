"""The naive "before": the same block and loss differentiated without `jax.checkpoint`, so the backward pass
reads every activation the forward pass kept (the tanh output and its derivative among them)."""
import jax
import jax.numpy as jnp


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    def loss_fn(p):
        return jnp.mean((_block(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}

"""The same block stacked `LAYERS` deep (a `lax.scan` over the layers, as large models stack theirs)
and differentiated without `jax.checkpoint`: the backward pass reads every layer's activations, so they are
all alive at the end of the forward pass. Measured only for a TPU (insight.toml): one block shows nothing there."""
import jax
import jax.numpy as jnp

LAYERS = 16
"""Blocks in the stack; they share the one block's parameters, so the arguments are the problem's own."""


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = _block

    def loss_fn(p):
        h, _ = jax.lax.scan(lambda h, _: (block(p, h), None), x, None, length=LAYERS)
        return jnp.mean((h - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}

"""EasyLM's style: `remat = jax.remat`, a block object applied with `static_argnums`, its policy looked up by
name in a dict of `jax.checkpoint_policies`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp

remat = jax.remat

POLICIES = {
    "everything": jax.checkpoint_policies.everything_saveable,
    "nothing": jax.checkpoint_policies.nothing_saveable,
    "dots": jax.checkpoint_policies.dots_saveable,
    "dots_no_batch": jax.checkpoint_policies.dots_with_no_batch_dims_saveable,
}


class Block:
    def __init__(self, activation):
        self.activation = activation

    def __call__(self, params, x):
        hidden = self.activation(x @ params["w1"] + params["b1"])
        return x + hidden @ params["w2"] + params["b2"]


def _apply(block, params, x):
    return block(params, x)


def remat_mlp_block(params, x, y, policy_name="dots"):
    apply = remat(_apply, static_argnums=(0,), policy=POLICIES[policy_name])
    block = Block(jnp.tanh)

    def loss_fn(p):
        return jnp.mean((apply(block, p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}

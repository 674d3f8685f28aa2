"""The microbatch loss rematerialised with the `jax.remat` alias and the `checkpoint_dots` policy alias.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.remat, policy=jax.checkpoint_policies.checkpoint_dots)
def _loss(params, x, y):
    o = jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def step(acc, batch):
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        return jax.tree.map(jnp.add, acc, (loss, grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grads)}

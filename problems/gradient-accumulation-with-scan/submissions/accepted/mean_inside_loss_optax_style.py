"""optax-style: the mean formed inside the loss (`jnp.mean` of per-example sums), `jax.tree_util` calls,
and the accumulation scaled once at the end.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


def mlp(params, x):
    hidden = jnp.tanh(jnp.dot(x, params["w1"]) + params["b1"])
    return jnp.dot(hidden, params["w2"]) + params["b2"]


def loss_fn(params, batch):
    inputs, targets = batch
    per_example = jnp.sum(jnp.square(mlp(params, inputs) - targets), axis=-1)
    return jnp.mean(per_example)


def grad_accumulation(params, x, y, num_microbatches):
    batch = jax.tree_util.tree_map(lambda a: a.reshape((num_microbatches, -1) + a.shape[1:]), (x, y))
    grad_fn = jax.value_and_grad(loss_fn)

    def accumulate(state, microbatch):
        loss, grads = grad_fn(params, microbatch)
        return jax.tree_util.tree_map(jnp.add, state, (loss, grads)), None

    init = (jnp.zeros([], jnp.float32), jax.tree_util.tree_map(jnp.zeros_like, params))
    (loss, grads), _ = jax.lax.scan(accumulate, init, batch, unroll=2)
    scale = functools.partial(jnp.multiply, 1.0 / num_microbatches)
    return {"loss": scale(loss), "grads": jax.tree_util.tree_map(scale, grads)}

"""No data parallelism: the whole batch on one device, a plain `jax.value_and_grad`. Right numbers.

expect: requirements_not_met
fails: batch-sharded, params-replicated, gradients-all-reduced
"""
import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, x, y, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}

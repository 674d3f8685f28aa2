"""The pmap recipe, then `[0]` of the stacked result: the gradients are `pmean`ed once, but taking device 0's
copy of a mapped output makes XLA broadcast it from that device with a second all-reduce of every parameter
(68 numbers moved for 33 parameters). Right numbers, twice the communication.

expect: requirements_not_met
fails: gradients-all-reduced
"""
import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, x, y, lr):
    n = 8
    xs = x.reshape(n, x.shape[0] // n, x.shape[1])
    ys = y.reshape(n, y.shape[0] // n, y.shape[1])

    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, "batch")
        loss = jax.lax.pmean(loss, "batch")
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss

    new, loss = jax.pmap(update, axis_name="batch", in_axes=(None, 0, 0), devices=jax.devices()[:n])(params, xs, ys)
    return {"params": jax.tree.map(lambda a: a[0], new), "loss": loss[0]}

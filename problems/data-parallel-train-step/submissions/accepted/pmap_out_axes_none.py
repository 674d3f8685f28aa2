"""The pmap recipe: the batch reshaped to (8, B/8, ...) and mapped over the devices, gradients and loss
`pmean`ed over the mapped axis, and the replicated results returned unstacked (`out_axes=None`).

expect: accepted
fails: none
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

    new, loss = jax.pmap(update, axis_name="batch", in_axes=(None, 0, 0), out_axes=None,
                         devices=jax.devices()[:n])(params, xs, ys)
    return {"params": new, "loss": loss}

"""A backward pass written by hand in the scan body: each step computes its microbatch's loss and the
gradient of that loss, which is what the row asks for (how the gradient is computed is the learner's).

expect: accepted
"""
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])
    rows = xs.shape[1]

    def step(carry, batch):
        xb, yb = batch
        h = jnp.tanh(xb @ params["w1"] + params["b1"])
        o = h @ params["w2"] + params["b2"]
        loss = jnp.sum((o - yb) ** 2) / rows
        do = 2.0 * (o - yb) / rows            # backward pass written by hand
        dz = (do @ params["w2"].T) * (1.0 - h ** 2)
        grads = {"w1": xb.T @ dz, "b1": dz.sum(0), "w2": h.T @ do, "b2": do.sum(0)}
        return (carry[0] + loss, jax.tree.map(jnp.add, carry[1], grads)), None

    (loss, grads), _ = jax.lax.scan(step, (0.0, jax.tree.map(jnp.zeros_like, params)), (xs, ys))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grads)}

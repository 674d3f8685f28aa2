"""A never-called `jax.value_and_grad` lambda beside a scan whose steps only run the forward pass: the
gradients are computed after the scan, from per-microbatch values the scan stacked. The source mentions
autodiff inside the step's reach; the program does not differentiate any step.

expect: requirements_not_met
fails: grad-inside-scan, microbatch-rows-only, one-scan
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    n = num_microbatches
    xs = x.reshape(n, -1, x.shape[1])
    ys = y.reshape(n, -1, y.shape[1])
    autodiff = lambda b: jax.value_and_grad(_loss)(params, *b)  # noqa: E731 - never called

    def step(loss, batch):
        xb, yb = batch
        h = jnp.tanh(xb @ params["w1"] + params["b1"])
        o = h @ params["w2"] + params["b2"]
        return loss + jnp.sum((o - yb) ** 2) / xb.shape[0], (h, o)

    loss, (h, o) = jax.lax.scan(step, jnp.float32(0.0), (xs, ys))
    do = 2.0 * (o - ys) / (n * xs.shape[1])
    dz = jnp.einsum("nsk,hk->nsh", do, params["w2"]) * (1.0 - h ** 2)
    grads = {"w1": jnp.einsum("nsd,nsh->dh", xs, dz), "b1": dz.sum((0, 1)),
             "w2": jnp.einsum("nsh,nsk->hk", h, do), "b2": do.sum((0, 1))}
    return {"loss": loss / n, "grads": grads}

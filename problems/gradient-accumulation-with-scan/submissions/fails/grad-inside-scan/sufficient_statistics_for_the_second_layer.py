"""The steps accumulate sufficient statistics instead of the second layer's gradient.

Each step computes its microbatch's loss and the gradient for `w1` and `b1`, but for `w2` and `b2` it only
adds up H_j^T H_j, H_j^T 1, 1^T 1 and H_j^T y_j; the second layer's gradient is assembled from those sums
after the scan (with multiplies and sums, no matrix product). The numbers are right, every product of the
data runs in the scan, but no step runs the whole backward pass of its microbatch.

expect: requirements_not_met
fails: grad-inside-scan
"""
import jax
import jax.numpy as jnp


def grad_accumulation(params, x, y, num_microbatches):
    n, batch = num_microbatches, x.shape[0]
    xs = x.reshape(n, -1, x.shape[1])
    ys = y.reshape(n, -1, y.shape[1])
    w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]

    def step(carry, batch_j):
        loss, gw1, gb1, hh, h1, ones, hy, y1 = carry
        xb, yb = batch_j
        h = jnp.tanh(xb @ w1 + b1)
        o = h @ w2 + b2
        loss = loss + jnp.sum((o - yb) ** 2) / batch
        do = 2.0 * (o - yb) / batch
        dz = (do @ w2.T) * (1.0 - h ** 2)
        return (loss, gw1 + xb.T @ dz, gb1 + dz.sum(0), hh + h.T @ h, h1 + h.sum(0), ones + h.shape[0],
                hy + h.T @ yb, y1 + yb.sum(0)), None

    H, K = w2.shape
    zero = (jnp.float32(0.0), jnp.zeros_like(w1), jnp.zeros_like(b1), jnp.zeros((H, H)), jnp.zeros((H,)),
            jnp.float32(0.0), jnp.zeros((H, K)), jnp.zeros((K,)))
    (loss, gw1, gb1, hh, h1, ones, hy, y1), _ = jax.lax.scan(step, zero, (xs, ys))
    # dL/dW2 = 2/B (H^T H W2 + H^T 1 b2 - H^T Y), dL/db2 = 2/B (1^T H W2 + N b2 - 1^T Y), without a matmul
    gw2 = 2.0 / batch * ((hh[:, :, None] * w2[None, :, :]).sum(1) + h1[:, None] * b2[None, :] - hy)
    gb2 = 2.0 / batch * ((h1[:, None] * w2).sum(0) + ones * b2 - y1)
    return {"loss": loss, "grads": {"w1": gw1, "b1": gb1, "w2": gw2, "b2": gb2}}

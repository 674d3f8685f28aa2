"""t5x's `accumulate_grads_microbatched`: the gradient function is made once, outside the loop
(`grad_fn = jax.value_and_grad(loss_fn, has_aux=True)`), and a `lax.fori_loop` over the microbatch index
cuts each microbatch out of the whole batch with `lax.dynamic_slice` (starts `[offset, 0]`, sizes
`[microbatch_size, features]`), calls `grad_fn` on it and adds the result to the accumulated gradients.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def loss_fn(params, batch):
    h = jnp.tanh(batch["x"] @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    loss = jnp.sum((o - batch["y"]) ** 2) / batch["x"].shape[0]
    return loss, {"loss": loss}


def grad_accumulation(params, x, y, num_microbatches):
    batch = {"x": x, "y": y}
    batch_size = x.shape[0]
    microbatch_size = batch_size // num_microbatches
    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def get_microbatch(batch, idx):
        offset = idx * microbatch_size
        starts = {k: [offset] + [0] * (b.ndim - 1) for k, b in batch.items()}
        limits = {k: [microbatch_size] + list(b.shape[1:]) for k, b in batch.items()}
        return {k: jax.lax.dynamic_slice(b, starts[k], limits[k]) for k, b in batch.items()}

    def per_microbatch_train_step(loop_cnt, state):
        mbatch = get_microbatch(batch, loop_cnt)
        (loss, metrics), grad = grad_fn(params, mbatch)
        grad_accum, loss_accum = state
        grad_accum = jax.tree.map(jnp.add, grad_accum, grad)
        return grad_accum, loss_accum + metrics["loss"]

    grad_accum_init = jax.tree.map(jnp.zeros_like, params)
    grad_accum, loss = jax.lax.fori_loop(0, num_microbatches, per_microbatch_train_step,
                                         (grad_accum_init, jnp.float32(0.0)))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grad_accum)}

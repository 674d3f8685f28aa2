"""The all-finite test runs on the host through `jax.experimental.buffer_callback`, which writes its answer
into the output buffer from Python: the host decides the step.

scale-inside-grad fails too: the grader evaluates the program again with another `loss_scale` to see the
backward pass scale with it, and a host callback is the learner's Python, which it never runs.

expect: requirements_not_met
fails: scale-inside-grad,skip-with-where
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.buffer_callback import buffer_callback


def _test(ctx, out, *leaves):
    np.from_dlpack(out)[...] = all(np.isfinite(np.from_dlpack(a)).all() for a in leaves)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = (h @ half["w2"] + half["b2"]).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    ok = buffer_callback(_test, jax.ShapeDtypeStruct((), jnp.bool_))(*jax.tree.leaves(grads))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

"""A loss scaler that logs skipped steps from inside the compiled step with `jax.debug.callback` (as
training loops report overflow), while the step itself is decided in the traced program by `jnp.isfinite`:
the callback only prints, it returns nothing, so nothing the step depends on comes from the host.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _report(ok, scale):
    if not ok:
        print(f"overflow at loss scale {scale}: step skipped")


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        half = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
        out = (h @ half["w2"] + half["b2"]).astype(jnp.float32)
        loss = jnp.mean((out - y) ** 2)
        return loss * loss_scale, loss

    scaled, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled)
    ok = jax.tree.reduce(jnp.logical_and, jax.tree.map(lambda g: jnp.all(jnp.isfinite(g)), grads))
    jax.debug.callback(_report, ok, loss_scale)
    jax.debug.print("float32 reference loss {l}", l=jnp.mean((jnp.tanh(x @ params["w1"] + params["b1"])
                                                              @ params["w2"] + params["b2"] - y) ** 2))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

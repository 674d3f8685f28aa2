"""A float32 forward pass beside the float16 one, whose loss is only printed with `jax.debug.print` (to
watch how far the float16 loss drifts): its float32 matrix products flow into no returned value, so they
compute nothing the grader grades, and the requirement allows them. The loss, the gradients and the step
all come from the float16 products.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def forward(p, x, dtype):
    c = {k: v.astype(dtype) for k, v in p.items()}
    h = jnp.tanh(x.astype(dtype) @ c["w1"] + c["b1"])
    return (h @ c["w2"] + c["b2"]).astype(jnp.float32)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        loss = jnp.mean((forward(p, x, jnp.float16) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    full = jnp.mean((forward(params, x, jnp.float32) - y) ** 2)
    jax.debug.print("float16 loss {a}, float32 loss {b}", a=loss, b=full)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

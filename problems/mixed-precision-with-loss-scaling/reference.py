import jax
import jax.numpy as jnp


def _loss(params, x, y):
    """The network in float16, the loss in float32."""
    half = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
    o = h @ half["w2"] + half["b2"]
    return jnp.mean((o.astype(jnp.float32) - y) ** 2)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        loss = _loss(p, x, y)
        return loss * loss_scale, loss

    scaled_grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled_grads)
    finite = jnp.array(True)
    for g in jax.tree.leaves(grads):
        finite = finite & jnp.all(jnp.isfinite(g))
    new_params = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new_params, "loss": loss, "applied": finite}

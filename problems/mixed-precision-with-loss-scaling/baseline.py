"""The same step with the forward pass in float32: no cast, so no loss scale is needed (its gradients are
still scaled and unscaled, to keep the program otherwise the same). The "before" of the Cost tab."""
import jax
import jax.numpy as jnp


def mixed_precision_step(params, x, y, loss_scale, lr):
    def scaled_loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o - y) ** 2)
        return loss * loss_scale, loss

    scaled_grads, loss = jax.grad(scaled_loss, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, scaled_grads)
    finite = jnp.array(True)
    for g in jax.tree.leaves(grads):
        finite = finite & jnp.all(jnp.isfinite(g))
    new_params = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new_params, "loss": loss, "applied": finite}

"""Two backward passes: the scaled one only decides whether to apply the step, and the update comes from a
second `jax.grad` of the unscaled float16 loss. Scaling by a power of two is exact in float16, so the numbers
agree with the reference here, but the gradients that move the parameters get no protection from underflow:
the grader finds `x` and `y` reaching the new parameters by a path that enters no value scaled by
`loss_scale`.

expect: requirements_not_met
fails: scale-inside-grad
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    half = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
    o = h @ half["w2"] + half["b2"]
    return jnp.mean((o.astype(jnp.float32) - y) ** 2)


def mixed_precision_step(params, x, y, loss_scale, lr):
    scaled = jax.grad(lambda p: _loss(p, x, y) * loss_scale)(params)
    loss, grads = jax.value_and_grad(_loss)(params, x, y)  # the update's gradients: never scaled
    finite = jnp.all(jnp.array([jnp.isfinite(g / loss_scale).all() & jnp.isfinite(u).all()
                                for g, u in zip(jax.tree.leaves(scaled), jax.tree.leaves(grads))]))
    new_params = jax.tree.map(lambda p, g: jnp.where(finite, p - lr * g, p), params, grads)
    return {"params": new_params, "loss": loss, "applied": finite}

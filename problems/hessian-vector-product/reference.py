import jax
import jax.numpy as jnp


def _loss(w, x, y):
    z = x @ w
    return jnp.mean(jax.nn.softplus(z) - y * z)


def hvp(w, x, y, v):
    grad, product = jax.jvp(lambda w: jax.grad(_loss)(w, x, y), (w,), (v,))
    return {"grad": grad, "hvp": product}

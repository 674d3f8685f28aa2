"""The loss through probabilities, `-(y log p + (1 - y) log(1 - p))` with p = sigmoid(z): p rounds to exactly
1 in float32 once z is above about 17, and log(1 - p) = -inf turns the gradient into NaN.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        p = jax.nn.sigmoid(x @ w)
        return -jnp.mean(y * jnp.log(p) + (1 - y) * jnp.log1p(-p))

    g, hv = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": g, "hvp": hv}

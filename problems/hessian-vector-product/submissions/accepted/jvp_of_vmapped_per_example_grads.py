"""Per-example gradients with `jax.vmap(jax.grad(...))`, averaged, then pushed forward with `jax.jvp`: the
transformations nest as jvp(vmap(grad)) in the name stack.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def example_loss(w, xn, yn):
    z = xn @ w
    return jax.nn.softplus(z) - yn * z


def hvp(w, x, y, v):
    def mean_grad(w):
        return jnp.mean(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(w, x, y), axis=0)

    g, hv = jax.jvp(mean_grad, (w,), (v,))
    return {"grad": g, "hvp": hv}

"""optax style: `loss_fn(params, batch)` over a params dict, the gradient a pytree, the tangent a pytree
built with `jax.tree_util`, and `jax.jit` around the product.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def loss_fn(params, batch):
    logits = batch["x"] @ params["w"]
    return jnp.mean(jax.nn.softplus(logits) - batch["y"] * logits)


@jax.jit
def hessian_vector_product(params, batch, tangent):
    grad_fn = lambda p: jax.grad(loss_fn)(p, batch)
    return jax.jvp(grad_fn, (params,), (tangent,))


def hvp(w, x, y, v):
    params = {"w": w}
    tangent = jax.tree_util.tree_map(lambda _: v, params)
    grads, product = hessian_vector_product(params, {"x": x, "y": y}, tangent)
    return {"grad": grads["w"], "hvp": product["w"]}

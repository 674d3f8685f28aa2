"""The loss really comes from float16 products, but the gradients come from a second copy of the network
whose products run in float32 (on values rounded to float16, so the numbers match): a path around every
float16 product.

expect: requirements_not_met
fails: float16-matmuls
"""
import jax
import jax.numpy as jnp

f16, f32 = jnp.float16, jnp.float32


def _net(p, x, matmul):
    p = jax.tree.map(lambda a: a.astype(f16), p)
    h = jnp.tanh(matmul(x.astype(f16), p["w1"]) + p["b1"])
    return (matmul(h, p["w2"]) + p["b2"]).astype(f32)


def mixed_precision_step(params, x, y, loss_scale, lr):
    loss = jnp.mean((_net(params, x, jnp.matmul) - y) ** 2)
    emulated = lambda a, b: (a.astype(f32) @ b.astype(f32)).astype(f16)  # noqa: E731
    grads = jax.grad(lambda p: jnp.mean((_net(p, x, emulated) - y) ** 2) * loss_scale)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

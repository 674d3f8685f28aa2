"""A float16 product added as `0 * ...` to a network whose products run in float32 on values rounded to
float16 (the same numbers on this CPU): the float16 product is decorative, the float32 ones compute.

expect: requirements_not_met
fails: float16-matmuls
"""
import jax
import jax.numpy as jnp

f16, f32 = jnp.float16, jnp.float32


def matmul_in_float32(a, b):
    return (a.astype(f32) @ b.astype(f32)).astype(f16)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(f16), p)
        x16 = x.astype(f16)
        h = jnp.tanh(matmul_in_float32(x16, p["w1"]) + p["b1"] + 0 * (x16 @ p["w1"]))
        o = matmul_in_float32(h, p["w2"]) + p["b2"] + 0 * (h @ p["w2"])
        loss = jnp.mean((o.astype(f32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

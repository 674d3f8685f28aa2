"""The float16 products are computed and thrown away; the loss comes from float32 products of values
rounded to float16.

expect: requirements_not_met
fails: float16-matmuls
"""
import jax
import jax.numpy as jnp

f16, f32 = jnp.float16, jnp.float32


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(f16), p)
        x16 = x.astype(f16)
        _ = jnp.tanh(x16 @ p["w1"] + p["b1"]) @ p["w2"]          # float16, unused
        h = jnp.tanh((x16.astype(f32) @ p["w1"].astype(f32)).astype(f16) + p["b1"])
        o = (h.astype(f32) @ p["w2"].astype(f32)).astype(f16) + p["b2"]
        loss = jnp.mean((o.astype(f32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}

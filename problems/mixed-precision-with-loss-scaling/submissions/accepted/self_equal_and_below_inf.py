"""The all-finite test without any library predicate: a number is finite when it equals itself (NaN does
not) and its magnitude is below infinity, `(g == g) & (jnp.abs(g) < jnp.inf)`, reduced with `jnp.all`
over each leaf and over the leaves. The statement allows any test that agrees with `jnp.isfinite` of
every gradient.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    p = {k: v.astype(jnp.float16) for k, v in params.items()}
    h = jnp.tanh(jnp.dot(x.astype(jnp.float16), p["w1"]) + p["b1"])
    o = jnp.dot(h, p["w2"]) + p["b2"]
    return jnp.mean(jnp.square(o.astype(jnp.float32) - y))


def mixed_precision_step(params, x, y, loss_scale, lr):
    loss, scaled = jax.value_and_grad(lambda p: loss_fn(p, x, y) * loss_scale)(params)
    loss = loss / loss_scale
    grads = {k: g / loss_scale for k, g in scaled.items()}
    ok = jnp.all(jnp.stack([jnp.all((g == g) & (jnp.abs(g) < jnp.inf)) for g in grads.values()]))
    new = {k: jnp.where(ok, params[k] - lr * grads[k], params[k]) for k in params}
    return {"params": new, "loss": loss, "applied": ok}

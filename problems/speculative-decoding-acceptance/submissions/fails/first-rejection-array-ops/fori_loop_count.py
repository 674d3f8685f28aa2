"""`lax.fori_loop` over the positions (a scan, since its bounds are Python ints), multiplying a running flag.

expect: requirements_not_met
fails: first-rejection-array-ops
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    accepted = (jax.random.uniform(key, (n,)) < ratio).astype(jnp.int32)

    def body(i, carry):
        alive, count = carry
        alive = alive * accepted[i]
        return alive, count + alive

    _, a = jax.lax.fori_loop(0, n, body, (jnp.int32(1), jnp.int32(0)))
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}

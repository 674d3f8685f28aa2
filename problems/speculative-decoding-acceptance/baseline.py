"""The naive "before": the acceptance test and the count written position by position in a Python loop, so
the traced program holds one copy of the loop body per drafted token. Same entry function as reference.py."""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    u = jax.random.uniform(key, (n,))
    num_accepted, alive = jnp.int32(0), jnp.bool_(True)
    for i in range(n):
        x = draft_tokens[i]
        ok = u[i] < jnp.minimum(1.0, target_probs[i, x] / draft_probs[i, x])
        alive = alive & ok
        num_accepted = num_accepted + alive.astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = jnp.sum(residual, axis=1, keepdims=True)
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]], axis=0)
    return {"num_accepted": num_accepted, "next_probs": rows[num_accepted]}

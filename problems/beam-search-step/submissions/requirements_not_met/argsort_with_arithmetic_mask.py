"""No top_k (a full `jnp.argsort` ranks the candidates) and no select on `finished` either: the finished
beams are ruled out by arithmetic, adding `log` of a 0/1 mask. Right numbers; finished-by-select fails on
its own account (the masking), beside one-top-k (the search); the argsort's flat indices are split with
`// V` and `% V`, so flat-index-split holds.

expect: requirements_not_met
fails: one-top-k, finished-by-select
"""
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    done = finished[:, None].astype(jnp.float32)
    is_eos = (jnp.arange(v) == eos_id).astype(jnp.float32)[None, :]
    keep = 1.0 - done * (1.0 - is_eos)            # 0 for a finished beam's other tokens, else 1
    step = log_probs * (1.0 - done)                # a finished beam's eos costs nothing
    flat = (scores[:, None] + step + jnp.log(keep)).reshape(-1)
    order = jnp.argsort(-flat, stable=True)[:k]
    parents, tokens = order // v, order % v
    return {"scores": flat[order], "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}

import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    """Accept or reject n drafted tokens at once.

    draft_tokens: (n,) int32; draft_probs: (n, V) float32, the draft
    model's distributions q_i;
    target_probs: (n + 1, V) float32, the target model's distributions
    p_i; key: a PRNG key.
    Returns {"num_accepted": int32 scalar, "next_probs": (V,) float32}.
    """
    # TODO: u = jax.random.uniform(key, (n,)); compare u with min(1,
    # p/q) at the drafted tokens;
    # count the leading accepts with array operations; pick the next
    # token's distribution.
    raise NotImplementedError

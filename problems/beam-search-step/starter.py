import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    """One step of beam search over K beams and a vocabulary of V
    tokens.

    scores: (K,) float32 cumulative log-probabilities; log_probs: (K, V)
    float32 next-token
    log-probabilities; finished: (K,) bool; eos_id: int, the
    end-of-sequence token.
    Returns {"scores": (K,) float32, "parents": (K,) int32, "tokens":
    (K,) int32, "finished": (K,) bool}.
    """
    # TODO: mask finished beams with jnp.where, flatten the (K, V)
    # candidates,
    # take jax.lax.top_k over them, and split the flat indices with //
    # and %.
    raise NotImplementedError

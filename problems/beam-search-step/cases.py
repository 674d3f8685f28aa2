"""Hidden cases: seeded, inside the constraints, aimed at the edges and at the classic mistakes of a beam step.

They use seven shapes (K, V) in all, the examples' two among them: each distinct shape is one more compile of
the learner's program per Submit, and a program with a Python loop must still compile within the time limit.

Every finite candidate score of a case differs from every other one by at least 1e-3 (checked here in
float32, exactly as the step adds them), so the top K, their order and the integer outputs are the same for
any correct program: only the -inf candidates of case 13 tie, and their order is top_k's, as the statement
says. Log-probabilities are the log-softmax of random logits, rounded to 3 decimals.
"""
import numpy as np

NEG_INF = float("-inf")


def _log_probs(rng, k, v, spread=3.0):
    logits = rng.normal(0.0, spread, size=(k, v))
    logp = logits - np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), 1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    return np.round(logp, 3)


def _candidates(scores, logp, finished, eos):
    k, v = logp.shape
    only_eos = np.where(np.arange(v) == eos, 0.0, NEG_INF).astype(np.float32)
    step = np.where(finished[:, None], only_eos[None, :], logp.astype(np.float32))
    return scores.astype(np.float32)[:, None] + step  # float32, as the step adds them


def _distinct(scores, logp, finished, eos):
    c = _candidates(scores, logp, finished, eos).ravel()
    c = np.sort(c[np.isfinite(c)].astype(np.float64))
    return c.size < 2 or float(np.min(np.diff(c))) >= 1e-3


def _case(rng, k, v, eos, finished, scores=None, logp=None, adjust=None):
    """A case with no ties among its finite candidates (redrawn until there are none)."""
    for _ in range(1000):
        s = np.round(rng.uniform(-6.0, -0.5, size=k), 3) if scores is None else np.asarray(scores, np.float64)
        lp = _log_probs(rng, k, v) if logp is None else np.asarray(logp, np.float64)
        f = np.asarray(finished, bool)
        if adjust is not None:
            s, lp = adjust(s, lp)
        if _distinct(s, lp, f, eos):
            return {"scores": s.tolist(), "log_probs": lp.tolist(), "finished": f.tolist(), "eos_id": int(eos)}
    raise RuntimeError("no tie-free draw")


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    # 1. K = 1: one beam, so the flat index is the token itself; `// V` must give parent 0 (catches `// K`).
    cases.append(_case(rng, 1, 5, 2, [False]))
    # 2. K = 4, V = 8, nothing finished: the largest shapes, K != V (catches splitting with K instead of V,
    #    and flattening the (V, K) transpose).
    cases.append(_case(rng, 4, 8, 7, [False] * 4))
    # 3. The first step: beams 1.. are copies kept out with score -inf (catches masking with 0 * -inf = NaN,
    #    and forgetting to add each beam's own score).
    cases.append(_case(rng, 3, 4, 0, [False] * 3, scores=[0.0, NEG_INF, NEG_INF]))

    # 4. A finished beam with the best score must survive, extended by eos at zero cost (catches finished
    #    beams expanded like the others, and adding log_probs[k, eos] to a finished beam).
    def best_finished(s, lp):
        s = s.copy(); s[1] = -0.2
        lp = lp.copy(); lp[1, 3] = -1.5
        return s, lp
    cases.append(_case(rng, 3, 4, 3, [False, True, False], adjust=best_finished))

    # 5. Every beam finished: the output is the beams re-sorted by score, all with token eos (catches
    #    dropping finished beams; every pick is eos here, so `tokens == eos_id` alone is right: the
    #    parent's flag is tested by case 15).
    cases.append(_case(rng, 4, 4, 1, [True] * 4))
    # 6. A finished beam with the worst score is dropped for better live candidates (catches keeping every
    #    finished beam whatever its score).
    def worst_finished(s, lp):
        s = s.copy(); s[0] = -9.0
        return s, lp
    cases.append(_case(rng, 2, 3, 2, [True, False], adjust=worst_finished))

    # 7. eos is the last token id; live beam 0 has the best score and its best token is eos, so the top
    #    candidate is that eos and its beam becomes finished; finished beam 2 has the second best score, so
    #    its eos extension is picked second (catches new finished flags without `tokens == eos_id`, and an
    #    off-by-one one-hot for eos, which extends beam 2 by token 2 or by nothing).
    def eos_best(s, lp):
        s = s.copy(); s[0] = -0.3; s[2] = -0.5
        lp = lp.copy(); lp[0, -1] = -0.01; lp[0, :-1] = np.minimum(lp[0, :-1], -2.5)
        return s, lp
    cases.append(_case(rng, 3, 4, 3, [False, False, True], adjust=eos_best))
    # 8. eos is token 0, a finished beam sits between live ones and the winners come from reordered beams
    #    (catches `finished` returned without gathering it by parent).
    def reordered(s, lp):
        s = s.copy(); s[2] = -0.1; s[0] = -5.0
        return s, lp
    cases.append(_case(rng, 3, 4, 0, [True, False, False], adjust=reordered))
    # 9. K = V = 4 with mixed flags (the square case a transposed flatten gets right only by luck).
    cases.append(_case(rng, 4, 4, 2, [False, True, False, True]))
    # 10. Several winners from one beam (catches assuming one pick per beam).
    def one_strong(s, lp):
        s = s.copy(); s[1] = -0.05; s[0] = -7.0; s[2] = -7.5
        return s, lp
    cases.append(_case(rng, 4, 8, 5, [False, False, False, False], adjust=one_strong))
    # 11. V = 2, the smallest vocabulary, K = 2 (catches a fixed vocabulary size or `% (V - 1)`).
    cases.append(_case(rng, 2, 2, 1, [False, False]))
    # 12. A finished beam whose own log_probs row strongly prefers another token (catches taking the
    #     finished beam's argmax token instead of eos).
    def finished_prefers_other(s, lp):
        s = s.copy(); s[0] = -0.3
        lp = lp.copy(); lp[0] = -6.0; lp[0, 2] = -0.001
        return s, lp
    cases.append(_case(rng, 2, 3, 1, [True, False], adjust=finished_prefers_other))
    # 13. Fewer finite candidates than beams (K = 4, V = 2, beams 1 to 3 still -inf): the last two picks are
    #     -inf candidates, the first of them in top_k's order, flat indices 2 and 3 (catches clamping the
    #     -inf scores to a large finite number such as -1e9, which makes a dead beam's candidates look like
    #     real ones, and flattening the (V, K) transpose, which orders equal candidates token first).
    cases.append(_case(rng, 4, 2, 1, [False] * 4, scores=[0.0, NEG_INF, NEG_INF, NEG_INF]))
    # 14. Finished beams next to live ones with scores of very different sizes, K = V = 4.
    def mixed(s, lp):
        s = s.copy(); s[3] = -0.4; s[1] = -11.0
        return s, lp
    cases.append(_case(rng, 4, 4, 1, [False, False, True, True], adjust=mixed))
    # 15. Killer "finished beam's ruled-out token picked": K = 4, V = 2, beam 1 finished, beams 2 and 3
    #     dead (-inf). Only three candidates are finite (beam 0's two tokens and beam 1's eos), so the fourth
    #     pick is the -inf candidate with the smallest flat index: beam 1's ruled-out token (flat index 2).
    #     Its score must stay -inf and its `finished` flag must be True (its parent is finished although
    #     its token is not eos). Catches ruling out with a large finite number (`-1e9`, `finfo.min`) instead
    #     of -inf, and new flags computed from `tokens == eos_id` alone, forgetting the parent's flag.
    cases.append(_case(rng, 4, 2, 1, [False, True, False, False], scores=[-1.2, -0.7, NEG_INF, NEG_INF]))
    return cases

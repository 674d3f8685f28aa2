"""Hidden cases: seeded, inside the constraints, aimed at the edges and at the classic mistakes.

Eight shapes (n, V) in all, the examples' three among them, and every n from 1 to 8 (the grader compares the
programs traced for different n). Each distinct shape is one more compile per Submit.

Probabilities are written with 4 decimals and every row sums to exactly 1 in decimal (a float32 row sums to
1 up to rounding), but for the one "no_residual" row of q, which sums to 1 + 1e-7. Each drafted position is built to be

- "accept": p_i(x_i) >= q_i(x_i) (ratio at least 1, accepted whatever u is; often p much larger than q),
- "reject": p_i(x_i) = 0 < q_i(x_i) (ratio 0, rejected whatever u is),
- "q0": q_i(x_i) = 0 < p_i(x_i) (ratio +inf, accepted),
- "same": q_i = p_i (ratio exactly 1, accepted),
- "no_residual": p_i = q_i except at x_i, where q_i(x_i) = 1e-7 and p_i(x_i) = 0 (rejected; no token has
  p > q, so the residual sums to 0 and the statement's fallback, p_i itself, is the next distribution), or
- "coin": a ratio drawn in [0.3, 0.95], so the uniform of the given key decides. A correct program
  decides differently from the reference only if u_i and the ratio agree to about seven digits; the
  accepted gallery's three spellings of the test (`u < p/q`, `u * q < p`, in logs) pass every case.
"""
import numpy as np

UNIT = 10_000  # probabilities in units of 1e-4


def _dist(rng, v, alpha=1.0):
    raw = rng.dirichlet(np.full(v, alpha))
    units = np.floor(raw * UNIT).astype(np.int64)
    units[np.argmax(units)] += UNIT - units.sum()
    return units


def _set(units, x, target, rng):
    """Give token x exactly `target` units, moving the difference to or from the other tokens."""
    units = units.copy()
    diff = target - units[x]
    units[x] = target
    others = [t for t in np.argsort(-units) if t != x]
    if diff < 0:
        units[others[0]] += -diff
    else:
        for t in others:  # take from the largest first
            take = min(diff, units[t])
            units[t] -= take
            diff -= take
            if diff == 0:
                break
    assert units.sum() == UNIT and (units >= 0).all()
    return units


def _position(rng, v, kind):
    """(x, q row, p row) in units, built so that position's test has the kind's outcome."""
    q, p = _dist(rng, v), _dist(rng, v)
    x = int(rng.integers(v))
    if kind == "accept":
        q = _set(q, x, max(int(q[x]), 300), rng)
        p = _set(p, x, int(min(UNIT, q[x] + rng.integers(0, UNIT - q[x] + 1))), rng)
    elif kind == "reject":
        q = _set(q, x, max(int(q[x]), 500), rng)
        p = _set(p, x, 0, rng)
    elif kind == "q0":
        q = _set(q, x, 0, rng)
        p = _set(p, x, max(int(p[x]), 200), rng)
    elif kind == "same":
        p = q.copy()
    elif kind == "coin":
        q = _set(q, x, max(int(q[x]), 1500), rng)
        p = _set(p, x, int(round(q[x] * rng.uniform(0.3, 0.95))), rng)
    elif kind == "one_hot_residual":  # p - q is positive at exactly one token
        q = _set(q, x, max(int(q[x]), 1000), rng)
        y = (x + 1) % v
        p = q.copy()
        p[x] = 0
        p[y] += q[x]
    elif kind == "no_residual":  # p <= q everywhere: rejected, and the residual sums to 0
        q = _set(q, x, 0, rng)
        p = q.copy()
    else:
        raise ValueError(kind)
    return x, q, p


def _case(rng, v, kinds, seed):
    xs, qs, ps = [], [], []
    for kind in kinds:
        x, q, p = _position(rng, v, kind)
        xs.append(x), qs.append(q), ps.append(p)
    ps.append(_dist(rng, v))  # p_n, the distribution after the last draft
    draft = [(q / UNIT).round(4).tolist() for q in qs]
    for i, kind in enumerate(kinds):
        if kind == "no_residual":  # q's row 1e-7 over 1 (rounding), all of it at the drafted token
            draft[i][xs[i]] = 1e-7
    return {"draft_tokens": xs, "draft_probs": draft,
            "target_probs": [(p / UNIT).round(4).tolist() for p in ps], "key": int(seed)}


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**31 - 1, size=16)
    cases = []
    # 1. n = 1, accepted whatever u is, p much larger than q: next_probs is the bonus row p_1 (catches an
    #    argmax over rejections that gives 0 when there is none, the bonus row taken one too early, and the
    #    ratio inverted to q/p).
    cases.append(_case(rng, 3, ["accept"], keys[0]))
    # 2. n = 1, rejected whatever u is: next_probs is position 0's residual (catches a residual without
    #    max(0, .), one that is not normalised, and q - p instead of p - q).
    cases.append(_case(rng, 3, ["reject"], keys[1]))
    # 3. The first position rejected, all later ones pass their own tests: a = 0 (catches counting every
    #    accepted position instead of the leading run).
    cases.append(_case(rng, 5, ["reject"] + ["accept"] * 5, keys[2]))
    # 4. n = 8, V = 16, every draft accepted: a = n and the bonus row (the largest shapes; catches the
    #    argmax without the all-accepted case and the inverted ratio).
    cases.append(_case(rng, 16, ["accept"] * 8, keys[3]))
    # 5. Identical distributions, p_i = q_i: the ratio is exactly 1 and every draft is accepted (catches a
    #    test that rejects at ratio 1, and a residual computed when nothing was rejected: it is all zeros).
    cases.append(_case(rng, 6, ["same"] * 5, keys[4]))
    # 6. q_i(x_i) = 0 < p_i(x_i) at positions 1 and 2: the ratio is +inf and they are accepted; position 3 is
    #    rejected, a = 3 (catches guarding the division by treating q = 0 as a rejection).
    cases.append(_case(rng, 4, ["accept", "q0", "q0", "reject"], keys[5]))
    # 7-11. Ratios in [0.3, 0.95] at every position: the key's uniforms decide (catches uniforms from a
    #    split or folded key or from another key, one key per position, and the inverted ratio).
    cases.append(_case(rng, 2, ["coin"] * 2, keys[6]))
    cases.append(_case(rng, 4, ["coin"] * 3, keys[7]))
    cases.append(_case(rng, 6, ["coin"] * 5, keys[8]))
    cases.append(_case(rng, 12, ["coin"] * 7, keys[9]))
    cases.append(_case(rng, 16, ["accept"] + ["coin"] * 7, keys[10]))
    # 12. A rejection at position 1 whose residual is one token only (catches q - p, and a residual that is
    #     not normalised).
    cases.append(_case(rng, 4, ["accept", "one_hot_residual", "accept"], keys[11]))
    # 13. V = 2, the smallest vocabulary: the first draft accepted, the second rejected, a = 1 (catches
    #     residual rows off by one).
    cases.append(_case(rng, 2, ["accept", "reject"], keys[12]))
    # 14. Everything accepted but the last draft: a = n - 1, so next_probs is the last residual, not the bonus
    #     row (catches confusing row n - 1 of the residuals with row n of target_probs).
    cases.append(_case(rng, 12, ["accept"] * 6 + ["reject"], keys[13]))
    # 15. n = 1 decided by the key's only uniform.
    cases.append(_case(rng, 3, ["coin"], keys[14]))
    # 16. Killer "residual sums to 0": position 1's rows are equal but for the drafted token, where q holds
    #     1e-7 (its row sums to 1 + 1e-7, which float32 rounds to 1) and p holds 0. The ratio is 0, so it is
    #     rejected whatever u is, and no token has p > q: the statement defines next_probs as p_1 itself
    #     (catches dividing by the residual's sum unguarded, which gives NaN, and guards that give zeros
    #     or a uniform row, such as dividing by max(sum, eps) or clamping the differences to a tiny value).
    cases.append(dict(_case(rng, 4, ["accept", "no_residual", "accept"], keys[15]), _edge=NO_RESIDUAL))
    # 17. Killer "u equal to the ratio": the key 780233's first uniform (of 8) is exactly 0.0 (found by a
    #     search over seeds with the reference's own `jax.random.uniform(key, (8,))`), and position 0 is
    #     rejected whatever u is (p_0(x_0) = 0, ratio 0); every later draft would be accepted. The test is
    #     strict, u < min(1, p/q), so a = 0 (catches `<=`, which accepts at u = 0 = ratio, and a ratio kept
    #     away from 0 by a floor such as `jnp.maximum(p / q, 1e-6)`).
    cases.append(dict(_case(rng, 16, ["reject"] + ["accept"] * 7, U_ZERO_SEED), _edge=TIE))
    # 18. Killer "tiny probabilities": p_0(x_0) = q_0(x_0) = 2e-7, so the ratio is exactly 1 and the draft is
    #     accepted (a = 1, the bonus row), while the key's uniform is 0.44. Catches an epsilon or a floor on
    #     q in the ratio (`p / (q + 1e-6)` is 0.17, `p / jnp.maximum(q, 1e-6)` 0.2): both reject it.
    cases.append({"draft_tokens": [1], "draft_probs": [[0.4999998, 2e-7, 0.5]],
                  "target_probs": [[0.4999998, 2e-7, 0.5], [0.2, 0.3, 0.5]], "key": 1})
    # 19. Killer "a residual of tiny total": position 0 is rejected (p_0(x_0) = 0 < q_0(x_0) = 5e-7) and
    #     p_0 exceeds q_0 only at token 0, by about 5e-7 (rounding: the rows sum to 1). The residual is that
    #     one token, normalised to exactly 1 (catches a floor on the residual's sum, `r / jnp.maximum(total,
    #     1e-6)`, which leaves it at 0.5, and an epsilon added to it).
    cases.append({"draft_tokens": [1], "draft_probs": [[0.4999995, 5e-7, 0.5]],
                  "target_probs": [[0.5, 0.0, 0.5], [0.1, 0.6, 0.3]], "key": 2})
    return cases


TIE = ("a tie: u equals the ratio exactly (u = 0 = p/q at position 0); the statement accepts only when "
       "u < min(1, p/q), so a tie is a rejection")
"""The edge case 17 reaches (its failure names it, ``problems.EDGE_KEY``)."""
NO_RESIDUAL = ("no token has p > q at the rejected position (q's row sums to 1 + 1e-7, which float32 rounds to 1), "
               "so the residual sums to 0; the statement then takes p_a itself as the next distribution")
"""The edge case 16 reaches."""

U_ZERO_SEED = 780233
"""`jax.random.uniform(jax.random.key(780233), (8,))[0] == 0.0` (threefry, JAX's default PRNG)."""

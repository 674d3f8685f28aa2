"""Hidden cases: seeded, inside the constraints (B <= 6, T, S, d, e <= 8, every scaled score within +-150),
and each there to catch a named mistake.

The scores are shaped on purpose: a query row is rescaled so that its largest |score| hits a chosen size,
and with d = 1 the score q_t * k_j can be made all negative or spread over the whole range. Every case says
which naive softmax it breaks; ``generate`` checks the bound on every scaled score.
"""
import numpy as np

LIMIT = 150.0


def _round(a):
    return np.round(np.asarray(a, dtype=np.float64), 3).astype(np.float32)


def _draw(rng, shape, scale=1.0):
    return _round(rng.uniform(-scale, scale, size=shape))


def _row_sized(rng, b, t, s, d, sizes):
    """q and k whose scaled scores have, in row (i, j), a largest |score| of ``sizes[i][j]``."""
    k = _draw(rng, (b, s, d), 2.0)
    q = _draw(rng, (b, t, d), 2.0).astype(np.float64)
    scores = np.einsum("btd,bsd->bts", q, k.astype(np.float64)) / np.sqrt(d)
    peak = np.maximum(np.abs(scores).max(axis=-1), 1e-3)
    q = q * (np.asarray(sizes, dtype=np.float64) / peak)[..., None]
    return _round(q), k


def _case(q, k, v):
    return {"q": np.asarray(q, np.float32).tolist(), "k": np.asarray(k, np.float32).tolist(),
            "v": np.asarray(v, np.float32).tolist()}


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    v = lambda b, s, e: _draw(rng, (b, s, e), 2.0)  # noqa: E731
    cases = []

    # B = T = S = d = e = 1: a single key gets weight 1 (code that squeezes or assumes S > 1 breaks).
    cases.append(_case(_draw(rng, (1, 1, 1)), _draw(rng, (1, 1, 1)), v(1, 1, 1)))
    # The largest shapes, moderate scores: the plain computation, and 1/sqrt(d) with d = 8.
    cases.append(_case(_draw(rng, (6, 8, 8), 1.5), _draw(rng, (6, 8, 8), 1.5), v(6, 8, 8)))
    # S = 1 with scores near +-150: the weight is exactly 1, but exp(150) overflows a literal softmax to
    # inf / inf = nan.
    q, k = _row_sized(rng, 3, 4, 1, 3, [[149, 120, 100, 149]] * 3)
    cases.append(_case(q, k, v(3, 1, 5)))
    # T = 1, five examples whose single rows peak at very different sizes (7 to 149): one maximum over the
    # whole batch underflows the small ones to 0 / 0 = nan.
    q, k = _row_sized(rng, 5, 1, 6, 2, [[149], [7], [120], [60], [90]])
    cases.append(_case(q, k, v(5, 6, 3)))
    # B = 1, rows whose maxima differ by more than 100 inside the one example (d = 1: scores q_t * k_j with
    # k > 0): a single maximum per example leaves the low rows' exponents below -100, 0 / 0 = nan.
    k1 = _round(rng.uniform(5.0, 10.0, size=(1, 5, 1)))
    q1 = _round(np.array([[[14.9], [1.0], [-2.0], [0.3]]]))
    cases.append(_case(q1, k1, v(1, 5, 4)))
    # All scores of a row very negative (d = 1, q_t > 0 and every k_j < 0, scores in -150..-90): a literal
    # softmax underflows to 0 / 0, and so does subtracting the row maximum of |s| (about 150) or one maximum
    # over a batch whose other rows are positive; the row maximum itself is near -60 to -90.
    k2 = _round(rng.uniform(-10.0, -6.0, size=(2, 4, 1)))
    q2 = _round(np.array([[[14.9], [15.0], [12.0]], [[14.0], [13.0], [15.0]]]))
    cases.append(_case(q2, k2, v(2, 4, 2)))
    # Rows spanning -150..150 (d = 1, keys of both signs): subtracting the row mean still leaves exponents
    # near 150 (overflow), and the row maximum is attained at a different key in different rows, so a
    # maximum taken along the query axis shifts each key differently.
    k3 = _round(np.array([[[10.0], [-10.0], [3.0], [-6.0]], [[-9.5], [8.0], [10.0], [0.5]]]))
    q3 = _round(np.array([[[14.9], [-14.9], [5.0]], [[15.0], [-12.0], [-14.0]]]))
    cases.append(_case(q3, k3, v(2, 4, 3)))
    # Two scores above 80 in one row (d = 1, keys 10, 8.4, 6 and a query of 14.9: scores 149, 125, 89):
    # clipping the scores to +-80 gives them equal weights.
    k4 = _round(np.array([[[10.0], [8.4], [6.0], [-3.0], [1.0]]] * 3))
    q4 = _round(np.array([[[14.9], [9.9]], [[12.0], [14.0]], [[13.0], [11.0]]]))
    cases.append(_case(q4, k4, v(3, 5, 2)))
    # d = 8 and rows whose largest |score| is 130 to 149: subtracting the maximum of the unscaled products
    # (sqrt(8) times the scaled one) pushes a row peaking near +149 to exponents below -270, 0 / 0 = nan.
    q, k = _row_sized(rng, 2, 3, 7, 8, [[149, 140, 149], [149, 149, 130]])
    cases.append(_case(q, k, v(2, 7, 6)))
    # The score scaling: d = 4 and 6 with moderate scores, where forgetting 1/sqrt(d) moves every output.
    q, k = _row_sized(rng, 4, 3, 3, 4, [[3, 5, 2]] * 4)
    cases.append(_case(q, k, v(4, 3, 3)))
    q, k = _row_sized(rng, 3, 2, 8, 6, [[6, 9]] * 3)
    cases.append(_case(q, k, v(3, 8, 2)))
    # Near-uniform weights (scores near 0), T != S: a softmax taken along the query axis is visibly wrong.
    cases.append(_case(_draw(rng, (2, 2, 2), 0.05), _draw(rng, (2, 5, 2), 0.05), v(2, 5, 2)))
    # Two top scores almost tied near 150 in every row: the weights split about evenly, and every stable
    # form (max, logsumexp, log_softmax) agrees to float32 precision.
    k5 = _round(np.array([[[10.0], [9.999], [2.0]]] * 2))
    q5 = _round(np.array([[[14.9], [14.8]], [[-1.0], [14.95]]]))
    cases.append(_case(q5, k5, v(2, 3, 4)))
    # One more mixed batch: B = 6, T = 7, S = 6, rows peaking anywhere from 2 to 149.
    sizes = rng.uniform(2.0, 149.0, size=(6, 7))
    q, k = _row_sized(rng, 6, 7, 6, 3, sizes)
    cases.append(_case(q, k, v(6, 6, 8)))
    # Killer "a floor on the weights": case 8's scores, with values of +-1000 at the two keys whose weights
    # are below e^-80 in every row. A weight floored at a small number (`jnp.maximum(w, 1e-6)`, to avoid a
    # zero) lets those values through: 1e-6 * 1000 per key moves the output by about 2e-3, past the tolerance
    # of outputs within +-2.
    v6 = v(3, 5, 2)
    v6[:, 3:, :] = 1000.0 * np.sign(v6[:, 3:, :] + 1e-9)
    cases.append(_case(q4, k4, v6))

    for case in cases:
        q, k = np.asarray(case["q"], np.float64), np.asarray(case["k"], np.float64)
        scores = np.einsum("btd,bsd->bts", q, k) / np.sqrt(q.shape[-1])
        assert np.abs(scores).max() <= LIMIT, np.abs(scores).max()
    return cases

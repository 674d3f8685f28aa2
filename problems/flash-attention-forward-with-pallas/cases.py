"""Hidden cases: seeded, inside the constraints (scaled scores in [-120, 120], values in [-100, 100]), aimed at
a flash attention kernel's classic mistakes; each is named in the comment above the kind that catches it
(the naive versions are in `submissions/wrong_answer/`).

Two (shape, block) combinations only (three with the examples'): each is one more interpret-mode compile per
Submit. Both have two query blocks or more (state left in a scratch buffer by the previous query block shows where
the init is missing) and several key/value blocks (a running state is needed at all); Lq != Lk, bq != bk and
D apart from every other size (a swapped block size, grid axis or index map reads the wrong rows, and the
checks' count of scores cannot confuse an axis of width D with one of keys).

Scores are placed where a case needs them: the first coordinate of each query is 25 times a row scale and
the first coordinate of each key an offset times sqrt(D) / 25, so the scaled score is about the product of
the two, plus a little noise from the other coordinates.
"""
import numpy as np

LIMIT = 120.0
COMBOS = [
    # (Lq, Lk, D, bq, bk)
    (8, 16, 3, 4, 2),    # grid (2, 8): eight key/value steps of two keys
    (12, 16, 8, 3, 4),   # grid (4, 4): D = 8, where 1 / sqrt(D), 1 / D and no scale are far apart; more query
                         # blocks than a block has rows (Lq // bq > bq): a grid of `bq` query steps misses some
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def rounded(a):
        return np.round(np.asarray(a, np.float64), 3).astype(np.float32)

    def case(q, k, v, bq, bk):
        q, k, v = rounded(q), rounded(k), rounded(v)
        scores = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
        assert np.abs(scores).max() <= LIMIT and max(np.abs(x).max() for x in (q, k, v)) <= 100, scores
        return {"q": q.tolist(), "k": k.tolist(), "v": v.tolist(), "bq": bq, "bk": bk}

    def random_case(lq, lk, d, bq, bk, spread):
        q, k = rng.normal(size=(lq, d)), rng.normal(size=(lk, d))
        q *= spread / max(np.abs(q @ k.T / np.sqrt(d)).max(), 1e-6)
        return case(q, k, rng.uniform(-5, 5, (lk, d)), bq, bk)

    def placed(row_scale, key_offset, d, bq, bk, noise=0.3):
        lq, lk = len(row_scale), len(key_offset)
        q = rng.uniform(-noise, noise, (lq, d))
        k = rng.uniform(-noise, noise, (lk, d))
        q[:, 0] = 25.0 * np.asarray(row_scale)
        k[:, 0] = np.asarray(key_offset) * np.sqrt(d) / 25.0
        return case(q, k, rng.uniform(-5, 5, (lk, d)), bq, bk)

    cases = []
    for lq, lk, d, bq, bk in COMBOS:
        nk = lk // bk
        ones = np.ones(lq)
        # Moderate scores: the blocks' bookkeeping, and a softmax scale left out, applied twice or as 1 / D.
        cases.append(random_case(lq, lk, d, bq, bk, spread=6.0))
        # Every score near +100: exp without subtracting a maximum overflows to inf, and inf / inf is nan.
        cases.append(placed(ones, rng.uniform(95, 110, lk), d, bq, bk))
        # Block maxima that grow from block to block (-60 ... +110): a sum and an accumulator not rescaled by
        # exp(m_prev - m_new) when the maximum grows keep the early blocks at the wrong weight; a maximum
        # taken from the first block only overflows later.
        offsets = np.concatenate([rng.uniform(c - 2, c + 2, bk) for c in np.linspace(-60, 108, nk)])
        cases.append(placed(ones * rng.uniform(0.9, 1.0, lq), offsets, d, bq, bk))
        # Block maxima that fall (+80 first, then -80): each block's exponentials summed under its own maximum
        # (never brought onto the running one) weigh the late blocks far too much; dividing by the sum at
        # every step (not once at the end) normalises each block by a partial sum.
        half = lk // 2
        cases.append(placed(ones, np.concatenate([rng.uniform(78, 82, half), rng.uniform(-82, -78, lk - half)]),
                            d, bq, bk))
        # Every score near -110: a running maximum started at 0 instead of -inf underflows exp(s - 0) to 0 in
        # every block, and 0 / 0 is nan.
        cases.append(placed(ones, rng.uniform(-112, -105, lk), d, bq, bk))
        # Query rows of very different levels (near +100, -100, 0 in turn): one maximum for the whole block
        # instead of one per query row underflows the low rows (nan).
        levels = np.resize([1.0, -1.0, 0.01], lq)
        cases.append(placed(levels, np.concatenate([rng.uniform(95, 100, lk // 2), rng.uniform(-5, 5, lk - lk // 2)]),
                            d, bq, bk))
        # The largest score of every query in the last key block: a loop or a store that stops one block
        # early, or an output written at the first step instead of the last, misses the keys that matter.
        cases.append(placed(ones, np.concatenate([rng.uniform(-3, 3, lk - bk), rng.uniform(8, 12, bk)]), d, bq, bk))
    return cases

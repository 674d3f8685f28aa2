"""Hidden cases: seeded, inside the constraints (T in 1..8, S in 1..32, block_size dividing S, d and e in
1..8, values in [-100, 100], scaled scores in [-120, 120]), aimed at the online softmax's classic mistakes,
each named in the comment above it (the naive versions are in `submissions/wrong_answer/`).

Scores are placed where a case needs them: the first coordinate of each query is a large number A_t and the
first coordinate of each key an offset, so the scaled score q_t . k_s / sqrt(d) is about the product of
the two, plus a little noise from the other coordinates. The shapes keep T, S, block_size, d and e apart
where they can (a check on the score matrix's size must not be confused), with T == block_size and
block_size == S as cases of their own."""
import numpy as np

LIMIT = 120.0


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def rounded(a):
        return np.round(np.asarray(a, np.float64), 3).astype(np.float32)

    def values(s, e):
        return rounded(rng.uniform(-5, 5, size=(s, e)))

    def random_case(t, s, bs, d, e, spread):
        """Queries and keys at random, scaled so the largest |score| is about ``spread``."""
        q, k = rng.normal(size=(t, d)), rng.normal(size=(s, d))
        scores = q @ k.T / np.sqrt(d)
        q *= spread / max(np.abs(scores).max(), 1e-6)
        return case(rounded(q), rounded(k), values(s, e), bs)

    def placed(row_scale, key_offset, d, e, bs, noise=0.3):
        """Scores about row_scale[t] * key_offset[s]: the first coordinates carry them."""
        t, s = len(row_scale), len(key_offset)
        q = rng.uniform(-noise, noise, size=(t, d))
        k = rng.uniform(-noise, noise, size=(s, d))
        q[:, 0] = 25.0 * np.asarray(row_scale)
        k[:, 0] = np.asarray(key_offset) * np.sqrt(d) / 25.0
        return case(rounded(q), rounded(k), values(s, e), bs)

    def case(q, k, v, bs):
        scores = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
        assert np.abs(scores).max() <= LIMIT and np.abs(q).max() <= 100 and np.abs(k).max() <= 100, scores
        assert k.shape[0] % bs == 0
        return {"q": q.tolist(), "k": k.tolist(), "v": v.tolist(), "block_size": bs}

    cases = []
    # Moderate scores, four blocks: a plain check of the blocks' bookkeeping (shapes T, S, bs, d, e apart).
    cases.append(random_case(3, 8, 2, 4, 5, spread=4.0))
    # Every score near +100: exp without subtracting a maximum overflows to inf, and inf / inf is nan.
    cases.append(placed([1.0] * 4, rng.uniform(95, 110, size=12), d=2, e=3, bs=4))
    # Block maxima that grow a lot from block to block (-60, 0, +60, +110): a maximum taken from the first
    # block and never updated overflows later; a sum not rescaled when the maximum grows is wrong.
    offsets = np.concatenate([rng.uniform(-62, -58, 3), rng.uniform(-2, 2, 3), rng.uniform(58, 62, 3),
                              rng.uniform(105, 110, 3)])
    cases.append(placed([1.0, 0.9, 1.0], offsets, d=4, e=2, bs=3))
    # Block maxima that fall (+80 first, then -80): a per-block maximum that is not carried across blocks
    # (each block's exp summed under its own maximum, with no rescaling) weighs the late blocks far too much.
    cases.append(placed([1.0, 1.0], np.concatenate([rng.uniform(78, 82, 5), rng.uniform(-82, -78, 10)]),
                        d=3, e=4, bs=5))
    # Every score of every query near -110: a running maximum started at 0 instead of -inf underflows
    # exp(s - 0) to 0 in every block, and 0 / 0 is nan.
    cases.append(placed([1.0] * 5, rng.uniform(-112, -105, size=8), d=2, e=3, bs=2))
    # block_size == S: a single block, a scan of one step (T != S, so its (T, S) scores are one block).
    cases.append(random_case(5, 6, 6, 3, 2, spread=8.0))
    # block_size == 1: S steps of one key each (a reduction or squeeze over a block of one).
    cases.append(random_case(2, 7, 1, 3, 4, spread=10.0))
    # T == block_size, the largest score of every query in the last block (keys 25..29): a loop that stops
    # one block early (`S // block_size - 1` steps) misses the keys that matter most; and with T ==
    # block_size a maximum over the wrong axis (over the queries) has the right shape, T numbers.
    cases.append(placed([1.0, 0.8, 1.0, 0.9, 1.0], np.concatenate([rng.uniform(-3, 3, 25), rng.uniform(8, 12, 5)]),
                        d=3, e=2, bs=5))
    # A single query (T = 1).
    cases.append(random_case(1, 16, 4, 5, 3, spread=20.0))
    # d = 1 and e = 1, the smallest widths.
    cases.append(random_case(4, 10, 5, 1, 1, spread=3.0))
    # The largest shapes, eight blocks, scores up to about 100 in both signs.
    cases.append(random_case(8, 32, 4, 6, 7, spread=100.0))
    # Queries whose maxima differ a lot (one row near +100, one near -100, one near 0): one maximum for the
    # whole block instead of one per query underflows the low rows (nan).
    cases.append(placed([1.0, -1.0, 0.01], np.concatenate([rng.uniform(95, 100, 4), rng.uniform(-5, 5, 4)]),
                        d=2, e=3, bs=4))
    # d = 8 and moderate scores: leaving out the 1 / sqrt(d) scale sharpens every softmax.
    cases.append(random_case(3, 12, 3, 8, 2, spread=3.0))
    # One key near +100 among keys near -100 in the same block: shifting by the block's mean (not its maximum)
    # overflows, and a wrong axis for the maximum (over queries) mixes rows.
    offs = rng.uniform(-100, -95, size=9)
    offs[4] = 100.0
    cases.append(placed([1.0, 1.0, 0.98, 1.0], offs, d=5, e=6, bs=9 // 3))
    return cases

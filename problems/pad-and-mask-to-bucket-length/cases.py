"""Hidden cases: seeded, inside the constraints (B in 1..6, lengths in 1..16, values in [-10, 10], buckets
increasing in 1..32, |pad_value| <= 1e6), aimed at the bucket's boundaries and at the classic mistakes,
each named in the comment above it (the naive versions are in `submissions/wrong_answer/`).

The sequences are written as a tagged list, so that equal lengths and a single sequence still arrive as a
list of 1-D arrays rather than one 2-D array."""
import numpy as np


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def seq(n, scale=5.0):
        return np.round(rng.uniform(-scale, scale, size=n), 3).astype(np.float32).tolist()

    def case(lengths, pad_value, buckets, seqs=None):
        seqs = seqs if seqs is not None else [seq(n) for n in lengths]
        return {"seqs": {"t": "list", "v": seqs}, "pad_value": float(np.float32(pad_value)), "buckets": list(buckets)}

    cases = []
    # The longest length equals a bucket: T is that bucket, not the next (`b > L` instead of `b >= L`).
    cases.append(case([5, 8, 3], 0.0, (4, 8, 16)))
    # The longest length is one past a bucket: T is the next bucket up (rounding down, or padding to the
    # longest length, 9, gives the wrong shape).
    cases.append(case([9, 2, 7, 4], -1.0, (4, 8, 16)))
    # One sequence (B = 1).
    cases.append(case([3], 2.5, (2, 4)))
    # All lengths equal and equal to a bucket: no padding at all, the mask is all ones (code that moves up a
    # bucket when the longest length equals one fails; zero-width padding must work).
    cases.append(case([4, 4, 4], 7.0, (4, 8)))
    # A length 1 among longer ones.
    cases.append(case([1, 6, 2], 3.0, (2, 4, 8)))
    # Every length 1 and a bucket of 1: T = 1.
    cases.append(case([1, 1, 1, 1], -5.0, (1, 2)))
    # The longest length fills the largest bucket exactly (16 of 16).
    cases.append(case([16, 5], 0.5, (4, 8, 16)))
    # Buckets that are not powers of two.
    cases.append(case([4, 2], 9.0, (3, 5, 12)))
    # A huge pad value over many padded positions: the mean over all B x T positions is off by far, and
    # `(sum(padded) - pad_value * count) / n` loses the real values to rounding (the sum is about 5e7).
    huge = [seq(n) for n in (3, 1, 2, 5, 1, 4)]
    cases.append(case([3, 1, 2, 5, 1, 4], 1e6, (2, 4, 8, 16), seqs=huge))
    # The same sequences with another pad value: the mean must come out the same (the padding must not
    # move it; a counterfactual on the padding, checked by the numbers).
    cases.append(case([3, 1, 2, 5, 1, 4], -123456.0, (2, 4, 8, 16), seqs=huge))
    # A pad value that also occurs among the real values: a mask built from the values
    # (`padded != pad_value`) drops those real positions.
    real = [[0.0, 1.5, 0.0], [0.0], [2.0, -1.0, 0.0, 0.0, 3.0]]
    cases.append(case([3, 1, 5], 0.0, (4, 8), seqs=real))
    # Lengths 1 and 12 with very different means: the mean of the per-sequence means (each sequence weighing
    # the same) is far from the mean over tokens.
    cases.append(case([1, 12], -10000.0, (8, 16), seqs=[[9.5], seq(12, scale=1.0)]))
    # A single bucket and six sequences of lengths 1 to 8.
    cases.append(case([8, 1, 5, 3, 7, 2], 4.0, (8,)))
    # Negative values only, padded with a positive value: a mean that clips or counts the padding moves.
    cases.append(case([2, 6, 4], 100.0, (6, 12, 24, 32), seqs=[[-3.0, -4.0], [-1.0] * 6, [-2.5, -0.5, -7.0, -9.0]]))
    return cases

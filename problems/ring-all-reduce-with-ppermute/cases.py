"""Hidden cases: seeded, inside the constraints, aimed at the edges and at the classic mistakes of a ring.

Seven shapes (n, d) in all, the examples' three among them (each distinct shape is one more compile of a
shard_map program per Submit). Values are rounded to 3 decimals; where they are large they are positive, so
every order of summation (a ring to the left, to the right, a tree) agrees within the tolerance.
"""
import numpy as np


def _rows(rng, n, d, low=-5.0, high=5.0):
    return np.round(rng.uniform(low, high, size=(n, d)), 3)


def _one_hot_row(rng, n, d, row):
    x = np.zeros((n, d))
    x[row] = np.round(rng.uniform(1.0, 9.0, size=d), 3)
    return x


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = [
        # 1-3. d = 1 on 2, 3 and 4 devices: each device's block is (1, 1) (catches squeezing the block to a
        #      scalar and losing the row axis, and a fixed number of devices).
        _rows(rng, 2, 1),
        _rows(rng, 3, 1),
        _rows(rng, 4, 1),
        # 4. The largest shape, n = 4 and d = 8.
        _rows(rng, 4, 8),
        # 5. n = 3, an odd ring (catches a ring that only works when n is even, e.g. swapping pairs).
        _rows(rng, 3, 5),
        # 6-7. Large positive values, up to 1e6 (catches passing the blocks in bfloat16 or float16 to save
        #      bandwidth: their rounding is 1e-3 to 1e-2 of the value, far outside the tolerance).
        np.round(rng.uniform(1e5, 1e6, size=(2, 3)), 1),
        np.round(rng.uniform(2e5, 1e6, size=(4, 8)), 1),
        # 8. Rows of very different magnitude (catches averaging instead of summing, and scaling by n).
        np.round(rng.uniform(1.0, 2.0, size=(3, 5)) * np.array([[1e3], [1e-2], [1.0]]), 3),
        # 9-10. Only one row is non-zero, at the first and at the last device: a ring one step short (n - 2
        #      steps) leaves the device just before it without that row (catches the off-by-one step count and
        #      starting the total at zero instead of the device's own row).
        _one_hot_row(rng, 4, 1, 0),
        _one_hot_row(rng, 4, 8, 3),
        # 11. Mixed signs on three devices (catches passing the running total instead of the received block:
        #     for n >= 3 that counts some rows twice).
        _rows(rng, 3, 2, -9.0, 9.0),
        # 12. Two devices, one of them all zeros.
        np.vstack([np.zeros((1, 3)), _rows(rng, 1, 3)]),
        # 13. d = 1 with large values on three devices.
        np.round(rng.uniform(5e5, 1e6, size=(3, 1)), 1),
        # 14. Rows that grow down the ring on four devices (catches a ring that passes a block twice or
        #     skips one: every row has a different size, so each mistake shows).
        np.round(np.arange(1, 5)[:, None] * rng.uniform(1.0, 2.0, size=(4, 8)) * 10.0 ** np.arange(4)[:, None], 3),
    ]
    return [{"x": x.astype(np.float64).tolist()} for x in cases]

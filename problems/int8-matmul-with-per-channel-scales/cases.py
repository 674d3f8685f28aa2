"""Hidden cases: seeded, inside the constraints, aimed at the edges and at int8 matmul's classic mistakes.

Every case keeps each `x / scale` at least 0.01 away from a rounding tie (a number ending in .5), so any
correct order of operations (x / (amax / 127), x * 127 / amax, x * (127 / amax)) quantizes alike.

The tolerance is relative (rtol 1e-5, atol 1e-12): the int32 accumulator is exact and the two scales cost a
few float32 ulps in any order, so an output of 1e-8 is compared as closely as one of 10. That is what lets
the tiny rows of the last case tell a floor or an epsilon on the scale from the scale itself.
"""
import numpy as np

TIE_MARGIN = 0.01


def _no_ties(x: np.ndarray) -> np.ndarray:
    """Nudge every entry whose x * 127 / (its row's max) lies within TIE_MARGIN of a tie, by 0.001 at a time."""
    x = x.astype(np.float64)
    for _ in range(200):
        amax = np.max(np.abs(x), axis=1, keepdims=True)
        t = np.abs(x) * 127.0 / np.where(amax > 0, amax, 1.0)
        near = np.abs(t - np.floor(t) - 0.5) < TIE_MARGIN
        if not near.any():
            return np.round(x, 3)
        x = np.where(near & (np.abs(x) < amax), np.round(x + np.sign(x) * 0.001, 3), x)
    raise ValueError("could not move x off the ties")


def _case(x, w_q, w_scale) -> dict:
    return {"x": _no_ties(np.asarray(x)).astype(np.float32).tolist(),
            "w_q": np.asarray(w_q, dtype=np.int8).tolist(),
            "w_scale": np.round(np.asarray(w_scale, dtype=np.float64), 4).astype(np.float32).tolist()}


def _tiny_rows(rng, amaxes, k) -> np.ndarray:
    """Rows whose largest magnitude is exactly each of ``amaxes`` (0 for a zero row), built from integer
    levels q plus a fraction in [-0.3, 0.3], so every `x * 127 / amax` is at least 0.2 from a tie however
    small the row (`_no_ties`, which nudges by 0.001, cannot handle rows below 0.001)."""
    rows = []
    for amax in amaxes:
        levels = rng.integers(20, 127, size=k) + rng.uniform(-0.3, 0.3, size=k)
        levels[rng.integers(k)] = 127.0
        rows.append(levels * rng.choice([-1.0, 1.0], size=k) * amax / 127.0)
    return np.asarray(rows)


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def xs(m, k, scale=4.0):
        return np.round(rng.uniform(-scale, scale, size=(m, k)), 3)

    def ws(k, n):
        return rng.integers(-127, 128, size=(k, n))

    def scales(n, lo=0.004, hi=0.05):
        return rng.uniform(lo, hi, size=n)

    cases = []
    # M = K = N = 1: the smallest product; forgetting either scale, or truncating instead of rounding.
    cases.append(_case([[-2.345]], [[77]], [0.0123]))
    # Rows of very different magnitude (8, 0.05, 1, 0.3): one scale for the whole tensor instead of one per
    # row crushes the small rows to a few levels.
    x = xs(4, 4, 1.0) * np.array([[8.0], [0.05], [1.0], [0.3]])
    cases.append(_case(x, ws(4, 4), scales(4)))
    # Accumulators up to 4 * 127 * 127 = 64516: an int8 result (no preferred_element_type) wraps around, so
    # does an int16 one, and a bfloat16/float16 cast of the accumulator loses its low bits.
    x = np.abs(xs(3, 4)) + 3.5
    x[1] *= -1
    w = np.full((4, 3), 127)
    w[:, 1] = -127
    w[2, 2] = 120
    cases.append(_case(x, w, scales(3)))
    # M == N with very different column scales: w_scale applied per row (w_scale[:, None]) broadcasts
    # without an error when the matrix is square, and is wrong.
    cases.append(_case(xs(4, 3), ws(3, 4), [0.001, 0.1, 0.02, 0.005]))
    # An all-zero row next to ordinary ones: its scale must not be 0 / 0; its output row is exactly 0.
    x = xs(3, 4)
    x[1] = 0.0
    cases.append(_case(x, ws(4, 2), scales(2)))
    # Entries whose x / scale has a fractional part between 0.3 and 0.7: truncating (`astype(int8)` without
    # rounding) or flooring moves them by one level.
    x = (rng.integers(1, 120, size=(3, 2)) + rng.choice([0.3, 0.4, 0.6, 0.7], size=(3, 2))) / 127.0
    x = np.concatenate([np.full((3, 1), 1.0), x], axis=1) * rng.choice([-1.0, 1.0], size=(3, 3)) * 2.5
    x[:, 0] = np.abs(x[:, 0])
    cases.append(_case(x, ws(3, 4), scales(4)))
    # One output channel (N = 1).
    cases.append(_case(xs(4, 4), ws(4, 1), scales(1)))
    # One row (M = 1), four channels.
    cases.append(_case(xs(1, 4, 8.0), ws(4, 4), scales(4)))
    # Mostly negative values: flooring (instead of rounding to nearest) errs on the negative side.
    cases.append(_case(-np.abs(xs(2, 3, 6.0)), ws(3, 3), scales(3)))
    # Column scales from 0.001 to 0.1 and the full int8 range: a scale of amax / 128 (or 255 levels)
    # instead of amax / 127 shifts almost every level.
    cases.append(_case(xs(4, 2, 8.0), [[127, -127, 64], [-1, 100, -90]], [0.001, 0.1, 0.03]))
    # Columns of x of very different magnitude within each row: quantizing x per column (over the
    # contraction axis) cannot be undone after the product.
    x = xs(2, 4) * np.array([[5.0, 0.1, 1.0, 0.02]])
    cases.append(_case(x, ws(4, 3), scales(3)))
    # K = 1: a contraction of one element.
    cases.append(_case(xs(4, 1), ws(1, 4), scales(4)))
    # General shapes.
    cases.append(_case(xs(4, 4, 8.0), ws(4, 4), scales(4, 0.001, 0.1)))
    cases.append(_case(xs(3, 3, 0.5), ws(3, 2), scales(2)))
    # Killer "tiny rows": rows whose largest magnitude is 8, 3e-4, 2e-6 and 1.3e-9 (the constraints' floor
    # is 1e-9) against weights near +-127 and w_scale 0.1, signs matched so the products add up. Every row
    # must use its own max|x| / 127: a floor on the row maximum or on the scale (`jnp.maximum(amax, 1e-5)`,
    # `jnp.maximum(scale, finfo.eps)`), an epsilon added to it (`x / (scale + 1e-12)`) or a threshold
    # that treats tiny rows as zero rows (`amax > 1e-6`) quantizes them to a few levels or to zeros. (The
    # earlier cases' smallest row, 0.05, is far above any such floor.)
    x = _tiny_rows(rng, [8.0, 3e-4, 2e-6, 1.3e-9], 4)
    signs = np.sign(x[0])
    w = (rng.integers(100, 128, size=(4, 4)) * signs[:, None]).astype(np.int64)
    x = np.abs(x) * signs[None, :]
    cases.append({"x": x.astype(np.float32).tolist(), "w_q": w.astype(np.int8).tolist(),
                  "w_scale": np.round(rng.uniform(0.08, 0.1, size=4), 4).astype(np.float32).tolist()})
    return cases

"""Hidden cases: seeded, inside the constraints (B <= 8, D, H <= 4, values within +-3, max_norm within
0.01..1000), and each there to catch a named mistake of per-example clipping.

Some thresholds are set from the per-example gradient norms themselves (computed here in float64 from the
closed form of the gradient), so that a case can sit exactly at the threshold or split the batch into
clipped and unclipped examples. The cases share eight shapes between them: every distinct shape is traced
and compiled once per submission, so reusing shapes keeps grading fast without losing an edge.
"""
import numpy as np


def _round(a):
    return np.round(np.asarray(a, dtype=np.float64), 3).astype(np.float32)


def leaf_norms(case) -> np.ndarray:
    """Every example's gradient norm per leaf, shape (B, 4): w1, b1, w2, b2 (float64, closed form)."""
    p = {k: np.asarray(v, np.float64) for k, v in case["params"].items()}
    x, y = np.asarray(case["x"], np.float64), np.asarray(case["y"], np.float64)
    h = np.tanh(x @ p["w1"] + p["b1"])
    r = 2.0 * (h @ p["w2"] + p["b2"] - y)
    dh = r[:, None] * p["w2"] * (1.0 - h ** 2)
    dh_norm = np.sqrt((dh ** 2).sum(1))
    return np.stack([np.sqrt((x ** 2).sum(1)) * dh_norm, dh_norm, np.abs(r) * np.sqrt((h ** 2).sum(1)), np.abs(r)], 1)


def norms(case) -> np.ndarray:
    """The unclipped global norm of every example's gradient (float64)."""
    return np.sqrt((leaf_norms(case) ** 2).sum(1))


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def case(b, d, h, max_norm, scale=1.5):
        params = {"w1": _round(rng.uniform(-scale, scale, (d, h))).tolist(),
                  "b1": _round(rng.uniform(-0.5, 0.5, h)).tolist(),
                  "w2": _round(rng.uniform(-scale, scale, h)).tolist(),
                  "b2": float(_round(rng.uniform(-0.5, 0.5)))}
        return {"params": params, "x": _round(rng.uniform(-2, 2, (b, d))).tolist(),
                "y": _round(rng.uniform(-2, 2, b)).tolist(), "max_norm": max_norm}

    cases = []
    # B = 1: one example (code that squeezes the batch axis or stacks a list of one breaks).
    cases.append(case(1, 2, 3, 1.0))
    # The largest shapes, B = 8, D = H = 4.
    cases.append(case(8, 4, 4, 1.0))
    # max_norm = 1000, the largest: nothing is clipped, so scaling every gradient to length C is wrong.
    cases.append(case(5, 3, 2, 1000.0))
    # max_norm = 0.01, the smallest: everything is clipped; a flipped min/max, or clipping the mean
    # gradient once instead of each example's, gives other numbers.
    cases.append(case(6, 2, 4, 0.01))
    # All gradients zero (w2 = 0 and every target equal to b2) with the smallest threshold: g / |g| * C or
    # C / |g| without a guard is 0 / 0 = nan; the answer is all zeros with norms 0.
    zero = case(5, 3, 2, 0.01)
    zero["params"]["w2"] = [0.0, 0.0]
    zero["y"] = [zero["params"]["b2"]] * 5
    cases.append(zero)
    # One example's gradient is zero (its target equals b2, w2 = 0) and the others are not: a nan in that
    # example's clipping factor spreads into the mean.
    some = case(6, 2, 4, 0.5)
    some["params"]["w2"] = [0.0, 0.0, 0.0, 0.0]
    some["y"][0] = some["params"]["b2"]
    cases.append(some)
    # max_norm exactly at example 0's norm (up to float32 rounding): the factor is 1 there whichever way
    # the comparison is written; the other examples are clipped or not around it.
    at = case(5, 3, 2, 1.0)
    at["max_norm"] = float(np.float32(norms(at)[0]))
    cases.append(at)
    # A threshold between the smallest and largest norms (their median), so some examples are clipped and
    # some not: clipping the mean, clipping per leaf, or differentiating loss / B all give other numbers.
    mixed = case(8, 4, 4, 1.0)
    mixed["max_norm"] = float(np.float32(np.median(norms(mixed))))
    cases.append(mixed)
    # For one example, every leaf's own norm is below C but the global norm is above it: clipping each leaf
    # separately leaves that example unclipped.
    leafy = case(6, 2, 4, 1.0, scale=1.0)
    leaves, total = leaf_norms(leafy).max(1), norms(leafy)
    k = int(np.argmax(total / np.maximum(leaves, 1e-9)))
    leafy["max_norm"] = float(np.float32((leaves[k] + total[k]) / 2))
    cases.append(leafy)
    # Values at the ends of +-3: large norms (hundreds), clipped to 0.5.
    big = case(8, 4, 4, 0.5, scale=3.0)
    big["x"] = _round(rng.choice([-3.0, 3.0], (8, 4))).tolist()
    big["y"] = [3.0, -3.0] * 4
    cases.append(big)
    # D = H = 1 and B = 7: one weight per layer.
    cases.append(case(7, 1, 1, 0.3))
    # D = 4, H = 1, a threshold that clips some examples and not others.
    cases.append(case(3, 4, 1, 0.5))
    # B = 2, D = 1, H = 4, moderate threshold.
    cases.append(case(2, 1, 4, 0.8))
    # B = 8 with a threshold of 5, near the typical norm.
    cases.append(case(8, 4, 4, 5.0))

    for c in cases:
        assert 0.01 <= c["max_norm"] <= 1000.0
        for leaf in [c["x"], c["y"]] + list(c["params"].values()):
            assert np.all(np.abs(np.asarray(leaf)) <= 3.0)
    return cases

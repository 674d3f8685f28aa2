"""Hidden cases: seeded, inside the constraints, each there to catch named mistakes.

Every case except the two 1-by-1 ones holds a weight at exactly +1, one at exactly -1 (the statement keeps
their gradient: `jnp.abs(w) < 1` instead of `<= 1`, a one-sided or asymmetric mask, or the derivative of
`jnp.clip` at its bounds, which is not 1, all get them wrong) and one beyond 1 + 0.5 / levels (its gradient
is cut: an unclipped identity, or clipping the weights instead of masking the gradient, gives it one; and
rounding it without clipping first lands off the grid's end). Every case has a nonzero gradient somewhere, so
plain `jax.grad` through `jnp.round` (zero everywhere) fails them all. The visible examples have no weight at
exactly -1, so a mask written `(w > -1) & (w <= 1)` passes them and fails here.
"""
import numpy as np

# (B, D, K, levels, why)
SHAPES = [
    (1, 1, 1, 1, "w = +1 alone, levels 1: the boundary keeps its gradient"),
    (1, 1, 1, 8, "w = -1.3 alone, levels 8: clipped, no gradient; unclipped rounding gives 1.25, not 1"),
    (6, 6, 6, 8, "the largest shapes and the finest grid"),
    (6, 6, 6, 1, "the largest shapes and the coarsest grid (weights become -1, 0 or 1)"),
    (1, 6, 1, 2, "one example, one output: dividing by B or by K alone is not caught here, the others do it"),
    (6, 1, 6, 3, "one input feature, many outputs: a loss divided by B only is off by K = 6"),
    (2, 3, 4, 5, "B != D != K: transposed products fail with a shape error or wrong numbers"),
    (4, 5, 3, 7, "odd levels"),
    (3, 2, 5, 4, "levels 4"),
    (5, 4, 2, 6, "levels 6"),
    (2, 6, 3, 2, "levels 2, wide inputs"),
    (6, 2, 2, 1, "levels 1, square weights: a transposed w runs and is wrong"),
    (1, 3, 6, 8, "one example, wide outputs, finest grid"),
]


def _weight(rng: np.random.Generator, levels: int, low: float = -1.5, high: float = 1.5) -> float:
    """A weight in [low, high] whose clipped, scaled value is at least 0.01 away from a rounding tie."""
    while True:
        w = float(np.float32(np.round(rng.uniform(low, high), 3)))
        scaled = abs(min(max(w, -1.0), 1.0) * levels)
        if abs(scaled - np.floor(scaled) - 0.5) > 0.01:
            return w


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, d, k, levels, _why in SHAPES:
        w = [[_weight(rng, levels) for _ in range(k)] for _ in range(d)]
        if d * k == 1:
            w[0][0] = 1.0 if levels == 1 else -1.3
        else:
            w[0][0] = 1.0                      # exactly at the boundary: keeps its gradient
            w[-1][-1] = -1.0                   # the other boundary
            if d * k > 2:                      # beyond 1 (and past the grid's end when levels > 1): cut
                free = [(i, j) for i in range(d) for j in range(k) if (i, j) not in ((0, 0), (d - 1, k - 1))]
                i, j = free[int(rng.integers(len(free)))]
                sign = 1.0 if rng.uniform() < 0.5 else -1.0
                w[i][j] = sign * _weight(rng, levels, min(1.0 + 0.5 / levels + 0.02, 1.2), 1.49)
        cases.append({"w": w, "x": draw(b, d, scale=2.0), "y": draw(b, k, scale=2.0), "levels": levels})
    return cases

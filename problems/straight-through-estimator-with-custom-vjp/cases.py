"""Hidden cases: seeded, inside the constraints, and covering their edges."""
import numpy as np

# (B, D, K, levels): B, D and K at 1 and at 6, levels = 1 (weights become -1, 0 or 1) and 8 (fine grid),
# and weights exactly at +-1 and beyond them (clipped, so no gradient) in every case.
SHAPES = [
    (1, 1, 1, 1),
    (6, 6, 6, 8),
    (1, 4, 3, 2),
    (6, 1, 2, 4),
    (3, 5, 1, 1),
    (4, 2, 6, 3),
    (2, 3, 3, 5),
    (5, 4, 4, 8),
    (6, 2, 1, 2),
    (2, 6, 5, 7),
    (3, 3, 2, 4),
    (4, 5, 3, 6),
    (1, 2, 6, 1),
]


def _weight(rng: np.random.Generator, levels: int) -> float:
    """A weight in [-1.5, 1.5] whose scaled value is at least 0.01 away from a rounding tie."""
    while True:
        w = float(np.float32(np.round(rng.uniform(-1.5, 1.5), 3)))
        scaled = abs(min(max(w, -1.0), 1.0) * levels)
        if abs(scaled - np.floor(scaled) - 0.5) > 0.01:
            return w


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, d, k, levels in SHAPES:
        w = [[_weight(rng, levels) for _ in range(k)] for _ in range(d)]
        w[0][0] = 1.0 if d * k > 1 or levels % 2 else -1.0  # the clipping boundary itself
        if d * k > 1:
            w[-1][-1] = -1.0
        cases.append({"w": w, "x": draw(b, d, scale=2.0), "y": draw(b, k, scale=2.0), "levels": levels})
    return cases

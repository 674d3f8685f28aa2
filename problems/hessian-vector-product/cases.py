"""Hidden cases: seeded, inside the constraints, and covering their edges.

N never equals D, so that an array with two axes of length D can only be a Hessian-sized intermediate.
"""
import numpy as np

# (N, D, scale of x): N = 1, N = 16, D = 2, D = 16, N < D and N > D, saturated logits (large x), tiny x.
SHAPES = [
    (1, 2, 1.0),
    (1, 16, 1.0),
    (16, 2, 1.0),
    (16, 15, 1.0),
    (3, 16, 0.5),
    (8, 4, 1.0),
    (4, 8, 1.0),
    (10, 3, 3.0),
    (5, 6, 3.0),
    (12, 7, 0.01),
    (2, 5, 2.0),
    (7, 2, 0.2),
    (6, 9, 1.5),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for n, d, scale in SHAPES:
        cases.append({
            "w": draw(d), "x": draw(n, d, scale=scale),
            "y": rng.integers(0, 2, size=n).astype(np.float32).tolist(), "v": draw(d, scale=3.0),
        })
    return cases

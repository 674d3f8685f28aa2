"""Hidden cases: seeded, inside the constraints, and covering their edges."""
import numpy as np

# (B, D, H, weight scale): B = 1 and 4, D = 2 and 4, H = 2 and 5, and saturated tanh (large weights).
SHAPES = [
    (1, 2, 2, 1.0),
    (1, 4, 5, 1.0),
    (4, 2, 5, 1.0),
    (4, 4, 2, 1.0),
    (2, 3, 3, 1.0),
    (3, 2, 4, 1.0),
    (4, 4, 5, 1.0),
    (2, 2, 2, 6.0),
    (4, 3, 5, 8.0),
    (1, 3, 2, 5.0),
    (3, 4, 3, 0.1),
    (2, 4, 4, 2.0),
    (4, 2, 3, 4.0),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, d, h, scale in SHAPES:
        cases.append({
            "params": {"w1": draw(d, h, scale=scale), "b1": draw(h, scale=0.5 * scale),
                       "w2": draw(h, d), "b2": draw(d, scale=0.5)},
            "x": draw(b, d, scale=2.0),
            "y": draw(b, d, scale=2.0),
        })
    return cases

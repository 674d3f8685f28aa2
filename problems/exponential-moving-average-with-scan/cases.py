"""Hidden cases: seeded, inside the constraints, and covering their edges."""
import numpy as np

# (T, D, decay): T = 1, T = 64, D = 1, D = 8, decay = 0 (copy the latest row), decay close to 1 (slow),
# decay = 0.5, T = D (rows and features alike in size), and a few ordinary ones.
SHAPES = [
    (1, 3, 0.9),
    (1, 1, 0.0),
    (64, 1, 0.99),
    (64, 8, 0.9),
    (5, 8, 0.0),
    (12, 4, 0.999),
    (7, 2, 0.5),
    (4, 4, 0.75),
    (16, 3, 0.2),
    (3, 5, 0.95),
    (32, 6, 0.6),
    (9, 1, 0.3),
    (2, 2, 0.1),
    (20, 7, 0.875),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    return [{"x": draw(t, d, scale=10.0), "init": draw(d, scale=5.0), "decay": decay}
            for t, d, decay in SHAPES]

"""Hidden cases: seeded, inside the constraints, and covering their edges.

Every case with B >= 2 keeps B apart from D, H, D * H and the parameter count D * H + 2H + 1, so that an
axis of length B can only be the batch.
"""
import numpy as np

# (B, D, H, max_norm): B = 1 and 8, D and H at 1 and 4, a threshold so large that nothing is clipped,
# one so small that everything is, thresholds in between, and a case whose gradients are all zero.
SHAPES = [
    (1, 2, 3, 1.0),
    (8, 4, 4, 1.0),
    (8, 1, 1, 0.5),
    (5, 3, 2, 1000.0),
    (6, 2, 4, 0.01),
    (7, 4, 3, 2.0),
    (3, 1, 2, 0.3),
    (6, 1, 3, 5.0),
    (5, 4, 2, 1.5),
    (2, 3, 4, 0.8),
    (4, 3, 2, 3.0),
    (7, 1, 4, 0.1),
    (3, 2, 2, "zero"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, d, h, max_norm in SHAPES:
        params = {"w1": draw(d, h, scale=1.5), "b1": draw(h, scale=0.5), "w2": draw(h, scale=1.5),
                  "b2": float(np.float32(np.round(rng.uniform(-0.5, 0.5), 3)))}
        x, y = draw(b, d, scale=2.0), draw(b, scale=2.0)
        if max_norm == "zero":  # w2 = 0 and every target equals b2: every per-example gradient is 0
            params["w2"] = [0.0] * h
            y = [params["b2"]] * b
            max_norm = 1.0
        cases.append({"params": params, "x": x, "y": y, "max_norm": max_norm})
    return cases

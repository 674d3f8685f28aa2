"""Hidden cases: seeded, inside the constraints, and covering their edges."""
import numpy as np

# (B, num_microbatches, D, H, K): B = 1, num_microbatches = 1, num_microbatches = B, several
# 1 < num_microbatches < B, K > 1, D = 1, H = 1, B = 8, and D = B (rows and features alike in size).
SHAPES = [
    (1, 1, 2, 3, 1),
    (8, 1, 3, 2, 2),
    (8, 8, 2, 4, 1),
    (8, 2, 4, 3, 3),
    (8, 4, 2, 2, 4),
    (6, 3, 3, 4, 2),
    (6, 2, 1, 3, 1),
    (4, 2, 4, 1, 2),
    (5, 5, 1, 2, 3),
    (4, 4, 2, 1, 1),
    (3, 1, 4, 4, 4),
    (8, 4, 1, 1, 1),
    (2, 2, 3, 2, 2),
    (7, 7, 2, 3, 2),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, n, d, h, k in SHAPES:
        cases.append({
            "params": {"w1": draw(d, h), "b1": draw(h, scale=0.5), "w2": draw(h, k), "b2": draw(k, scale=0.5)},
            "x": draw(b, d, scale=2.0),
            "y": draw(b, k),
            "num_microbatches": n,
        })
    # Killer "a floor on the loss": one row per microbatch (the shape of case 10) and targets 7e-4 from the
    # network's outputs (computed here in float64, then rounded to float32), so every microbatch's loss is
    # about 5e-7. A floor on the loss (`jnp.maximum(loss, 1e-6)`, written to keep a log or a division safe)
    # then holds it at 1e-6, and its gradient, 0 below the floor, zeroes every microbatch's gradients.
    b, n, d, h, k = 4, 4, 2, 1, 1
    f32 = lambda a: np.asarray(a, np.float32).astype(np.float64)  # noqa: E731
    params = {"w1": draw(d, h), "b1": draw(h, scale=0.5), "w2": draw(h, k), "b2": draw(k, scale=0.5)}
    x = draw(b, d, scale=2.0)
    out = np.tanh(f32(x) @ f32(params["w1"]) + f32(params["b1"])) @ f32(params["w2"]) + f32(params["b2"])
    y = out + 7e-4 * np.where(rng.uniform(size=out.shape) < 0.5, -1.0, 1.0)
    cases.append({"params": params, "x": x, "y": np.asarray(y, np.float32).tolist(), "num_microbatches": n})
    return cases

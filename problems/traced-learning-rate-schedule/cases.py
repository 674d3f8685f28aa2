"""Hidden cases: seeded, inside the constraints, and covering their edges."""
import numpy as np

# (step, warmup_steps, total_steps, min_lr kind): step 0, the last warmup step W - 1, the first decay step
# W, the middle of the decay, T - 1, T itself, far beyond T, no warmup (W = 0), W = T - 1 (a one-step
# decay), min_lr = 0 and min_lr = base_lr (a constant decay phase), and a long schedule (T = 100000).
SHAPES = [
    (0, 10, 100, "zero"),
    (9, 10, 100, "some"),
    (10, 10, 100, "some"),
    (55, 10, 100, "some"),
    (99, 10, 100, "zero"),
    (100, 10, 100, "some"),
    (1000, 10, 100, "some"),
    (0, 0, 50, "some"),
    (17, 0, 50, "zero"),
    (7, 8, 9, "some"),
    (8, 8, 9, "some"),
    (40000, 2000, 100000, "some"),
    (1500, 2000, 100000, "zero"),
    (30, 5, 60, "base"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for step, warmup, total, kind in SHAPES:
        base = float(np.float32(np.round(rng.uniform(0.01, 1.0), 4)))
        min_lr = {"zero": 0.0, "base": base,
                  "some": float(np.float32(np.round(base * rng.uniform(0.0, 0.5), 5)))}[kind]
        cases.append({"step": step, "base_lr": base, "min_lr": min_lr, "warmup_steps": warmup, "total_steps": total})
    return cases

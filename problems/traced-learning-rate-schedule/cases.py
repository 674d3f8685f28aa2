"""Hidden cases: seeded, inside the constraints, each there to catch a mistake (the comment says which).

`base_lr` is drawn in [0.01, 1]; `min_lr` is 0 ("zero"), equal to base_lr ("base"), or between 0 and half
of base_lr ("some"). With min_lr = 0 the tolerance is absolute (2e-7), so a tail that should be a hair
above min_lr is told apart from one that is exactly min_lr.
"""
import numpy as np

# (step, warmup_steps, total_steps, min_lr kind)
SHAPES = [
    # the first warmup step: base_lr / W. Catches a warmup that starts at 0 (t / W), integer division
    # ((t + 1) // W) and dividing by W + 1.
    (0, 10, 100, "zero"),
    # the last warmup step W - 1 must reach base_lr exactly: catches t / W, (t + 1) / (W + 1).
    (9, 10, 100, "some"),
    # the first decay step W must be base_lr: catches `step <= W` (warmup formula at W) and a cosine that
    # counts from W - 1.
    (10, 10, 100, "some"),
    # the middle of the decay with min_lr > 0: catches decaying to 0 instead of min_lr, and an off-by-one
    # cosine length.
    (55, 10, 100, "some"),
    # the tail, where the cosine is close to but not exactly -1, with min_lr = 0: T - 3 and T - 1 catch a
    # cosine that ends one step early ((t - W) / (T - W - 1)) or starts one step late.
    (97, 10, 100, "zero"),
    (99, 10, 100, "zero"),
    # t = T, where every correct form meets min_lr.
    (100, 10, 100, "some"),
    # beyond T at points where the unclipped cosine is not -1 (progress 1.56, 10.99, 11.41, 10.18): catches
    # forgetting to stop at T (the rate climbs back up). A point like t = 1000 here would not: its cosine
    # is exactly -1.
    (150, 10, 100, "zero"),
    (999, 10, 100, "zero"),
    (1037, 10, 100, "some"),
    (999999, 2000, 100000, "some"),
    # no warmup at all (W = 0): catches warmups that divide by W unguarded, whose inf or NaN leaks through
    # a 0/1 mask (a select does not choose it).
    (0, 0, 50, "some"),
    (17, 0, 50, "zero"),
    (49, 0, 50, "zero"),
    # W = 1: the only warmup step is t = 0 at base_lr; t = 1 is the first decay step, also base_lr.
    (0, 1, 20, "some"),
    (1, 1, 20, "some"),
    # W = 2: t = 0 is base_lr / 2, t = 1 is base_lr, t = 2 starts the decay.
    (0, 2, 30, "zero"),
    (1, 2, 30, "some"),
    (2, 2, 30, "some"),
    # W = T - 1, a one-step decay: catches (T - W - 1) in a denominator (0 / 0 = NaN at t = W).
    (7, 8, 9, "some"),
    (8, 8, 9, "some"),
    (9, 8, 9, "zero"),
    # min_lr = base_lr: a constant decay phase; catches code that divides by base_lr - min_lr.
    (30, 5, 60, "base"),
    # a long schedule: warmup middle and decay middle at T = 100000.
    (1500, 2000, 100000, "zero"),
    (40000, 2000, 100000, "some"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for step, warmup, total, kind in SHAPES:
        base = float(np.float32(np.round(rng.uniform(0.01, 1.0), 4)))
        min_lr = {"zero": 0.0, "base": base,
                  "some": float(np.float32(np.round(base * rng.uniform(0.05, 0.5), 5)))}[kind]
        cases.append({"step": step, "base_lr": base, "min_lr": min_lr, "warmup_steps": warmup, "total_steps": total})
    # Killer "a floor on the rate": the smallest rate the constraints allow, base_lr 0.01 at the first of
    # 99999 warmup steps: 1e-7. A floor on the warmup rate (`jnp.maximum(lr, 1e-6)`, a habit from schedules
    # that must never reach zero) returns 1e-6; the absolute tolerance of 2e-7 tells them apart.
    cases.append({"step": 0, "base_lr": 0.01, "min_lr": 0.0, "warmup_steps": 99999, "total_steps": 100000})
    return cases

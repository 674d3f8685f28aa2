"""Hidden cases: seeded, inside the constraints, each there to catch a mistake (the comment says which).

Values are drawn in [-10, 10] for `x` and [-5, 5] for `init` unless a case says otherwise; "extreme" cases
put every value at +-10, the constraints' bound.
"""
import numpy as np

# (T, D, decay, values, the mistake it catches)
SHAPES = [
    # T = 1: one row only; catches off-by-one stacking (m_0..m_{T-1}), dropping or skipping a row (x[1:]).
    (1, 3, 0.9, "uniform"),
    (1, 1, 0.0, "uniform"),
    # decay = 0: every average is the latest row; catches swapped weights (beta on the new row) and closed
    # forms that divide by beta^t or take log(beta).
    (5, 8, 0.0, "uniform"),
    (64, 8, 0.0, "extreme"),
    # decay close to 1: the average barely leaves `init`; catches ignoring `init` (zeros, or starting from
    # x[0]) and bias correction, whose 1 - beta^t is tiny here.
    (12, 4, 0.999, "uniform"),
    (64, 8, 0.9999, "extreme"),
    (64, 8, 0.99, "uniform"),
    # T = 64 with a small decay and values at the bound: beta^-t overflows float32 (0.1^-64 = 1e64), which
    # catches a running sum of x_s / beta^s rescaled by beta^t (in a scan or with cumsum).
    (64, 8, 0.1, "extreme"),
    (64, 8, 0.2, "uniform"),
    # ordinary shapes and decays: T = D (rows and features alike in size), D = 1, mid decays. Shapes repeat
    # on purpose: each distinct shape is traced and compiled once per submission, and a Python loop over 64
    # steps alone takes seconds to compile.
    (64, 8, 0.9, "uniform"),
    (7, 2, 0.5, "uniform"),
    (4, 4, 0.75, "uniform"),
    (16, 3, 0.2, "uniform"),
    (5, 8, 0.95, "uniform"),
    (12, 4, 0.6, "extreme"),
    (9, 1, 0.3, "uniform"),
    (2, 2, 0.1, "uniform"),
    (16, 3, 0.875, "uniform"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0, extreme=False):
        if extreme:
            return (scale * rng.choice([-1.0, 1.0], size=shape)).astype(np.float32).tolist()
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    return [{"x": draw(t, d, scale=10.0, extreme=kind == "extreme"),
             "init": draw(d, scale=10.0 if kind == "extreme" else 5.0, extreme=kind == "extreme"),
             "decay": decay}
            for t, d, decay, kind in SHAPES]

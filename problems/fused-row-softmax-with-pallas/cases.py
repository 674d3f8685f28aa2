"""Hidden cases: seeded, inside the constraints, aimed at a fused softmax's classic mistakes.

Two (shape, block) combinations (three with the examples'): each is one more interpret-mode compile per Submit.

- rows of very different levels in one block (one near +900, the next near -900): a kernel that subtracts the
  block's maximum instead of each row's underflows the low row to zeros and divides 0 by 0; one that
  subtracts nothing overflows the high row to infinity. Both are NaN here, right on gentle inputs.
- M // bm >= 2 and N != bm everywhere: a reduction over axis 0 (the block's columns) instead of -1, a block
  of (bm, bm) or (N, N), or an index map that returns (0, i), reads or normalises the wrong entries.
- ties (constant rows) and one-hot spikes: every entry equal gives exactly 1 / N; a spike of +50 over zeros
  gives 1 / (1 + (N - 1) e^-50), so a sum that forgets the spike's own e^0 shows.
"""
import numpy as np

COMBOS = [
    # (M, N, bm)
    (8, 16, 2),   # grid (4,): four steps of two rows, N != bm
    (12, 5, 4),   # grid (3,): an odd row width, blocks of four rows
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for m, n, bm in COMBOS:
        for kind in ("normal", "levels", "peaked", "ties", "spikes", "normal"):
            if kind == "normal":
                x = rng.normal(0.0, 2.0, (m, n))
            elif kind == "levels":  # alternate rows near +900 and -900: each row's own max matters
                x = rng.normal(0.0, 3.0, (m, n)) + np.where(np.arange(m)[:, None] % 2 == 0, 900.0, -900.0)
            elif kind == "peaked":  # large spreads: most entries underflow, one or two carry the row
                x = rng.uniform(-1000.0, 1000.0, (m, n))
            elif kind == "ties":  # constant rows at assorted levels
                x = np.repeat(rng.uniform(-500.0, 500.0, (m, 1)), n, axis=1)
            else:  # one spike of +50 per row over zeros
                x = np.zeros((m, n))
                x[np.arange(m), rng.integers(0, n, m)] = 50.0
            cases.append({"x": np.asarray(x, np.float32).tolist(), "bm": bm})
    return cases

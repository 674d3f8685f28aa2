"""Hidden cases: seeded, inside the constraints, aimed at a blocked matmul's classic mistakes.

Two (shape, block) combinations only (three with the examples'): each is one more interpret-mode compile per Submit.

- K // bk >= 2 (and != N // bn) everywhere but the (4, 4, 4) single-step case: an accumulator zeroed at every step, never
  zeroed (a scratch buffer is not zero-initialised in interpret mode either: Pallas fills it with garbage
  or leaves the last tile's sums), or an output written at the first step instead of the last, all show.
- bm != bn and M != N != K: index maps that swap (i, k) for (k, i), or a block spec of `b` written (bn, bk),
  fail or read the wrong blocks; M // bm > bm and N // bn > bn, so a grid of (bm, bn, ...) tiles misses
  output tiles. (A grid larger than asked, `m` for `m // bm`, is not caught by the numbers: interpret mode
  clamps the extra blocks onto the last tile and writes the same values again; `pallas-grid` refuses it.)
- a product left in bfloat16 (no `preferred_element_type`) is NOT caught here: XLA on a CPU keeps it in
  float32 (excess precision), so the numbers are right; `work-in-kernel` and the TPU compile refuse it
  (`submissions/requirements_not_met/bfloat16_block_products.py`).
"""
import numpy as np
import ml_dtypes

COMBOS = [
    # (M, K, N, bm, bn, bk)
    (8, 16, 12, 2, 3, 2),     # grid (4, 4, 8): eight contraction steps (not N // bn: a store at the last step
                              # of another axis shows), non-square tiles, M != N != K, and more tiles than a
                              # tile has rows (M // bm > bm): a grid of `bm` rows misses some
    (4, 4, 4, 4, 4, 4),       # grid (1, 1, 1): one step, init and store at the same step
]


def _bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for m, k, n, bm, bn, bk in COMBOS:
        for kind in ("uniform", "large", "signs", "uniform", "large", "signs"):
            if kind == "uniform":
                a, b = rng.uniform(-2, 2, (m, k)), rng.uniform(-2, 2, (k, n))
            elif kind == "large":  # every product positive and near 4: a bfloat16 sum of 16 of them rounds
                a, b = rng.uniform(1.5, 2, (m, k)), rng.uniform(1.5, 2, (k, n))
            else:  # rows of +-1 against columns of small steps: cancellation, zero entries of C
                a = rng.choice([-1.0, 1.0], (m, k))
                b = np.round(rng.uniform(-2, 2, (k, n)) * 16) / 16
            cases.append({"a": _bf16(a).tolist(), "b": _bf16(b).tolist(), "bm": bm, "bn": bn, "bk": bk})
    return cases

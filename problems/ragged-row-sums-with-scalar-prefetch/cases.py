"""Hidden cases: seeded, inside the constraints, aimed at a ragged reduction's classic mistakes.

Three (shape, block) combinations, the examples' among them: each is one more interpret-mode compile per Submit.
The values before a length are multiples of 1/8 of at most 4 (exact sums in any order); the padding past it
is at least 100 in magnitude, so any padding that leaks into a sum shows.

- off by one at the length (`cols <= length`: `wrong_answer/mask_cols_at_or_before_length.py`): lengths
  that are not multiples of `bn`, and lengths that are (4, 8, 12): the entry at the length is padding.
- the partial block not masked (whole blocks added while `j * bn < length`): every length not a multiple
  of `bn` (`wrong_answer/partial_block_unmasked.py`); the mask without the block's offset `j * bn`
  (`wrong_answer/column_offset_missing.py`): every length past the first block.
- length 0: a row block whose sums must be 0, placed after a full one ([16, 0]), so an accumulator zeroed
  only under the skip (`wrong_answer/init_under_the_skip.py`) or never (`wrong_answer/never_zeroed.py`)
  carries the previous row block's sums, and an output written at the last block that holds entries
  (`wrong_answer/store_at_last_real_block.py`) is never written (interpret mode leaves it NaN); [0, 0],
  where nothing at all is added.
- length N (the last block whole, nothing to clamp), and row blocks of very different lengths, so a mask or
  condition read with another row block's length (`lens_ref[0]`) shows (`wrong_answer/first_blocks_length.py`).
- `bm = 1`: one length per row, the per-row special case.
"""
import numpy as np

COMBOS = [
    # (M, N, bm, bn, lengths of each case)
    (4, 16, 2, 4, [[5, 12], [16, 0], [0, 0], [1, 15], [4, 8], [16, 16]]),
    (8, 12, 2, 4, [[3, 0, 12, 7], [12, 11, 1, 0], [8, 4, 9, 5], [0, 12, 0, 6]]),
    (5, 8, 1, 2, [[7, 0, 8, 1, 4], [2, 5, 0, 8, 3], [8, 8, 0, 0, 6]]),
]


def _rows(rng, m: int, n: int, bm: int, lengths: list[int]) -> np.ndarray:
    """Multiples of 1/8 in [-4, 4] before each row's length, padding of 100 to 1000 (either sign) after."""
    x = np.round(rng.uniform(-4, 4, (m, n)) * 8) / 8
    pad = rng.choice([-1.0, 1.0], (m, n)) * np.round(rng.uniform(100, 1000, (m, n)))
    cols = np.arange(n)[None, :]
    past = cols >= np.repeat(np.asarray(lengths), bm)[:, None]
    return np.where(past, pad, x).astype(np.float32)


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for m, n, bm, bn, all_lengths in COMBOS:
        for lengths in all_lengths:
            cases.append({"x": _rows(rng, m, n, bm, lengths).tolist(), "lengths": list(lengths), "bm": bm, "bn": bn})
    return cases

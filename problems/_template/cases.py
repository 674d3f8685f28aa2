"""Hidden cases: seeded, inside the constraints, covering their edges (N = 1, M = 1, both = 4...).

`python -m grader mutants <slug>` must find no survivor: every wrong variant of the reference its catalogue
makes is told apart by some case here (N != M kills `axis=0`), or listed in `equivalent_mutants.json`."""
import numpy as np


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    shapes = [(1, 1), (1, 4), (4, 1), (4, 4), (2, 3), (3, 2), (2, 2), (3, 3), (1, 2), (2, 1), (4, 3), (3, 4)]
    return [{"x": np.round(rng.uniform(-2, 2, size=s), 3).astype(np.float32).tolist()} for s in shapes]

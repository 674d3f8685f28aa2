"""Hidden cases: seeded, inside the constraints, aimed at the edges of AdamW and its classic mistakes.

Each case names the mistake it is there to catch: the bias correction left out or off by one (b ** count
instead of b ** (count + 1), which at count = 0 divides by zero), eps inside the square root or scaled by
the bias correction, weight decay added to the gradient (Adam + L2) or not multiplied by the learning rate,
b1 and b2 swapped, a missing eps turning 0 / 0 into NaN, and trees that break code assuming their keys.
Step 0 comes with zero moments, as the constraints say; later steps with moments of a plausible size
(|mu| up to the gradients' scale, nu up to its square).
"""
import numpy as np

FLAT = {"w": (3, 2), "b": (2,)}
NESTED = {"encoder": {"w": (2, 3), "b": (3,)}, "decoder": {"w": (3, 2), "b": (2,)}}
LIST_OF_DICTS = {"layers": [{"w": (2, 2), "b": (2,)}, {"w": (2, 1), "b": (1,)}], "scale": ()}
SINGLE_ARRAY = (4, 4)
SINGLE_SCALAR = ()
DEEP = {"a": [{"b": [(2,), (3,)]}, {"c": {"d": (1, 1, 2)}}], "e": ()}
LIST_OF_LEAVES = [(4,), (2, 2), ()]
TWELVE_LEAVES = {"blocks": [{"attn": {"q": (2, 2), "k": (2, 2), "v": (2, 2)}, "mlp": {"w": (2, 4), "b": (4,)}}
                            for _ in range(2)],
                 "ln": {"g": (2,), "b": (2,)}}
THREE_AXES = {"conv": (2, 2, 3), "bias": (3,)}
SAME_NAMES = {"w": {"w": (2,)}, "b": [(1,), {"b": (2, 1)}]}

# (structure, count, lr, b1, b2, eps, weight_decay, gradient scale, the mistake caught); a gradient scale
# "zero leaf" zeroes the second leaf's gradient (with zero moments at count 0).
CASES = [
    (FLAT, 0, 0.01, 0.9, 0.999, 1e-8, 0.01, 3.0,
     "the first step: without bias correction the direction is about 3.2 times too long; with t = count the "
     "correction 1 - b ** 0 is 0, a division by zero"),
    (NESTED, 0, 0.1, 0.9, 0.999, 1e-8, 0.0, 1e-6,
     "tiny gradients: eps inside the square root, sqrt(v_hat + eps) = 1e-4, swamps |g| = 1e-6"),
    (SINGLE_ARRAY, 1_000_000, 0.01, 0.9, 0.999, 1e-8, 0.01, 1.0,
     "the largest count: both corrections are 1; work that grows with the step (a loop of count "
     "multiplications) runs a million times; a tree that is one array"),
    (LIST_OF_DICTS, 4, 0.05, 0.9, 0.99, 1e-8, 0.05, 1.0,
     "the correction off by one, b ** count instead of b ** (count + 1): 1 - 0.9 ** 4 and 1 - 0.9 ** 5 "
     "differ by 15 %; a list of layers"),
    (DEEP, 9, 0.05, 0.9, 0.999, 1e-8, 0.0, 1.0,
     "weight_decay 0: AdamW is Adam here, the decay term must vanish; four levels of nesting"),
    (TWELVE_LEAVES, 20, 0.1, 0.9, 0.999, 1e-8, 0.5, 1.0,
     "strong decay: Adam + L2 (the decay through the moments) and a decay not multiplied by lr are far off"),
    (SINGLE_SCALAR, 0, 0.05, 0.0, 0.999, 1e-8, 0.1, 2.0,
     "b1 = 0: m' = g and the first correction is 1 - 0 ** t = 1; a tree that is one scalar"),
    (LIST_OF_LEAVES, 3, 0.05, 0.9, 0.5, 1e-8, 0.1, 1.0,
     "b2 = 0.5: b1 and b2 swapped between the moments shows at once; a list of arrays at the top"),
    (THREE_AXES, 2, 0.1, 0.9, 0.999, 0.1, 0.01, 0.3,
     "the largest eps: eps inside the root, or Kingma's 'efficient' form that folds the corrections into "
     "the step size and leaves eps unscaled"),
    (SAME_NAMES, 0, 0.05, 0.9, 0.999, 1e-8, 0.2, "zero leaf",
     "a leaf with zero gradient and zero moments: 0 / (0 + eps) = 0, and without eps 0 / 0 is NaN; only the "
     "decay moves it; the same key names at several levels"),
    (FLAT, 1, 0.02, 0.8, 0.95, 1e-6, 0.05, 1.0,
     "the second step, with b1 = 0.8 and b2 = 0.95 as some language models use"),
    (NESTED, 100, 0.0001, 0.9, 0.999, 1e-8, 0.01, 1.0, "the smallest learning rate"),
    (LIST_OF_DICTS, 0, 0.1, 0.9, 0.999, 1e-8, 0.1, 10.0, "the first step with gradients at the +-10 bounds"),
    (SINGLE_ARRAY, 50, 0.01, 0.99, 0.999, 1e-8, 0.01, 1.0,
     "the largest b1: the first correction 1 - 0.99 ** 51 is still far from 1"),
]


def _leaves(structure):
    if isinstance(structure, dict):
        return [leaf for v in structure.values() for leaf in _leaves(v)]
    if isinstance(structure, list):
        return [leaf for v in structure for leaf in _leaves(v)]
    return [structure]


def _fill(structure, values):
    """The structure with its leaves (shape tuples) replaced by the next arrays of ``values``; lists tagged."""
    if isinstance(structure, dict):
        return {k: _fill(v, values) for k, v in structure.items()}
    if isinstance(structure, list):
        return {"t": "list", "v": [_fill(v, values) for v in structure]}
    return values.pop(0).tolist()


def _sig(x: np.ndarray, digits: int = 4) -> np.ndarray:
    """``x`` to ``digits`` significant digits (kept as those decimals; the child reads them as float32)."""
    return np.array([float(f"{v:.{digits}g}") for v in np.ravel(x)]).reshape(np.shape(x))


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for structure, count, lr, b1, b2, eps, decay, scale, _mistake in CASES:
        shapes = _leaves(structure)
        params = [_sig(rng.uniform(-3, 3, size=s)) for s in shapes]
        if scale == "zero leaf":
            grads = [_sig(rng.uniform(-1, 1, size=s)) for s in shapes]
            grads[1] = np.zeros(shapes[1])
            scale = 1.0
        else:
            grads = [_sig(rng.uniform(-scale, scale, size=s)) for s in shapes]
        if count == 0:
            mu = [np.zeros(s) for s in shapes]
            nu = [np.zeros(s) for s in shapes]
        else:
            mu = [_sig(rng.uniform(-scale, scale, size=s)) for s in shapes]
            nu = [_sig(rng.uniform(0, scale * scale, size=s)) for s in shapes]
        cases.append({"params": _fill(structure, params), "grads": _fill(structure, grads),
                      "mu": _fill(structure, mu), "nu": _fill(structure, nu), "count": count, "lr": lr,
                      "b1": b1, "b2": b2, "eps": eps, "weight_decay": decay})
    return cases

"""Hidden cases: seeded, inside the constraints, aimed at the edges of clipping and its classic mistakes.

Each case names the mistake it is there to catch. The edges: all-zero gradients (0 / 0 must not leak a
NaN), the norm exactly at the threshold, the smallest and largest thresholds, gradients tiny enough that an
eps added to the norm matters, one leaf dominating the norm, a norm just under the threshold, single-leaf
and twelve-leaf trees nested in every way the constraints allow.

The first case of every tree structure is clipped with a margin (norm >= 1.1 * max_norm) and its clipped
values are not tiny. The grader probes the first case of each traced shape by replacing the norm with
other values: in a clipped case every returned leaf depends on the norm's value, while in an unclipped one
the result is `grads` itself, whatever the norm is, and the probe would have nothing to see (nor in
values below the probe's resolution, about 1e-6). Unclipped, zero, tiny and at-threshold cases therefore
come after an ordinary clipped case of the same structure.
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

# (structure, how the values are drawn, max_norm: a float or ("x norm", factor), the mistake caught)
CASES = [
    (FLAT, "uniform 3", ("x norm", 0.5), "per-leaf norms: each leaf clipped by its own norm, not one common factor"),
    (FLAT, "uniform 3", ("x norm", 2.0), "scaling by max_norm / norm unconditionally: small gradients get stretched"),
    (FLAT, "zeros", 1.0, "all-zero gradients: a 0/1 mask times the clipped branch, or an unconditional "
                         "max_norm / norm, turns 0 / 0 into NaN"),
    (NESTED, "uniform 3", ("x norm", 0.5), "two nested dicts: a comprehension over the top-level keys meets a dict"),
    (NESTED, "uniform 1e-6", 1e-6, "the smallest threshold with tiny gradients: an eps added to the norm "
                                   "(PyTorch's max_norm / (norm + 1e-6)) is not small here"),
    (NESTED, "norm 13", 13.0, "the norm exactly at the threshold (3, 4, 12: norm 13): either case must give "
                              "the gradients back, to rounding"),
    (SINGLE_ARRAY, "uniform 100", 1.0, "the largest gradients, shrunk about 200-fold: the squared norm used "
                                       "as the norm, or the square root forgotten"),
    (SINGLE_ARRAY, "uniform 100", 1e6, "the largest threshold: nothing is clipped"),
    (SINGLE_SCALAR, "uniform 10", ("x norm", 0.4), "a tree that is one scalar: code assuming a dict or an axis"),
    (LIST_OF_DICTS, "uniform 3", ("x norm", 0.3), "a list of layers: code that walks `.items()`"),
    (LIST_OF_DICTS, "one zero leaf", ("x norm", 0.5), "a zero leaf among others: per-leaf clipping divides it "
                                                      "0 / 0"),
    (DEEP, "uniform 3", ("x norm", 0.6), "four levels of nesting: recursion written for one level"),
    (TWELVE_LEAVES, "one dominant leaf", ("x norm", 0.25),
     "one leaf dominates the norm: per-leaf clipping leaves the small leaves untouched, the global factor "
     "shrinks them too"),
    (TWELVE_LEAVES, "uniform 30", ("x norm", 1.001), "just under the threshold: nothing changes; comparing "
                                                     "the squared norm with max_norm clips here"),
    (LIST_OF_LEAVES, "uniform 3", ("x norm", 0.5), "a list of arrays at the top, not a dict"),
    (THREE_AXES, "uniform 3", ("x norm", 0.9), "clipping each value to [-max_norm, max_norm] (clip by value) "
                                               "instead of scaling"),
    (SAME_NAMES, "uniform 3", ("x norm", 0.7), "the same key names at several levels"),
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
    return np.array([float(f"{v:.{digits}g}") for v in x.ravel()]).reshape(x.shape)


def _draw(rng, shapes, how):
    if how == "zeros":
        return [np.zeros(s) for s in shapes]
    if how == "norm 13":
        arrays = [np.zeros(s) for s in shapes]
        for a, v in zip(arrays, (3.0, 4.0, 12.0)):
            a.reshape(-1)[0] = v
        return arrays
    if how == "one zero leaf":
        arrays = [_sig(rng.uniform(-3, 3, size=s)) for s in shapes]
        arrays[1] = np.zeros(shapes[1])
        return arrays
    if how == "one dominant leaf":
        arrays = [_sig(rng.uniform(-0.01, 0.01, size=s)) for s in shapes]
        arrays[3] = _sig(rng.uniform(-100, 100, size=shapes[3]))
        return arrays
    scale = float(how.split()[1])
    return [_sig(rng.uniform(-scale, scale, size=s)) for s in shapes]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases, first_seen = [], set()
    for structure, how, threshold, _mistake in CASES:
        shapes = _leaves(structure)
        arrays = _draw(rng, shapes, how)
        norm = float(np.sqrt(sum(np.sum(a.astype(np.float32).astype(np.float64) ** 2) for a in arrays)))
        max_norm = float(f"{threshold[1] * norm:.4g}") if isinstance(threshold, tuple) else threshold
        key = repr(structure)
        if key not in first_seen:  # see the module docstring: the probed case of a structure is clipped
            assert norm >= 1.1 * max_norm, (structure, norm, max_norm)
            assert max(float(np.max(np.abs(a), initial=0)) for a in arrays) * max_norm / norm >= 1e-2
            first_seen.add(key)
        assert 1e-6 <= max_norm <= 1e6
        cases.append({"grads": _fill(structure, list(arrays)), "max_norm": max_norm})
    return cases

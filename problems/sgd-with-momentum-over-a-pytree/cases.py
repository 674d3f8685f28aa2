"""Hidden cases: seeded, inside the constraints, aimed at the ways one momentum step goes wrong.

Two families of mistakes. Code that assumes the tree's layout (a loop over `params.keys()`, a dict
comprehension, one level of recursion) breaks on trees that are not a flat dict: nested dicts, lists of
dicts, lists of arrays, a single array or scalar, deep nesting. And the update itself: Nesterov's step, the
old velocity instead of the new one, a (1 - momentum) damping, the learning rate folded into the velocity,
the momentum forgotten on the velocity or on the step. Each case says which it is there to catch.

A structure is written with a shape tuple at each leaf; lists are always tagged (`{"t": "list", ...}`), so
a list of same-shaped leaves stays a list of leaves and is not read as one stacked array.
"""
import numpy as np

FLAT = {"w": (3, 2), "b": (2,)}
NESTED = {"encoder": {"w": (2, 3), "b": (3,)}, "decoder": {"w": (3, 2), "b": (2,)}}
LIST_OF_DICTS = {"layers": [{"w": (2, 2), "b": (2,)}, {"w": (2, 1), "b": (1,)}], "scale": ()}
SINGLE_ARRAY = (2, 4)
SINGLE_SCALAR = ()
DEEP = {"a": [{"b": [(2,), (3,)]}, {"c": {"d": (1, 1, 2)}}], "e": ()}
LIST_OF_LEAVES = [(4,), (2, 2), ()]
TWELVE_LEAVES = {"blocks": [{"attn": {"q": (2, 2), "k": (2, 2), "v": (2, 2)}, "mlp": {"w": (2, 4), "b": (4,)}}
                            for _ in range(2)],
                 "ln": {"g": (2,), "b": (2,)}}
THREE_AXES = {"conv": (2, 2, 3), "bias": (3,)}
SAME_NAMES = {"w": {"w": (2,)}, "b": [(1,), {"b": (2, 1)}]}

# (structure, lr, momentum, velocity: "random" | "zeros", grads: "random" | "zeros", scale, the mistake caught)
CASES = [
    (FLAT, 0.1, 0.9, "random", "random", 1.0, "Nesterov, the old velocity, (1 - momentum) damping"),
    (NESTED, 0.05, 0.9, "random", "random", 1.0, "a dict comprehension over the top-level keys meets a dict"),
    (LIST_OF_DICTS, 0.01, 0.5, "random", "random", 1.0,
     "`.items()` on a list of layers; a scalar leaf; a step along the gradient instead of the velocity"),
    (SINGLE_ARRAY, 0.2, 0.8, "random", "random", 1.0, "code that assumes a dict at the top"),
    (SINGLE_SCALAR, 0.3, 0.7, "random", "random", 2.0, "code that assumes a dict or an axis (`p.shape[0]`)"),
    (DEEP, 0.1, 0.9, "random", "random", 1.0, "recursion written for one level of nesting"),
    (LIST_OF_LEAVES, 0.1, 0.6, "random", "random", 1.0, "a list of arrays at the top, not a dict"),
    (TWELVE_LEAVES, 0.1, 0.9, "zeros", "random", 1.0,
     "the first step (zero velocity): (1 - momentum) damping, the learning rate folded into the velocity"),
    (THREE_AXES, 0.1, 0.0, "random", "random", 1.0,
     "momentum 0 with a nonzero old velocity: the velocity must become the gradient (`v + g` forgets the decay)"),
    (SAME_NAMES, 1.0, 0.99, "random", "random", 5.0,
     "the same key names at several levels; the largest momentum and step, where Nesterov and the old "
     "velocity are far off"),
    (LIST_OF_DICTS, 0.5, 0.9, "random", "zeros", 1.0,
     "zero gradients with a nonzero velocity: the parameters still coast along mu * v"),
    (TWELVE_LEAVES, 1.0, 0.99, "random", "random", 10.0,
     "values at the +-10 bounds with the largest step: the new velocity reaches about 20"),
    (NESTED, 0.0001, 0.9, "random", "random", 10.0, "the smallest learning rate: the step is tiny next to the parameters"),
    (SINGLE_ARRAY, 0.1, 0.95, "zeros", "zeros", 1.0, "all-zero gradients and velocity: nothing moves"),
]


def _draw(rng, structure, fill: str, scale: float):
    if isinstance(structure, dict):
        return {k: _draw(rng, v, fill, scale) for k, v in structure.items()}
    if isinstance(structure, list):
        return {"t": "list", "v": [_draw(rng, v, fill, scale) for v in structure]}
    if fill == "zeros":
        values = np.zeros(structure, np.float32)
    else:
        values = np.round(rng.uniform(-scale, scale, size=structure), 3).astype(np.float32)
    return values.tolist()


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    cases = []
    for structure, lr, momentum, velocity, grads, scale, _mistake in CASES:
        cases.append({
            "params": _draw(rng, structure, "random", scale),
            "grads": _draw(rng, structure, grads, scale),
            "velocity": _draw(rng, structure, velocity, scale),
            "lr": lr,
            "momentum": momentum,
        })
    return cases

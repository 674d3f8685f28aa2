"""Hidden cases: seeded, inside the constraints, each there to catch a mistake (the comment says which).

N never equals D, so that an array with two axes of length D can only be a Hessian-sized intermediate.
Values stay inside [-3, 3]; with D up to 16 a logit z_n = x_n . w reaches +-144 there.
"""
import numpy as np

# (N, D, kind). Shapes repeat on purpose: each distinct shape is traced and compiled once per submission,
# and a `jax.hessian` program takes a second or more to compile.
SHAPES = [
    # N = 1 and the smallest D: a rank-one Hessian; catches transposed products and a missing mean.
    (1, 2, "uniform"),
    (1, 2, "tiny"),
    # one example at the logit bound, z near +144 with y = 0: `log(1 + exp(z))` overflows (exp(z) = inf,
    # the gradient inf / inf = NaN), and `log(1 - sigmoid(z))` is log(0).
    (1, 16, "saturated+"),
    # one example at z near -144 with y = 1: sigmoid(z) underflows to 0 and `log(sigmoid(z))` is -inf.
    (1, 16, "saturated-"),
    (1, 16, "uniform"),
    # every logit beyond +-89 (exp overflows) with both labels: the naive softplus gives NaN gradients.
    (15, 16, "saturated"),
    # half the examples saturated, half ordinary: the product must still get the ordinary ones' curvature
    # right (catches code that zeroes or clips whole batches), and naive softplus turns it all into NaN.
    (15, 16, "mixed"),
    (15, 16, "scaled3"),
    # logits between about 20 and 40: softplus is safe but sigmoid(z) rounds to 0 or 1, so the probability
    # form of the loss (`log(p)`, `log1p(-p)`) gives NaN or inf.
    (4, 10, "large"),
    (4, 10, "uniform"),
    # D = 2 with the largest N, and N > D: ordinary curvature; catches swapped primal and tangent (H(v) w
    # instead of H(w) v) and gradient-times-v shortcuts.
    (16, 2, "uniform"),
    (16, 2, "scaled3"),
    (8, 4, "uniform"),
    (8, 4, "scaled3"),
    # tiny inputs: every sigmoid near 1/2, the Hessian near X^T X / (4N).
    (12, 7, "tiny"),
    (12, 7, "uniform"),
    (12, 7, "scaled3"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32)

    def at_bound(n, d, w, sign=None):
        """Rows aligned with w (every product |x_i w_i| >= 6.25), so |z| is near 9 D; `sign` fixes z's sign."""
        signs = rng.choice([-1.0, 1.0], size=(n, 1)) if sign is None else np.full((n, 1), sign)
        return np.round(signs * np.sign(w)[None, :] * rng.uniform(2.5, 3.0, size=(n, d)), 3).astype(np.float32)

    cases = []
    for n, d, kind in SHAPES:
        if kind in ("saturated", "saturated+", "saturated-", "mixed"):
            w = np.round(rng.choice([-1.0, 1.0], size=d) * rng.uniform(2.5, 3.0, size=d), 3).astype(np.float32)
            sign = {"saturated+": 1.0, "saturated-": -1.0}.get(kind)
            x = at_bound(n, d, w, sign)
            if kind == "mixed":
                x[::2] = draw(len(x[::2]), d, scale=1.0)
        elif kind == "large":
            w = draw(d, scale=3.0)
            w = np.where(np.abs(w) < 1.0, np.sign(w) + (w == 0), w).astype(np.float32)
            x = np.round(np.sign(w)[None, :] * rng.choice([-1.0, 1.0], size=(n, 1))
                         * rng.uniform(1.0, 2.0, size=(n, d)), 3).astype(np.float32)
        else:
            scale = {"uniform": 1.0, "scaled3": 3.0, "tiny": 0.01}[kind]
            w = draw(d, scale=3.0 if kind != "tiny" else 1.0)
            x = draw(n, d, scale=scale)
        y = rng.integers(0, 2, size=n).astype(np.float32)
        if kind == "saturated+":
            y[:] = 0.0
        if kind == "saturated-":
            y[:] = 1.0
        cases.append({"w": w.tolist(), "x": x.tolist(), "y": y.tolist(), "v": draw(d, scale=3.0).tolist()})
    return cases

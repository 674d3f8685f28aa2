"""Hidden cases: seeded, inside the constraints, each there to catch a named mistake.

float16's largest finite value is 65504. Each case's `loss_scale` is chosen from the gradients the float16
backward pass will see (estimated here in float64): in a normal case every scaled intermediate stays at
least 16 times below 65504, so every correct ordering of the float16 arithmetic applies the step; in an
overflow case the scaled values pass 65504 by a wide margin (or exactly where the case says), so every
correct ordering skips it. `lr` is set so that the largest update is about 0.1% to 0.4% of the weights:
small enough that float16's own rounding differences move the float32 result by less than 1e-5, large
enough that rounding the master weights to float16 moves it by more than 1e-4.

The first case of each shape is a normal one: that is the case on which the grader probes the program.
"""
import numpy as np

F16_MAX = 65504.0


def _forward(p, x):
    h = np.tanh(x @ p["w1"] + p["b1"])
    return h, h @ p["w2"] + p["b2"]


def _scaled_parts(p, x, y):
    """Every value the float16 backward pass computes, unscaled (float64 estimates), by name."""
    h, o = _forward(p, x)
    d_o = 2.0 * (o - y) / o.size
    d_h = d_o @ p["w2"].T
    d_pre = d_h * (1.0 - h ** 2)
    return {"d_o": d_o, "w2": h.T @ d_o, "b2": d_o.sum(0), "d_h": d_h, "d_pre": d_pre, "w1": x.T @ d_pre,
            "b1": d_pre.sum(0)}


def _largest(parts, names=None):
    return max(float(np.abs(v).max()) for k, v in parts.items() if names is None or k in names)


def _fit_scale(p, x, y, margin=16.0):
    """The largest power of two (at most 2**24) keeping every scaled value `margin` times below 65504."""
    e = int(np.floor(np.log2(F16_MAX / margin / _largest(_scaled_parts(p, x, y)))))
    return float(2.0 ** max(0, min(e, 24)))


def _overflow_scale(p, x, y):
    """A power of two that pushes the largest scaled value at least 64 times past 65504."""
    e = int(np.ceil(np.log2(F16_MAX * 64 / _largest(_scaled_parts(p, x, y)))))
    assert 0 <= e <= 24, e
    return float(2.0 ** e)


def _lr(p, x, y, rng, low=1e-3, high=4e-3):
    """A learning rate (one significant digit) making the largest update `low`..`high`."""
    g = _largest(_scaled_parts(p, x, y), ("w1", "b1", "w2", "b2"))
    return float(f"{rng.uniform(low, high) / max(g, 1e-6):.1g}")


def _draw(rng, b, d, h, k, w_scale=1.0):
    r = lambda *s, scale=1.0, dec=4: np.round(rng.uniform(-scale, scale, size=s), dec)  # noqa: E731
    p = {"w1": r(d, h, scale=w_scale), "b1": r(h, scale=0.5), "w2": r(h, k), "b2": r(k, scale=0.5)}
    return p, r(b, d, scale=2.0, dec=3), r(b, k, scale=2.0, dec=3)


def _normal(rng, b, d, h, k, w_scale=1.0, low=1e-3, high=4e-3):
    p, x, y = _draw(rng, b, d, h, k, w_scale)
    return p, x, y, _fit_scale(p, x, y), _lr(p, x, y, rng, low, high)


def _overflow(rng, b, d, h, k):
    p, x, y = _draw(rng, b, d, h, k)
    y = np.clip(y + np.sign(y) * 2.0, -4, 4)  # far targets: large gradients
    return p, x, y, _overflow_scale(p, x, y), _lr(p, x, y, rng)


def _w2_only(rng, b, d, h, k):
    """Saturated hidden units (all +1) and one output far above its target in every row: the scaled d_o
    stays below 65504, but w2's and b2's gradients sum it over the rows past 65504, while w1's and b1's are
    damped by tanh's flat tail. Only w2 and b2 overflow."""
    x = np.round(rng.uniform(1.2, 2.0, size=(b, d)), 3)
    p = {"w1": np.round(rng.uniform(1.5, 2.0, size=(d, h)), 4), "b1": np.round(rng.uniform(0, 0.5, size=h), 4),
         "w2": np.round(rng.uniform(0.8, 1.0, size=(h, k)), 4), "b2": np.full(k, 0.5)}
    _, o = _forward(p, x)
    y = np.round(np.clip(o - 7.0, -4, 4), 3)
    parts = _scaled_parts(p, x, y)
    scale = float(2.0 ** np.floor(np.log2(F16_MAX / 2 / _largest(parts, ("d_o", "d_h")))))
    assert _largest(parts, ("w2", "b2")) * scale > 2 * F16_MAX and _largest(parts, ("w1", "b1")) * scale < F16_MAX / 4
    return p, x, y, scale, _lr(p, x, y, rng)


def _w1_only(rng, b, d, h, k):
    """Hidden units near zero and every output pulling the same way through w2: the scaled d_o stays below
    65504, but d_h sums the K outputs past it, so w1's and b1's gradients overflow while w2's (times the
    small hidden units) and b2's do not."""
    s = np.where(rng.uniform(size=k) < 0.5, -1.0, 1.0)
    x = np.round(rng.uniform(0.5, 1.0, size=(b, d)), 3)
    p = {"w1": np.round(rng.uniform(-0.05, 0.05, size=(d, h)), 4), "b1": np.zeros(h),
         "w2": np.round(np.outer(np.ones(h), s) * rng.uniform(1.8, 2.0, size=(h, k)), 4), "b2": 0.5 * s}
    y = np.round(-3.5 * s, 3) + np.zeros((b, k))
    parts = _scaled_parts(p, x, y)
    scale = float(2.0 ** np.floor(np.log2(F16_MAX / 3 / _largest(parts, ("d_o", "w2", "b2")))))
    assert _largest(parts, ("d_h",)) * scale > 1.5 * F16_MAX and _largest(parts, ("w2", "b2")) * scale < F16_MAX / 3
    return p, x, y, scale, _lr(p, x, y, rng)


def _nan_only(rng, b, d, h, k):
    """Two identical rows pulled in opposite directions: the scaled d_o is +inf in one row and -inf in the
    other, so every gradient sums +inf and -inf: all NaN, no inf anywhere."""
    assert b == 2
    row = np.round(rng.uniform(0.5, 1.5, size=d), 3)
    x = np.stack([row, row])
    p = {"w1": np.round(rng.uniform(-0.3, 0.3, size=(d, h)), 4), "b1": np.round(rng.uniform(-0.1, 0.1, size=h), 4),
         "w2": np.round(rng.uniform(0.2, 0.4, size=(h, k)), 4), "b2": np.round(rng.uniform(-0.2, 0.2, size=k), 4)}
    _, o = _forward(p, x)
    y = np.round(np.stack([o[0] - 3.5, o[0] + 3.5]), 3)
    return p, x, y, 2.0 ** 20, _lr(p, x, y, rng)


def _large_scale(rng, b, d, h, k):
    """Rows in pairs with the same input and opposite errors of about 1: each row's gradient is large, their
    sums nearly cancel, so a scale of 2**17 or more fits (above float16's 65504) and the scaled loss passes
    65504 too."""
    assert b % 2 == 0
    p, x, _ = _draw(rng, b, d, h, k)
    p["w2"] = np.round(p["w2"] * 0.25, 4)
    x[1::2] = x[0::2]
    _, o = _forward(p, x)
    r = np.where(np.arange(b)[:, None] % 2 == 0, 1.0, -rng.uniform(0.9, 1.0, size=(b, k)))
    y = np.round(o + r, 3)
    scale = _fit_scale(p, x, y, margin=4.0)
    assert scale >= 2.0 ** 17 and np.mean(r ** 2) * scale > 1.5 * F16_MAX, scale
    return p, x, y, scale, _lr(p, x, y, rng, 5e-4, 1e-3)


def _near_one_weights(rng, b, d, h, k):
    """Weights between 1 and 2 in size, where float16's spacing is 9.8e-4, and updates of about 1e-4."""
    p, x, y = _draw(rng, b, d, h, k)
    p = {n: np.round(np.sign(v + 1e-9) * rng.uniform(1.0, 2.0, size=v.shape), 4) for n, v in p.items()}
    return p, x, y, _fit_scale(p, x, y), _lr(p, x, y, rng, 1e-4, 2e-4)


def _near_targets(rng, b, d, h, k):
    """Every output a few hundredths from its target, computed exactly in float16 by any correct program:
    `w2` is zero, so the output is `b2` rounded to float16 (+ 0), however the products and sums are ordered
    or accumulated. `b2` sits between 0.35 and 0.45 of float16's spacing (2**-10 between 1 and 2) off the
    float16 grid, so a float32 forward pass puts each output about 4e-4 away; with errors of 0.03 to 0.06
    that moves the loss by 1.5% to 3%, past its 0.4% tolerance. Targets are far from the float16 grid too,
    so errors taken in float16 (targets rounded to float16) miss by as much."""
    p, x, _ = _draw(rng, b, d, h, k)
    p["w2"] = np.zeros((h, k))
    grid = 2.0 ** -10
    steps = rng.integers(1100, 1950, size=k) + rng.choice([-1.0, 1.0], size=k) * rng.uniform(0.35, 0.45, size=k)
    p["b2"] = steps * grid * rng.choice([-1.0, 1.0], size=k)
    b2 = np.asarray(p["b2"], np.float32).astype(np.float64)
    o16 = np.asarray(np.asarray(p["b2"], np.float32).astype(np.float16), np.float64)
    side = np.sign(b2 - o16)  # each output's error takes the side float32's output is off to, so both add up
    y = np.zeros((b, k))
    for n in range(b):
        for j in range(k):
            for _ in range(1000):
                y[n, j] = np.round(o16[j] - side[j] * rng.uniform(0.03, 0.06), 3)
                rounded = float(np.float16(y[n, j]))  # a target rounded to float16 moves away from the output too
                if -side[j] * (rounded - y[n, j]) > 0.2 * grid:
                    break
            else:
                raise RuntimeError("no target off the float16 grid")
    loss16 = np.mean((o16 - y) ** 2)
    loss32 = np.mean((np.asarray(p["b2"], np.float32).astype(np.float64) - y) ** 2)
    loss_y16 = np.mean((o16 - y.astype(np.float16).astype(np.float64)) ** 2)
    assert min(abs(loss32 / loss16 - 1), abs(loss_y16 / loss16 - 1)) > 0.01, (loss16, loss32, loss_y16)
    return p, x, y, _fit_scale(p, x, y), _lr(p, x, y, rng)


def _unscaled(rng, b, d, h, k):
    p, x, y, _, lr = _normal(rng, b, d, h, k)
    return p, x, y, 1.0, lr


def _saturated(rng, b, d, h, k):
    return _normal(rng, b, d, h, k, w_scale=2.0)


# (shape (B, D, H, K), how the case is made, the mistake it is there to catch)
CASES = [
    ((2, 2, 2, 1), _nan_only, "every gradient NaN and none inf: catches a test with jnp.isinf alone (NaN is not inf)"),
    ((3, 2, 3, 2), _unscaled, "loss_scale 1: catches a scale hard-coded instead of read from the argument"),
    ((8, 4, 4, 4), _large_scale, "loss_scale 2**17 or more, the scaled loss past 65504: catches the scale or the "
     "scaled loss held in float16, where both become inf"),
    ((1, 1, 1, 1), _normal, "the smallest network: shape handling"),
    ((1, 1, 1, 1), _overflow, "overflow in the smallest network: catches a float32 forward pass, which never overflows"),
    ((8, 4, 4, 4), _normal, "the largest network"),
    ((8, 4, 4, 4), _overflow, "overflow everywhere: catches a scale applied to the gradients after jax.grad (the "
     "float16 backward pass then never sees it), and a missing scale"),
    ((8, 4, 4, 4), _near_one_weights, "updates of 1e-4 on weights near 1: catches float16 master weights, which "
     "round the weights and lose the update"),
    ((8, 2, 3, 1), _normal, "a batch of eight, one output"),
    ((8, 2, 3, 1), _w2_only, "only w2 and b2 overflow: catches a finiteness test on some leaves (w1 first) only"),
    ((1, 2, 3, 4), _normal, "one example, four outputs"),
    ((1, 2, 3, 4), _w1_only, "only w1 and b1 overflow: catches a finiteness test on the last leaves only, and a "
     "test on the loss instead of the gradients"),
    ((4, 1, 4, 2), _saturated, "saturated tanh units: gradients through tanh's tails"),
    ((4, 1, 4, 2), _normal, "a second draw of the same shape"),
    ((4, 1, 4, 2), _near_targets, "killer 'outputs near their targets': every output within 0.06 of its target, "
     "where float16's rounding of the output is a few percent of the loss: catches a loss computed from a "
     "float32 forward pass (or errors taken in float16), which every other case's far targets hide"),
]


def _as_case(p, x, y, scale, lr):
    f32 = lambda a: np.asarray(a, np.float32).tolist()  # noqa: E731
    return {"params": {n: f32(v) for n, v in p.items()}, "x": f32(x), "y": f32(y), "loss_scale": scale, "lr": lr}


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [_as_case(*make(rng, *shape)) for shape, make, _why in CASES]

"""Hidden cases: seeded, inside the constraints, aimed at the classic mistakes of a data-parallel step.

Six shapes (B, D, H, K) in all, the examples' three among them (each distinct shape is one more compile of
an 8-device program per Submit). B is a multiple of 8, so every device holds B/8 rows; B = 8 gives each
device one row. Values are rounded to 3 decimals.
"""
import numpy as np

SHAPES = [(8, 2, 8, 1), (16, 3, 8, 2), (24, 1, 16, 3), (64, 8, 16, 4), (32, 5, 8, 2), (8, 1, 8, 1)]


def _params(rng, d, h, k, scale=0.6):
    return {"w1": np.round(rng.uniform(-scale, scale, size=(d, h)), 3),
            "b1": np.round(rng.uniform(-0.3, 0.3, size=h), 3),
            "w2": np.round(rng.uniform(-scale, scale, size=(h, k)), 3),
            "b2": np.round(rng.uniform(-0.3, 0.3, size=k), 3)}


def _case(params, x, y, lr):
    return {"params": {k: v.astype(np.float64).tolist() for k, v in params.items()},
            "x": np.asarray(x, np.float64).tolist(), "y": np.asarray(y, np.float64).tolist(), "lr": float(lr)}


def _forward(params, x):
    return np.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def _random(rng, shape, lr, x_scale=1.0):
    b, d, h, k = shape
    params = _params(rng, d, h, k)
    x = np.round(rng.uniform(-x_scale, x_scale, size=(b, d)), 3)
    y = np.round(rng.uniform(-1.0, 1.0, size=(b, k)), 3)
    return _case(params, x, y, lr)


def _one_shard_wrong(rng, shape, shard, lr):
    """Targets equal to the prediction (to 3 decimals) everywhere but in device ``shard``'s rows: a step that
    keeps one device's own gradient, or one device's loss, instead of the average over all 8, is far off."""
    b, d, h, k = shape
    params = _params(rng, d, h, k)
    x = np.round(rng.uniform(-1.0, 1.0, size=(b, d)), 3)
    y = np.round(_forward(params, x), 3)
    rows = slice(shard * b // 8, (shard + 1) * b // 8)
    y[rows] = np.round(y[rows] + rng.uniform(1.0, 2.0, size=y[rows].shape), 3)
    return _case(params, x, y, lr)


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    s = SHAPES
    return [
        # 1-6. One of each shape, lr 0.1 to 0.5: the ordinary step (catches summing the devices' gradients
        #      instead of averaging them, 8 times too large; the wrong sign; lr forgotten).
        _random(rng, s[0], 0.5),
        _random(rng, s[1], 0.1),
        _random(rng, s[2], 0.25),
        _random(rng, s[3], 0.3),
        _random(rng, s[4], 0.2),
        _random(rng, s[5], 0.5),
        # 7-8. Only the last device's rows are off (catches returning device 0's own gradient and loss, as a
        #      shard_map with out_specs=P() and no pmean does with check_vma=False).
        _one_shard_wrong(rng, s[3], 7, 0.5),
        _one_shard_wrong(rng, s[0], 7, 1.0),
        # 9. Only the first device's rows are off (catches keeping the last device's).
        _one_shard_wrong(rng, s[4], 0, 0.5),
        # 10. K = 4 outputs (catches a mean over the batch only, which is K times the loss asked for).
        _random(rng, s[3], 0.1, x_scale=2.0),
        # 11. lr = 1 and large inputs that saturate tanh (catches the update applied with the loss after it,
        #     or the loss returned after the step).
        _random(rng, s[1], 1.0, x_scale=3.0),
        # 12. A small lr (catches an update that ignores lr or adds a constant step).
        _random(rng, s[2], 0.01),
        # 13. Zero targets with one row per device.
        _case(_params(rng, 1, 8, 1), np.round(rng.uniform(-1.0, 1.0, size=(8, 1)), 3), np.zeros((8, 1)), 0.5),
        # 14. Every device's rows the same (a step that keeps one device's gradient is right here: the
        #     average of equal gradients; it still must be right on the cases above).
        _case(_params(rng, 3, 8, 2), np.tile(np.round(rng.uniform(-1, 1, size=(2, 3)), 3), (8, 1)),
              np.tile(np.round(rng.uniform(-1, 1, size=(2, 2)), 3), (8, 1)), 0.3),
    ]

"""Hidden cases: seeded, inside the constraints, aimed at the classic mistakes of a Megatron MLP block.

Five shapes (B, D, H) in all, the examples' three among them (each distinct shape is one more compile of
an 8-device program per Submit). H is a multiple of 8, so each device holds H/8 hidden columns; H = 8 gives
each device one. Values are rounded to 3 decimals.
"""
import numpy as np

SHAPES = [(2, 3, 8), (4, 2, 16), (1, 5, 8), (8, 8, 32), (3, 1, 16)]


def _case(rng, shape, scale=0.7, b2_scale=0.5):
    b, d, h = shape
    return {"x": np.round(rng.uniform(-1.5, 1.5, size=(b, d)), 3).tolist(),
            "w1": np.round(rng.uniform(-scale, scale, size=(d, h)), 3).tolist(),
            "b1": np.round(rng.uniform(-0.3, 0.3, size=h), 3).tolist(),
            "w2": np.round(rng.uniform(-scale, scale, size=(h, d)), 3).tolist(),
            "b2": np.round(rng.uniform(-b2_scale, b2_scale, size=d), 3).tolist()}


def _one_device_columns(rng, shape, device):
    """Hidden columns that are zero except on one device's block: a block that keeps one device's share
    (no psum) is right only for that device, and a psum over the wrong blocks shows."""
    case = _case(rng, shape)
    h = shape[2]
    w2 = np.zeros((h, shape[1]))
    rows = slice(device * h // 8, (device + 1) * h // 8)
    w2[rows] = np.round(rng.uniform(0.5, 1.0, size=w2[rows].shape), 3)
    case["w2"] = w2.tolist()
    return case


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    s = SHAPES
    return [
        # 1-5. One of each shape (catches a missing psum, which leaves each device its own share, and the
        #      bias b2 added on every device before the psum, 8 times over).
        _case(rng, s[0]), _case(rng, s[1]), _case(rng, s[2]), _case(rng, s[3]), _case(rng, s[4]),
        # 6-7. Only the last device's hidden columns reach the output (catches returning device 0's share).
        _one_device_columns(rng, s[3], 7), _one_device_columns(rng, s[1], 7),
        # 8. Only the first device's (catches returning the last device's share).
        _one_device_columns(rng, s[0], 0),
        # 9. A large b2 beside small weights (catches b2 dropped, or added 8 times inside the psum).
        _case(rng, s[2], scale=0.1, b2_scale=3.0),
        # 10. Large inputs that saturate tanh (catches the activation applied after the psum: tanh of a sum is
        #     not the sum of tanhs).
        {**_case(rng, s[3]), "x": np.round(rng.uniform(-3.0, 3.0, size=(8, 8)), 3).tolist()},
        # 11. b1 large and w1 small (catches b1 added after the first matmul's columns are summed, or dropped).
        {**_case(rng, s[4], scale=0.2), "b1": np.round(rng.uniform(-2.0, 2.0, size=16), 3).tolist()},
        # 12. A single row, D = 5.
        _case(rng, s[2]),
        # 13. Zero input rows: the output is tanh(b1) @ w2 + b2.
        {**_case(rng, s[0]), "x": np.zeros((2, 3)).tolist()},
        # 14. D = 1.
        _case(rng, s[4]),
    ]

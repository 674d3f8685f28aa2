"""Hidden cases: seeded, inside the constraints, each group there to catch a named mistake.

The visible examples all have D = 2, and two of them B = 1 or H = D, so a loss normalised by a wrong
count that happens to equal B * D there, or a weight used transposed, can pass them; the cases below
vary B, D and H across their whole ranges so that such mistakes fail. Shapes repeat (seven distinct ones)
because every distinct shape is traced and compiled once per Submit.

No case saturates every hidden unit: there the hidden layer's gradients are exactly zero, and neither a
learner nor the grader could tell whether the tanh's derivative is used at all.
"""
import numpy as np

# (B, D, H, scale of w1 and b1, why)
SHAPES = [
    # The corners of the constraints (B 1..4, D 2..4, H 2..5): shape handling and broadcasting of b1, b2.
    (1, 2, 2, 1.0, "smallest block"),
    (4, 4, 5, 1.0, "largest block"),
    # D != 2: `0.5 * sum(err ** 2) / B` (half the sum of squares per example, the textbook convention)
    # equals the mean over B * D entries only when D = 2, as in every visible example.
    (1, 3, 5, 1.0, "D = 3, one example: catches a half-sum-of-squares loss"),
    (3, 4, 4, 1.0, "D = 4: catches a half-sum-of-squares loss; H = D: a transposed weight runs and is wrong"),
    # B > 1 and B != D: a mean over the features only (dividing by D, or by B when B = D) is wrong here.
    (4, 2, 5, 1.0, "B = 4, D = 2: catches dividing by D or by B alone"),
    (2, 3, 3, 1.0, "H = D = 3: a transposed w1 or w2 runs without a shape error and is wrong"),
    # Large first-layer weights saturate most of the tanh units: their derivative is tiny, so the gradients
    # of w1 and b1 are small but must still be right (dropping the tanh's derivative gives large ones).
    (4, 4, 5, 8.0, "saturated tanh"),
    (2, 3, 3, 6.0, "saturated tanh, square layers"),
    # One pre-activation far beyond 45: a tanh written as (exp(2z) - 1) / (exp(2z) + 1) overflows to NaN.
    (1, 3, 5, "overflow", "one pre-activation past float32 exp's range"),
    (4, 2, 5, "overflow", "one pre-activation past float32 exp's range, several examples"),
    # Small weights keep the tanh nearly linear and the residual `x +` and the biases dominate the output.
    (1, 2, 2, 0.1, "nearly linear block"),
    (3, 4, 4, 2.0, "moderately large weights"),
    (4, 2, 5, 4.0, "large weights, many examples"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32)

    cases = []
    for b, d, h, scale, _why in SHAPES:
        x = draw(b, d, scale=2.0)
        if scale == "overflow":
            w1, b1 = draw(d, h), draw(h, scale=0.5)
            # unit 0 of example 0 gets a pre-activation of at least 60; the other units stay moderate
            w1[:, 0] = np.where(x[0] >= 0, 1.0, -1.0) * (60.0 / max(float(np.abs(x[0]).sum()), 0.1))
            b1[0] = 1.0
        else:
            w1, b1 = draw(d, h, scale=scale), draw(h, scale=0.5 * scale)
        cases.append({
            "params": {"w1": np.round(w1, 3).astype(np.float32).tolist(), "b1": b1.tolist(),
                       "w2": draw(h, d).tolist(), "b2": draw(d, scale=0.5).tolist()},
            "x": x.tolist(),
            "y": draw(b, d, scale=2.0).tolist(),
        })
    return cases

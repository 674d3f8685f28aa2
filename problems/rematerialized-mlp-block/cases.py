"""Hidden cases: seeded, inside the constraints, each group there to catch a named mistake.

The visible examples all have D = 2, and two of them B = 1 or H = D, so a loss normalised by a wrong
count that happens to equal B * D there, or a weight used transposed, can pass them; the cases below
vary B, D and H across their whole ranges so that such mistakes fail.
"""
import numpy as np

# (B, D, H, scale of w1 and b1, why)
SHAPES = [
    # The corners of the constraints (B 1..4, D 2..4, H 2..5): shape handling and broadcasting of b1, b2.
    (1, 2, 2, 1.0, "smallest block"),
    (4, 4, 5, 1.0, "largest block"),
    (1, 4, 5, 1.0, "one example, widest layers"),
    (4, 2, 2, 1.0, "most examples, narrowest layers"),
    # D != 2: `0.5 * sum(err ** 2) / B` (half the sum of squares per example, the textbook convention)
    # equals the mean over B * D entries only when D = 2, as in every visible example.
    (2, 3, 4, 1.0, "D = 3 catches a half-sum-of-squares loss"),
    (3, 4, 2, 1.0, "D = 4 catches a half-sum-of-squares loss"),
    # B > 1 and B != D: a mean over the features only (dividing by D, or by B when B = D) is wrong here.
    (3, 2, 5, 1.0, "B = 3, D = 2 catches dividing by D or by B only"),
    (4, 3, 3, 1.0, "B = 4, D = 3, H = D: a transposed w1 or w2 runs without a shape error and is wrong"),
    (2, 4, 4, 1.0, "H = D = 4: a transposed weight is wrong, not a shape error"),
    # Large first-layer weights saturate the tanh: its derivative is tiny, so the gradients of w1 and b1
    # are small but must still be right (dropping the tanh's derivative, or the tanh, gives large ones).
    (2, 2, 3, 6.0, "saturated tanh"),
    (4, 3, 5, 8.0, "saturated tanh, larger block"),
    # Pre-activations far beyond 45: a tanh written as (exp(2z) - 1) / (exp(2z) + 1) overflows to NaN.
    (1, 3, 2, 40.0, "pre-activations past float32 exp's range"),
    # Small weights keep the tanh nearly linear: catches nothing by itself, but checks the residual `x +`
    # and the biases dominate the output.
    (3, 4, 3, 0.1, "nearly linear block"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(*shape, scale=1.0):
        return np.round(rng.uniform(-scale, scale, size=shape), 3).astype(np.float32).tolist()

    cases = []
    for b, d, h, scale, _why in SHAPES:
        cases.append({
            "params": {"w1": draw(d, h, scale=scale), "b1": draw(h, scale=0.5 * scale),
                       "w2": draw(h, d), "b2": draw(d, scale=0.5)},
            "x": draw(b, d, scale=2.0),
            "y": draw(b, d, scale=2.0),
        })
    return cases

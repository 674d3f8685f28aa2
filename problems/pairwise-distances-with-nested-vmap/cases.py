"""Hidden cases: seeded, inside the constraints (N, M, D in 1..8, values in [-1000, 1000]), aimed at the
edges of the shapes and at the classic mistakes, each named in the comment above it (the naive versions are
in `submissions/wrong_answer/`)."""
import numpy as np


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def draw(n, d, scale):
        return np.round(rng.uniform(-scale, scale, size=(n, d)), 3)

    def case(x, y):
        return {"x": np.asarray(x, np.float32).tolist(), "y": np.asarray(y, np.float32).tolist()}

    cases = []
    # N == M with unrelated points: a transposed result (in_axes swapped) has the right shape, wrong values.
    cases.append(case(draw(4, 3, 2.0), draw(4, 3, 2.0)))
    # Equal rows far from the origin: sqrt(d^2 + eps) reports sqrt(eps) where the distance is exactly 0 (the
    # expansion |a|^2 + |b|^2 - 2 a.b is exact here only when a.a and a.b happen to round alike).
    far = draw(5, 4, 1000.0)
    cases.append(case(far, np.concatenate([far[[3, 0, 4]], draw(2, 4, 1000.0)])))
    # Nearby points with large coordinates (distances about 0.1 at |coordinates| up to 600): the expansion
    # |a|^2 + |b|^2 - 2 a.b cancels to rounding noise, losing every digit of the distance (or nan).
    base = draw(3, 3, 600.0)
    cases.append(case(base, base[[2, 1, 0, 1]] + np.round(rng.uniform(-0.08, 0.08, size=(4, 3)), 3)))
    # One row of x (N = 1): a result squeezed to (M,), or a vmap that only maps y.
    cases.append(case(draw(1, 3, 5.0), draw(5, 3, 5.0)))
    # One row of y (M = 1).
    cases.append(case(draw(6, 2, 5.0), draw(1, 2, 5.0)))
    # D = 1: the distance is |x - y|; a missing square root gives its square.
    cases.append(case(draw(4, 1, 10.0), draw(3, 1, 10.0)))
    # The smallest shapes, N = M = D = 1.
    cases.append(case([[3.5]], [[-1.25]]))
    # The largest shapes, N = M = D = 8.
    cases.append(case(draw(8, 8, 3.0), draw(8, 8, 3.0)))
    # N != M: a transposed result has shape (M, N).
    cases.append(case(draw(3, 2, 4.0), draw(7, 2, 4.0)))
    # Exact zeros everywhere but one row: distances of exactly 0 (sqrt(d^2 + eps) reports sqrt(eps)).
    zeros = np.zeros((3, 3))
    cases.append(case(zeros[:2], np.concatenate([zeros, [[0.0, 0.0, 2.5]]])))
    # Opposite corners of the allowed box: the largest distances, 2000 sqrt(D).
    corners = np.array([[1000.0] * 5, [-1000.0] * 5, [1000.0, -1000.0, 1000.0, -1000.0, 1000.0]])
    cases.append(case(corners, -corners[[0, 2]]))
    # x equal to y: the whole diagonal is 0; the vmapped expansion computes a.a and a.b with different batched
    # products, which round differently, so it reports noise there (or nan).
    same = draw(5, 6, 100.0)
    cases.append(case(same, same))
    # A wide y against a narrow x with D = 5.
    cases.append(case(draw(2, 5, 1.0), draw(8, 5, 1.0)))
    # Distances below 1 (squares are smaller than the distances), with D = 7.
    small = draw(4, 7, 0.2)
    cases.append(case(small, draw(6, 7, 0.2)))
    # Distinct points closer than 1e-3 (distances from about 1e-4 to 9e-4, far above the tolerance of 1e-5):
    # an answer that rounds tiny distances to 0 (`where(d < 1e-3, 0, d)`, a snap meant for equal points)
    # reports 0 for points that are not equal. In the shape of the first case, so no new compile.
    near = draw(4, 3, 2.0)
    offsets = np.array([[1e-4, 0.0, 0.0], [0.0, -3e-4, 2e-4], [5e-4, 5e-4, -5e-4], [0.0, 0.0, 9e-4]])
    cases.append(case(near, near[[1, 0, 3, 2]] + offsets[[1, 0, 3, 2]]))
    return cases

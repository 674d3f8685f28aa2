"""Hidden cases: seeded, inside the constraints, each there to catch a named mistake.

Power iteration converges at the rate (s2 / s1) ** 2 per step, where s1 > s2 are W's two largest singular
values. The mistakes this problem is about (differentiating through the loop, one step more or less, an
exact sigma, sigma from the wrong vectors) change the outputs only while the estimate has not converged, so
most cases are built to converge slowly: W = P diag(s) Q^T with chosen singular values, and a start u that
is far from the top singular vector. The extreme cases sit at the constraints' edges (W's entries near 2 or
tiny, 30 iterations), where a power iteration that normalises only at the end overflows or underflows.
"""
import numpy as np


def _orthogonal(rng, k):
    q, r = np.linalg.qr(rng.normal(size=(k, k)))
    return q * np.sign(np.diag(r))


def _with_singular_values(rng, m, n, s):
    """A matrix with singular values s (largest first), rounded to 3 decimals, entries inside [-2, 2]."""
    p, q = _orthogonal(rng, m)[:, :len(s)], _orthogonal(rng, n)[:, :len(s)]
    w = np.round((p * s) @ q.T, 3)
    assert np.abs(w).max() <= 2.0, np.abs(w).max()
    return w


def _vec(rng, *shape, scale=1.0, dec=3):
    return np.round(rng.uniform(-scale, scale, size=shape), dec)


def _random(rng, m, n, t):
    return _vec(rng, m, n, scale=2.0), _vec(rng, n), _vec(rng, m, n), t


def _slow(rng, m, n, t, ratio=0.9):
    """Top two singular values close (s2 = ratio * s1): the estimate is still moving after t steps."""
    k = min(m, n)
    s = np.array([1.5, 1.5 * ratio, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02][:k])
    return _with_singular_values(rng, m, n, s), _vec(rng, n), _vec(rng, m, n), t


def _far_start(rng, m, n, t):
    """u starts almost orthogonal to the top right singular vector: the first steps move it most."""
    s = np.array([1.8, 0.9, 0.6, 0.3][:min(m, n)])
    w = _with_singular_values(rng, m, n, s)
    top = np.linalg.svd(w)[2][0]
    u = rng.uniform(-1, 1, size=n)
    u = u - (u @ top) * top + 0.02 * top
    return w, np.round(u / np.abs(u).max(), 3), _vec(rng, m, n), t


def _large(rng, m, n, t):
    """Entries near +-2, largest singular value about 16: (W^T W)^30 u grows past float32's 3.4e38."""
    sign = np.sign(rng.uniform(-1, 1, size=(m, 1)) + 1e-9) * np.sign(rng.uniform(-1, 1, size=(1, n)) + 1e-9)
    return np.round(sign * rng.uniform(1.9, 2.0, size=(m, n)), 3), _vec(rng, n), _vec(rng, m, n), t


def _tiny(rng, m, n, t):
    """Entries of about 0.01, largest singular value about 0.05: (W^T W)^30 u underflows to zero."""
    return _vec(rng, m, n, scale=0.02, dec=4), _vec(rng, n), _vec(rng, m, n), t


def _smallest_sigma(rng, m, n, t):
    """Killer "epsilon in a norm": every entry of the single row 0.00201 and u all ones, so w @ u sits at
    the constraints' floor (0.01) and sigma = 0.00201 * sqrt(n), about 0.0045, is as small as the constraints
    allow. An epsilon added to a norm (`z / (norm + 1e-6)`) or to sigma (`w / (sigma + 1e-6)`) then moves
    `w_sn` and `u` by 2e-4 of themselves, past the tolerance; every other case's norms are 20 times larger."""
    assert m == 1
    return np.full((1, n), 0.00201), np.ones(n), _vec(rng, m, n), t


# (shape (m, n), n_iters, how the case is made, the mistake it is there to catch). Cases share shapes and
# n_iters where they can: each distinct pair is one more program to trace and compile. The first case of
# each shape is the one the grader probes: it has finite outputs for every plausible program.
CASES = [
    ((3, 4), 1, _random, "one step from a random start: catches a gradient that also runs back through the loop "
     "(no stop_gradient), which differs most here, and stop_gradient on u but not on v"),
    ((3, 4), 1, _far_start, "one step from a far start: the gradient through the loop again, where the estimate "
     "is far from converged, and a v left at its initial value"),
    ((4, 4), 2, _random, "square and not symmetric: W^T W and W W^T differ, so a transpose swapped where the "
     "shapes still fit (m = n) gives wrong numbers"),
    ((4, 4), 2, _slow, "square and slow: catches one iteration more or less at a small n_iters"),
    ((5, 6), 8, _slow, "still unconverged after 8 steps: catches an exact sigma (jnp.linalg.norm(w, 2), an SVD) "
     "in place of the estimate, and the missing stop_gradient at a larger n_iters"),
    ((5, 6), 8, lambda rng, m, n, t: _slow(rng, m, n, t, ratio=0.95), "s2 = 0.95 s1: catches one iteration more "
     "or less (range(1, n_iters), <= n_iters)"),
    ((5, 6), 8, lambda rng, m, n, t: _slow(rng, m, n, t, ratio=0.8), "s2 = 0.8 s1, nearly converged: catches "
     "sigma = ||W u_T|| (or a fresh v from u_T) instead of v_T^T W u_T, which differ by the second order"),
    ((8, 3), 4, _far_start, "a start almost orthogonal to the answer: catches sigma from the wrong vectors, and "
     "returning the starting u instead of u_T"),
    ((1, 5), 2, _random, "a single row: catches a transpose taken on the wrong side (v has one entry)"),
    ((6, 1), 3, _random, "a single column: the same, u has one entry"),
    ((1, 1), 1, _random, "a 1 x 1 weight: sigma = |w|, w_sn is its sign and grad is zero"),
    ((8, 8), 30, _random, "a converged estimate: the outputs agree with the exact SVD up to rounding (the formula "
     "itself is checked here), and catches a returned u that is not normalised"),
    ((8, 8), 30, _large, "30 steps on entries near 2: catches normalising only at the end, where "
     "(W^T W)^30 u overflows to inf"),
    ((8, 8), 30, _tiny, "30 steps on entries near 0.01: catches normalising only at the end, where "
     "(W^T W)^30 u underflows to zero and 0 / 0 is NaN"),
    ((1, 5), 2, _smallest_sigma, "killer 'epsilon in a norm': the smallest sigma the constraints allow, where an "
     "epsilon added to a normalising norm or to sigma shows"),
]


def generate(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for (m, n), t, make, _why in CASES:
        w, u, ct, t = make(rng, m, n, t)
        assert np.linalg.norm(w @ u) >= 0.01, (m, n, _why)
        f32 = lambda a: np.asarray(a, np.float32).tolist()  # noqa: E731
        out.append({"w": f32(w), "u": f32(u), "ct": f32(ct), "n_iters": int(t)})
    return out

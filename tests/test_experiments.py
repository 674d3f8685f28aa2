"""The experiments' search helpers (``grader/verifier/experiments.py``): where a program holds a value the
grader computed itself, per loop step, batched, or scaled. Pure NumPy: no program is traced here; the
problems' experiments are exercised on real programs by the registry sweep."""
from __future__ import annotations

import numpy as np

from grader.verifier.experiments import Step, find_batched, find_per_step, find_scaled

RNG = np.random.default_rng(20261207)


def _steps(per_step: list[dict[str, list]]) -> list[Step]:
    return [Step(j, [], [], values) for j, values in enumerate(per_step)]


def test_per_step_finds_each_share_in_order_up_to_one_factor():
    shares = [RNG.standard_normal((3, 2)) for _ in range(4)]
    noise = [RNG.standard_normal((3, 2)) for _ in range(4)]
    steps = _steps([{"5": [0.25 * shares[j], np.float32(j)], "9": [noise[j]]} for j in range(4)])
    found = find_per_step(steps, shares)
    assert [(f["path"], f["k"], f["order"]) for f in found] == [("5", 0, [0, 1, 2, 3])]
    assert abs(found[0]["c"] - 0.25) < 1e-12


def test_per_step_reports_the_order_a_reversed_loop_holds_them_in():
    shares = [RNG.standard_normal(5) for _ in range(3)]
    found = find_per_step(_steps([{"1": [shares[2 - j]]} for j in range(3)]), shares)
    assert found and found[0]["order"] == [2, 1, 0]


def test_per_step_needs_one_factor_for_every_step_and_every_step_to_hold_one():
    shares = [RNG.standard_normal(4) for _ in range(3)]
    mixed = _steps([{"1": [c * s]} for c, s in zip((1.0, 2.0, 1.0), shares)])  # a different factor at step 1
    assert find_per_step(mixed, shares) == []
    off = _steps([{"1": [s + (0.1 if j == 2 else 0.0)]} for j, s in enumerate(shares)])  # step 2 off by 0.1
    assert find_per_step(off, shares) == []
    assert find_per_step(_steps([{"1": [np.zeros(4)]} for _ in range(3)]), shares) == []  # zero holds nothing


def test_per_step_tolerates_rounding_relative_to_the_largest_share():
    shares = [np.array([1000.0, 1e-4]), np.array([900.0, -2e-4])]
    rounded = _steps([{"1": [s + np.array([0.01, 0.01])]} for s in shares])  # 1e-5 of the scale
    assert find_per_step(rounded, shares)


def test_batched_finds_every_example_at_once_along_any_axis():
    per_example = RNG.standard_normal((4, 3))
    values = {"2": [per_example.T * 3.0], "3": [per_example[:2]], "4": [RNG.standard_normal((4, 3))]}
    found = find_batched(values, per_example)
    assert [(f["path"], f["axis"]) for f in found] == [("2", 1)] and abs(found[0]["c"] - 3.0) < 1e-9


def test_scaled_holds_every_target_with_one_constant():
    targets = [RNG.standard_normal(3), RNG.standard_normal(3)]
    candidates = [{"7": [2.0 * t], "8": [t * (1.0 + j)]} for j, t in enumerate(targets)]
    assert [(p, k) for p, k, _ in find_scaled(candidates, targets)] == [("7", 0)]

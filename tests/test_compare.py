"""Staged comparison: keys, then shape, then dtype, then values, each with a sentence that says what differed."""

import pytest

from grader.grading.compare import compare, decode
from grader.records import learner, unmarked


def arr(v, shape, dtype="float32"):
    return {"t": "array", "dtype": dtype, "shape": list(shape), "v": v}


def out(loss, w1, **extra):
    return {"t": "dict", "v": {"loss": loss, "grads": {"t": "dict", "v": {"w1": w1, **extra}}}}


EXPECTED = {"loss": 1.060169, "grads": {"w1": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}}
W1 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def check(got):
    return compare(EXPECTED, got, rtol=1e-4, atol=1e-5)


def test_equal_within_tolerance_passes():
    passed, message, leaves = check(out(arr(1.0601695, ()), arr(W1, (2, 3))))
    assert passed and message == "ok"
    assert [leaf.path for leaf in leaves] == ["loss", "grads.w1"]


def test_value_mismatch_names_the_leaf_the_values_and_the_tolerance():
    passed, message, _ = check(out(arr(1.0712, ()), arr(W1, (2, 3))))
    assert not passed
    assert message == "loss: got 1.07120, expected 1.06017 (abs err 1.1e-02 > tol 1.2e-04)"  # as the table writes them


def test_seed_outputs_half_a_percent_off_fail():
    passed, _, _ = check(out(arr(1.060169 * 1.005, ()), arr(W1, (2, 3))))
    assert not passed


def test_wrong_shape_is_reported_before_values():
    passed, message, _ = check(out(arr(1.060169, ()), arr([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], (3, 2))))
    assert not passed and message == "grads.w1: shape (3, 2), expected (2, 3)"


def test_scalar_with_an_extra_axis_is_a_shape_error():
    passed, message, _ = check(out(arr([1.060169], (1,)), arr(W1, (2, 3))))
    assert message == "loss: shape (1,), expected ()"


def test_wrong_dtype_is_reported():
    passed, message, _ = check(out(arr(1, (), "int32"), arr(W1, (2, 3))))
    assert message == "loss: dtype int32, expected float32"


def test_missing_and_extra_keys_are_named():
    got = {"t": "dict", "v": {"loss": arr(1.060169, ()), "grad": {"t": "dict", "v": {}}}}
    passed, message, _ = check(got)
    assert not passed and unmarked(message) == "output: missing key(s) ['grads'] and unexpected key(s) ['grad']"
    assert learner("['grad']") in message, "the learner's keys are marked as theirs (shown literally by the app)"


def test_tuple_instead_of_dict_is_described():
    passed, message, _ = check({"t": "tuple", "v": [arr(1.0, ()), arr(W1, (2, 3))]})
    assert message == "output: expected a dict with keys ['grads', 'loss'], got a tuple of 2"


def test_nan_is_not_a_match():
    passed, message, _ = check(out(arr(float("nan"), ()), arr(W1, (2, 3))))
    assert not passed and message == "loss: got nan (not a finite number)"


def test_array_mismatch_points_at_the_first_bad_entry_and_counts_them():
    bad = [[1.0, 2.0, 3.0], [4.0, 5.5, 6.5]]
    passed, message, leaves = check(out(arr(1.060169, ()), arr(bad, (2, 3))))
    assert message.startswith("grads.w1[1, 1]: got 5.5, expected 5.0") and message.endswith("; 2 of 6 entries differ")
    assert leaves[1].max_abs_err == 0.5


def test_decode_gives_plain_data():
    assert decode(out(arr(1.5, ()), arr(W1, (2, 3)))) == {"loss": 1.5, "grads": {"w1": W1}}


def tagged(t, v, **kw):
    return dict({"t": t, "v": v}, **kw)


def test_a_list_of_leaves_is_compared_leaf_by_leaf():
    expected = tagged("list", [[1.0, 2.0], 3.0])
    got = {"t": "list", "v": [arr([1.0, 2.0], (2,)), arr(3.5, ())]}
    passed, message, leaves = compare(expected, got, rtol=1e-4, atol=1e-5)
    assert not passed and message.startswith("[1]: got 3.5, expected 3.0")
    assert [leaf.path for leaf in leaves] == ["[0]", "[1]"]


@pytest.mark.parametrize("want, gave", [("list", "tuple"), ("tuple", "list")])
def test_a_tuple_is_not_a_list_nor_a_list_a_tuple_and_the_message_names_the_path_and_both(want, gave):
    """Issue 22: "lists stay lists" is promised; node types are compared exactly, with the same numbers."""
    expected = {"grads": {"layers": tagged(want, [[1.0, 2.0], 3.0])}}
    got = {"t": "dict", "v": {"grads": {"t": "dict", "v": {"layers": {
        "t": gave, "v": [arr([1.0, 2.0], (2,)), arr(3.0, ())]}}}}}
    passed, message, leaves = compare(expected, got, rtol=1e-4, atol=1e-5)
    assert not passed
    assert message == f"grads.layers: expected a {want} of 2, got a {gave} of 2"
    assert [leaf.passed for leaf in leaves] == [False]
    same = {"t": "dict", "v": {"grads": {"t": "dict", "v": {"layers": {
        "t": want, "v": [arr([1.0, 2.0], (2,)), arr(3.0, ())]}}}}}
    assert compare(expected, same, rtol=1e-4, atol=1e-5)[0]


def test_integer_outputs_are_exact_and_their_dtype_is_checked():
    expected = {"tokens": tagged("array", [3, 7], dtype="int32")}
    ok = {"t": "dict", "v": {"tokens": {"t": "array", "dtype": "int32", "shape": [2], "v": [3, 7]}}}
    off = {"t": "dict", "v": {"tokens": {"t": "array", "dtype": "int32", "shape": [2], "v": [3, 8]}}}
    wrong_dtype = {"t": "dict", "v": {"tokens": {"t": "array", "dtype": "float32", "shape": [2], "v": [3.0, 7.0]}}}
    assert compare(expected, ok, rtol=0.5, atol=0.5)[0]
    assert not compare(expected, off, rtol=0.5, atol=0.5)[0]
    assert compare(expected, wrong_dtype, rtol=0.5, atol=0.5)[1] == "tokens: dtype float32, expected int32"


def test_an_expected_infinity_must_be_met_exactly():
    expected = [0.5, float("-inf")]
    assert compare(expected, arr([0.5, float("-inf")], (2,)), rtol=1e-4, atol=1e-5)[0]
    passed, message, _ = compare(expected, arr([0.5, -1e30], (2,)), rtol=1e-4, atol=1e-5)
    assert not passed and "expected -inf" in message
    assert not compare(expected, arr([float("nan"), float("-inf")], (2,)), rtol=1e-4, atol=1e-5)[0]


def test_an_output_may_have_its_own_tolerance_the_longest_path_wins():
    got = out(arr(1.0712, ()), arr([[1.0, 2.0, 3.0], [4.0, 5.0, 6.001]], (2, 3)))
    assert not check(got)[0]
    loose = {"loss": (2e-2, 0.0), "grads": (1e-3, 0.0)}
    assert compare(EXPECTED, got, rtol=1e-4, atol=1e-5, per_output=loose)[0]
    tight = dict(loose, **{"grads.w1": (0.0, 1e-4)})
    passed, message, _ = compare(EXPECTED, got, rtol=1e-4, atol=1e-5, per_output=tight)
    assert not passed and message.startswith("grads.w1[1, 2]: got 6.001, expected 6.0 (abs err 1.0e-03 > tol 1.0e-04)")


def test_flags_and_integers_read_as_what_they_are():
    """A wrong boolean reads "got False, expected True" (not "got 0, expected 1 (abs err 1.0e+00 > tol
    0.0e+00)"), a wrong integer its two values: they must match exactly, so an error and a tolerance say nothing."""
    expected = {"done": {"t": "array", "dtype": "bool", "v": [True, True, True]}, "n": {"t": "array", "dtype": "int32", "v": 4}}
    got = {"t": "dict", "v": {"done": arr([True, False, True], (3,), "bool"), "n": arr(4, (), "int32")}}
    passed, message, _ = compare(expected, got, rtol=1e-4, atol=1e-5)
    assert not passed and message == "done[1]: got False, expected True; 1 of 3 entries differ", message
    got["v"]["done"] = arr([True, True, True], (3,), "bool")
    got["v"]["n"] = arr(3, (), "int32")
    passed, message, _ = compare(expected, got, rtol=1e-4, atol=1e-5)
    assert not passed and message == "n: got 3, expected 4", message


def test_the_message_writes_numbers_as_the_cases_table_does():
    """Issue 32: the verdict banner (this message) said 1.060169 where the table said 1.06017."""
    from pages.views.results import fmt_pair, worst_entry
    expected = {"loss": 0.123456789}
    passed, message, leaves = compare(expected, {"t": "dict", "v": {"loss": arr(0.1334567, ())}}, rtol=1e-4,
                                      atol=1e-4)
    assert not passed
    e_text, g_text = fmt_pair(0.123456789, 0.1334567)
    assert f"got {g_text}, expected {e_text}" in message
    assert f"got {g_text}, expected {e_text}" in worst_entry(leaves[0])

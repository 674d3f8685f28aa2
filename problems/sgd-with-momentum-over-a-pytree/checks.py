"""Requirement checks for sgd-with-momentum-over-a-pytree, read off the traced program.

`jax.tree.map` leaves no equation of its own: what it leaves is a program in which every result leaf is
computed from the input leaves at its own place in the trees. That is what `leaf-by-leaf` checks, exactly,
at the granularity of arrays: the input leaves are labelled with their place (``Flow.origins``), and a
returned leaf computed from an array that holds values of another place (a concatenation of the leaves,
even where the slice taken back holds only its own values; a sum over leaves, even multiplied by zero)
fails. Code that
assumes the trees' keys cannot be seen in the program at all; the hidden cases, whose trees nest dicts and
lists differently, catch it. `no-host-callback` asks that nothing feeding the result is work the grader
cannot see: a host callback or a primitive the submission defined.
"""
from grader.toolkit import CheckResult, Trace, dotted, host_callback, line_hint, match_leaves, name_path, shown

TREES = ("params", "grads", "velocity")
"""Arguments whose leaves have a place; `lr` and `momentum` may reach every leaf."""
RETURNED = ("params", "velocity")


def leaf_by_leaf(trace: Trace) -> CheckResult:
    match = match_leaves(trace, TREES, RETURNED)
    if not match.checked:
        return CheckResult(False, "None of the returned leaves sits at a place the input trees have (the grader "
                           f"found {shown(trace.output_names) or 'nothing'}), so it could not match them with the "
                           "inputs. Return `{\"params\": new_params, \"velocity\": new_velocity}`, each with the "
                           "structure of `params`; a function that returns a tuple inside `jax.tree.map` gives a "
                           "tree of tuples, so map once for each tree instead.")
    if match.wrong:
        name, node = match.wrong[0]
        own = ", ".join(f"`{dotted((tree,) + name_path(name)[1:])}`" for tree in TREES)
        meet = match.meeting_point()
        met = f" They meet at `{meet.primitive.split(':')[-1]}`{line_hint(meet)}." if meet else ""
        return CheckResult(False, f"`{name}` is computed from arrays that also hold values of leaves at other places "
                           f"({shown(match.others(name, node))}), not only from {own}."
                           f"{met} {len(match.wrong)} of the {match.checked} returned leaves are. Each "
                           "leaf's update needs only its own leaves: map it over the trees with "
                           "`jax.tree.map(f, velocity, grads)` instead of flattening them into one vector or "
                           "combining leaves.")
    extra = (f" ({match.elsewhere} other returned leaves sit at places the input trees do not have; the test "
             "cases report the structure.)" if match.elsewhere else "")
    return CheckResult(True, f"Each of the {match.checked} returned leaves at the inputs' places is computed from "
                       f"the leaves at its own place in `params`, `grads` and `velocity`.{extra}", match.made)


def no_host_callback(trace: Trace) -> CheckResult:
    return host_callback(
        trace, "The update is computed with JAX's own operations: no host callback and no primitive of your own "
        "feeds the result.",
        "the update leaves the compiled program (a round trip to the host at every step, on an accelerator a "
        "device-to-host copy)",
        "Write the update with `jnp` operations on the leaves, inside `jax.tree.map`.")


CHECKS = {
    "leaf-by-leaf": leaf_by_leaf,
    "no-host-callback": no_host_callback,
}

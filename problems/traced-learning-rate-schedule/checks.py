"""Requirement checks for traced-learning-rate-schedule, read off the traced program.

The grader traces with `step` as an int32 input of the program, so a Python `if` on it fails while tracing
(JAX's TracerBoolConversionError, reported as a runtime error); these checks catch the ways around that.

- Callbacks are recognised as JAX's own primitives (``pure_callback``, ``io_callback``...), never by a name:
  a primitive the submission registers itself arrives as ``foreign:<name>`` and the grader cannot see what
  it runs, so no requirement can be confirmed through it.
- "Constant time in the step" is about loops as much as arrays: a loop whose condition reads the step, a
  scan as long as the schedule, a switch with a branch per step.
- A 0/1 factor made from a comparison is found by what its values can be (``Masks``: a small abstract
  interpretation of the program), however it is built, and it only counts where it carries the rate (the
  counterfactual probes, ``grader/toolkit/carries.py``); the choice between the phases must be a selection that
  carries the rate.
"""
from __future__ import annotations

import itertools
import math
import re
from math import prod
from typing import Iterable

from grader.toolkit import HOST_CALLBACKS, CheckResult, EqnRef, Node, Trace, carries, iter_eqns, line_hint, node

CALLBACKS = HOST_CALLBACKS
"""JAX's own primitives that leave the compiled program for the host (or for foreign code)."""
PRINTS = {"debug_callback", "debug_print"}
"""Callbacks that only print (`jax.debug.print`, `jax.debug.callback`): they compute nothing."""
COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}
SELECTIONS = {"select_n", "cond", "clamp", "min", "max", "dynamic_slice", "gather", "dynamic_index_in_dim"}
MASK_USES = {"mul", "dot_general"}
SAME = {"convert_element_type", "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "copy", "copy_p",
        "reduce_precision", "stop_gradient", "optimization_barrier", "transpose", "rev", "slice",
        "dynamic_slice", "real"}
"""Operations whose results take only values of their first operand."""
POSITIONAL = {"jit", "pjit", "closed_call", "core_call", "remat2", "checkpoint", "remat", "custom_jvp_call",
              "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"}
MAX_VALUES = 16


def _limit(trace: Trace) -> int:
    """Entries from which an array counts as a table over the steps: 16 (honest code needs a handful of
    scalars, or three phases stacked), or T when the schedule is shorter, but never below 8."""
    return max(min(16, trace.args["total_steps"]), 8)


def _to_rate(trace: Trace) -> set[Node]:
    """Every node the rate is computed from (one backward pass over the data flow)."""
    return trace.flow.sources_of(trace.flow.outputs)


def _foreign(trace: Trace, from_step: set[Node]) -> list[EqnRef]:
    """Primitives the submission registered itself that see the step or produce the rate."""
    to_rate = _to_rate(trace)
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")
            and (any(n in from_step for n in r.in_nodes) or any(n in to_rate for n in r.out_nodes))]


def _foreign_message(refs: list[EqnRef], what: str) -> CheckResult:
    ref = refs[0]
    return CheckResult(False, f"`{ref.primitive[8:]}`{line_hint(ref)} is a primitive your code registered "
                       "itself, not JAX's: whatever it is named, the grader cannot see what it runs (its "
                       "implementation and lowering may do anything, even call back into Python), so it cannot "
                       f"confirm {what}. Compute the rate with `jnp` and `lax` operations.",
                       [r.evidence("not a JAX primitive") for r in refs[:3]])


def _from_step(trace: Trace) -> set[Node]:
    return trace.flow.reach(trace.inputs("step"))


# ----------------------------------------------------------------------------------------------------
# no-host-callback

def no_host_callback(trace: Trace) -> CheckResult:
    from_step = _from_step(trace)
    to_rate = _to_rate(trace)
    calls = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS]
    used = [r for r in calls if any(n in from_step for n in r.in_nodes) or any(n in to_rate for n in r.out_nodes)]
    if used:
        ref = used[0]
        return CheckResult(False, f"`{ref.primitive}`{line_hint(ref)} hands the step (or the rate) to Python: "
                           "that leaves the compiled program at every step (whether or not its result is used), "
                           "cannot run on an accelerator without a round trip to the host, and hides the schedule "
                           "from JAX. Compute "
                           "both phases with `jnp` operations and choose with `jnp.where(step < warmup_steps, "
                           "warm, decay)`.", [r.evidence("host callback") for r in used[:4]])
    fake = _foreign(trace, from_step)
    if fake:
        return _foreign_message(fake, "that the rate is computed without calling back into Python")
    prints = [r for r in iter_eqns(trace.jaxpr) if r.primitive in PRINTS]
    note = (f" (`jax.debug.print`{line_hint(prints[0])} only prints, which is fine)" if prints else "")
    return CheckResult(True, "The rate is computed inside the traced program with JAX operations, with no call "
                       f"back into Python{note}.", [r.evidence("print only") for r in prints[:2]])


# ----------------------------------------------------------------------------------------------------
# no-step-table

def _arrays(jaxpr: dict) -> Iterable[tuple[dict, EqnRef | None]]:
    """(atom, equation or None) for every constant and every equation output, nested programs included."""
    for atom in jaxpr.get("constvars", []):
        yield atom, None
    for ref in iter_eqns(jaxpr):
        for atom in ref.eqn["outvars"]:
            yield atom, ref
        for atom in ref.eqn["invars"]:
            if "lit" in atom:
                yield atom, ref
        for sub in ref.eqn["subjaxprs"].values():
            for atom in sub.get("constvars", []):
                yield atom, ref


def _int_literals(jaxpr: dict) -> list[int]:
    out = []
    for ref in iter_eqns(jaxpr):
        for atom in ref.eqn["invars"]:
            value = _literal(atom)
            if value is not None and math.isfinite(value) and float(value).is_integer():
                out.append(int(value))
    return out


def no_step_table(trace: Trace) -> CheckResult:
    total = trace.args["total_steps"]
    limit = _limit(trace)
    from_step = _from_step(trace)
    for atom, ref in _arrays(trace.jaxpr):
        size = prod(atom["shape"])
        if size >= limit:
            where = f"`{ref.primitive}`{line_hint(ref)}" if ref else "a constant captured by your function"
            return CheckResult(False, f"{where} holds an array of shape {tuple(atom['shape'])} ({size} entries; "
                               f"total_steps = {total}): a table over the steps. Tabulating the schedule costs "
                               "memory and time in proportion to the length of training, to read one number. "
                               "Compute the rate for the given step directly from its formula.",
                               [ref.evidence(f"array of shape {tuple(atom['shape'])}")] if ref else [])
    for ref in iter_eqns(trace.jaxpr):
        if ref.primitive == "while":
            cond = ref.eqn["subjaxprs"].get("cond_jaxpr", {"outvars": []})
            decides = [node(f"{ref.path}/cond_jaxpr/", a) for a in cond["outvars"]]
            if any(n in from_step for n in decides):
                return CheckResult(False, f"The `while` loop{line_hint(ref)} (a `lax.while_loop`, or a "
                                   "`lax.fori_loop` with a traced bound) stops on a condition that reads the step: "
                                   "its number of iterations grows with the step, so step 1,000,000 costs a "
                                   "million iterations. Compute the rate from its formula, with no loop.",
                                   [ref.evidence("loop whose trip count depends on the step")])
            bounds = [v for v in _int_literals(cond) if abs(v) >= limit]
            if bounds:
                return CheckResult(False, f"The `while` loop{line_hint(ref)} runs up to {max(bounds)} iterations "
                                   f"(total_steps = {total}): time that grows with the schedule, to compute one "
                                   "rate. Compute it from its formula, with no loop.",
                                   [ref.evidence(f"loop bound {max(bounds)}")])
        elif ref.primitive == "scan" and (ref.params.get("length") or 0) >= limit:
            return CheckResult(False, f"The scan{line_hint(ref)} (a `lax.scan`, or a `lax.fori_loop` with fixed "
                               f"bounds) runs {ref.params.get('length')} steps (total_steps = {total}): a loop over "
                               "the schedule to compute one rate. Compute it from its formula, with no loop.",
                               [ref.evidence(f"scan of length {ref.params.get('length')}")])
        elif ref.primitive == "cond" and len(ref.eqn["subjaxprs"]) >= limit:
            return CheckResult(False, f"The `lax.switch`{line_hint(ref)} has {len(ref.eqn['subjaxprs'])} branches "
                               f"(total_steps = {total}): a table of branches over the steps. Compute the rate "
                               "from its formula, choosing between the three phases only.",
                               [ref.evidence("one branch per step")])
    fake = _foreign(trace, from_step)
    if fake:
        return _foreign_message(fake, "that the rate takes constant time and memory")
    return CheckResult(True, f"Every array in the program has fewer than {limit} entries and no loop runs over the "
                       f"steps (total_steps = {total}): the rate is computed for the given step alone.")


# ----------------------------------------------------------------------------------------------------
# select-not-mask

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan)", re.I)


def _literal(atom: dict) -> float | None:
    """The value of a scalar literal operand (``TypedNdArray(1., dtype=float32)``, ``True``...), or None."""
    text = atom.get("lit")
    if text is None or atom.get("shape"):
        return None
    if "True" in text:
        return 1.0
    if "False" in text:
        return 0.0
    found = _NUMBER.search(text.split("dtype")[0])
    return float(found.group(0)) if found else None


class Value:
    """What the analysis knows of a variable: the few values it can take (or None), and whether a
    comparison decides which."""

    __slots__ = ("vals", "cmp", "isnan")

    def __init__(self, vals: frozenset | None = None, cmp: bool = False, isnan: bool = False) -> None:
        self.vals, self.cmp = vals, cmp
        self.isnan = isnan
        """A test `x != x`: true only where x is NaN (as `jnp.isnan` and NaN-aware helpers write it)."""


TOP = Value()


def _combine(fn, values: list[Value]) -> frozenset | None:
    sets = [v.vals for v in values]
    if any(s is None for s in sets) or not sets:
        return None
    out = set()
    total = 1
    for s in sets:
        total *= len(s)
    if total > MAX_VALUES * MAX_VALUES:
        return None
    for combo in itertools.product(*sets):
        try:
            r = float(fn(*combo))
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            return None
        if math.isnan(r):
            return None
        out.add(r)
        if len(out) > MAX_VALUES:
            return None
    return frozenset(out)


def _sign(a: float) -> float:
    return float((a > 0) - (a < 0))


ARITH = {
    "add": lambda a, b: a + b, "add_any": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "max": max, "min": min,
    "neg": lambda a: -a, "abs": abs, "sign": _sign, "floor": math.floor, "ceil": math.ceil,
    "round": round, "pow": lambda a, b: a ** b,
    "and": lambda a, b: float(bool(a) and bool(b)), "or": lambda a, b: float(bool(a) or bool(b)),
    "not": lambda a: float(not a), "xor": lambda a, b: float(bool(a) != bool(b)),
    "clamp": lambda lo, x, hi: min(max(x, lo), hi),
}


class Masks:
    """A forward pass over the program that finds every value made only of a few constants chosen by a
    comparison (`(step < W).astype(...)`, `jnp.where(c, 1.0, 0.0)`, products of comparisons, `jnp.sign`,
    `jnp.heaviside`, `lax.cond` between constants...), and every product that multiplies such a 0/1 factor
    with a value computed from the inputs. Each sub-program occurrence is visited once."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.env: dict[Node, Value] = {}
        self.uses: list[EqnRef] = []
        self.from_step = _from_step(trace)
        self.from_inputs = trace.flow.reach(trace.inputs("step", "base_lr", "min_lr"))
        self.refs = trace.eqn_at
        self._walk(trace.jaxpr, "", [TOP] * len(trace.jaxpr["invars"]))

    def value(self, scope: str, atom: dict) -> Value:
        if "lit" in atom:
            v = _literal(atom)
            return Value(frozenset({v}) if v is not None and not math.isnan(v) else None)
        return self.env.get(node(scope, atom), TOP)

    def is_mask(self, scope: str, atom: dict) -> bool:
        v = self.value(scope, atom)
        n = node(scope, atom)
        return (v.cmp and v.vals is not None and 0.0 in v.vals and any(x != 0.0 for x in v.vals)
                and n in self.from_step)

    def _walk(self, jaxpr: dict, scope: str, inputs: list[Value]) -> list[Value]:
        for atom, v in zip(jaxpr["invars"], inputs):
            n = node(scope, atom)
            if n is not None:
                self.env[n] = v
        for i, eqn in enumerate(jaxpr["eqns"]):
            path = f"{scope}{i}"
            ins = [self.value(scope, a) for a in eqn["invars"]]
            outs = self._eqn(eqn, path, scope, ins)
            for atom, v in zip(eqn["outvars"], outs):
                n = node(scope, atom)
                if n is not None:
                    self.env[n] = v
        return [self.value(scope, a) for a in jaxpr["outvars"]]

    def _eqn(self, eqn: dict, path: str, scope: str, ins: list[Value]) -> list[Value]:
        prim, subs, n_out = eqn["primitive"], eqn["subjaxprs"], len(eqn["outvars"])
        cmp = any(v.cmp for v in ins)
        if subs:
            if prim in POSITIONAL and len(subs) == 1:
                (name, sub), = subs.items()
                if len(sub["invars"]) == len(ins):
                    return self._walk(sub, f"{path}/{name}/", ins)
            if prim == "cond":
                results = [self._walk(sub, f"{path}/{name}/", ins[1:]) for name, sub in subs.items()]
                index_cmp = ins[0].cmp if ins else False
                return [Value(_union([r[k].vals for r in results]), index_cmp or any(r[k].cmp for r in results))
                        for k in range(n_out)]
            for name, sub in subs.items():  # loops and unknown structure: their inside is searched too
                self._walk(sub, f"{path}/{name}/", [Value(None, cmp)] * len(sub["invars"]))
            return [Value(None, cmp)] * n_out
        if prim in MASK_USES and n_out == 1:
            self._mask_use(eqn, path, scope, ins)
        if prim in COMPARISONS:
            atoms = eqn["invars"]
            isnan = prim == "ne" and len(atoms) == 2 and atoms[0].get("id") is not None \
                and atoms[0].get("id") == atoms[1].get("id")
            return [Value(frozenset({0.0, 1.0}), True, isnan)]
        if prim in SAME and ins:
            return [ins[0]] * n_out
        if prim == "select_n" and ins:
            cases = ins[1:]
            if len(cases) == 2 and ins[0].isnan:
                cases = cases[:1]  # `where(isnan(a), a, b)`: the case chosen when true is only taken for NaN
            return [Value(_union([v.vals for v in cases]), cmp)]
        if prim in ("concatenate", "stack"):
            return [Value(_union([v.vals for v in ins]), cmp)]
        if prim == "sign":
            vals = _combine(_sign, ins[:1]) or frozenset({-1.0, 0.0, 1.0})
            return [Value(vals, True)]
        if prim == "integer_pow" and ins:
            y = eqn["params"].get("y")
            if isinstance(y, int):
                return [Value(_combine(lambda a: a ** y, ins[:1]), cmp)]
        fn = ARITH.get(prim)
        if fn is not None:
            return [Value(_combine(fn, ins), cmp)] * n_out
        return [Value(None, cmp)] * n_out

    def _mask_use(self, eqn: dict, path: str, scope: str, ins: list[Value]) -> None:
        operands = eqn["invars"][:2]
        masks = [a for a in operands if self.is_mask(scope, a)]
        others = [a for a in operands if a not in masks]
        if masks and any(self.value(scope, a).vals is None and node(scope, a) in self.from_inputs for a in others):
            ref = self.refs.get(path)
            if ref is not None:
                self.uses.append(ref)


def _union(sets: list[frozenset | None]) -> frozenset | None:
    if not sets or any(s is None for s in sets):
        return None
    out = frozenset().union(*sets)
    return out if len(out) <= MAX_VALUES else None


def _moves_rate(trace: Trace, ref: EqnRef, to_rate: set[Node]) -> tuple[bool, str]:
    """Whether the rate depends on ``ref``'s result: measured by the probes when this shape was probed,
    else read from the data flow (``to_rate``: the nodes the rate is computed from). Returns (depends, how
    it is known)."""
    carry = carries(trace, ref)
    if carry.measured and not carry.unknown and not carry.invisible:  # (invisible: the probe saw nothing move,
        return not carry.decorative, "measured"                       # yet nothing else computes the rate)
    return any(n in to_rate for n in ref.out_nodes), "data flow"


def _moves_with_step(trace: Trace, from_step: set[Node]) -> bool:
    """Whether, on this traced input, some probed equation computed from the step moves the rate when its
    result is replaced (True when the shape was not probed: the data flow then says it can)."""
    targets = trace.probes.get("targets") if trace.probes else None
    if not targets:
        return True
    outputs = set(trace.flow.outputs)
    for t in targets:
        refs = [trace.eqn_at.get(p) for p in t.get("paths", [])]
        if not any(r is not None and any(n in from_step for n in r.in_nodes) for r in refs):
            continue
        if "change" not in t:
            return True
        if any(c > 1e-6 + 1e-5 * sc for c, sc in zip(t["change"], t["scale"])):
            return True
    return not outputs


def _selections(trace: Trace, from_step: set[Node]) -> list[EqnRef]:
    """JAX's own selections whose choice depends on the step."""
    found = []
    for ref in iter_eqns(trace.jaxpr):
        ins = ref.in_nodes
        atoms = ref.eqn["invars"]
        if ref.primitive in ("select_n", "cond"):
            decides = [node(ref.scope, atoms[0])] if atoms else []
        elif ref.primitive in ("clamp", "min", "max"):
            decides = ins
        elif ref.primitive in ("dynamic_slice", "gather", "dynamic_index_in_dim"):
            decides = [node(ref.scope, a) for a in atoms[1:]]
        else:
            continue
        if any(n in from_step for n in decides if n is not None):
            found.append(ref)
    return found


NAMES = {"select_n": "`jnp.where`", "cond": "`lax.cond`/`lax.switch`", "clamp": "`jnp.clip`",
         "min": "`jnp.minimum`", "max": "`jnp.maximum`", "dynamic_slice": "an index into the phases",
         "gather": "an index into the phases", "dynamic_index_in_dim": "an index into the phases"}


def select_not_mask(trace: Trace) -> CheckResult:
    from_step = _from_step(trace)
    fake = _foreign(trace, from_step)
    if fake:
        return _foreign_message(fake, "how the phases are chosen")
    masks = Masks(trace)
    to_rate = _to_rate(trace)
    for ref in masks.uses:
        depends, how = _moves_rate(trace, ref, to_rate)
        if depends:
            seen = ("when the grader replaced that product with other values, the rate moved" if how == "measured"
                    else "the rate is computed from that product")
            return CheckResult(False, f"A comparison on the step is turned into a 0/1 number and multiplied with a "
                               f"phase at `{ref.primitive}`{line_hint(ref)}, and {seen}. That is a mask, however the "
                               "0/1 is built (`astype`, `jnp.where(c, 1.0, 0.0)`, a product of comparisons, "
                               "`jnp.sign`, `jnp.heaviside`). Multiplying a phase by 0 does not remove it: both "
                               "phases are computed and both gradients flow, and an `inf` in the unused phase (a "
                               "division by `warmup_steps = 0`, say) gives 0 * inf = `nan` in the rate or its "
                               "gradient. Choose with "
                               "`jnp.where(step < warmup_steps, warm, decay)` or `jax.lax.cond` instead.",
                               [r.evidence("0/1 factor times a phase") for r in masks.uses[:4]])
    choices = _selections(trace, from_step)
    carrying = []
    for ref in choices:
        depends, _ = _moves_rate(trace, ref, to_rate)
        if depends:
            carrying.append(ref)
    if not carrying and not _moves_with_step(trace, from_step):
        return CheckResult(True, "On this input nothing computed from the step moves the rate (min_lr = base_lr "
                           "past the warmup, say), so the other inputs decide how the phases are chosen; no "
                           "comparison is used as a 0/1 multiplier.")
    if not carrying:
        seen = (f" The program has {NAMES.get(choices[0].primitive, choices[0].primitive)}{line_hint(choices[0])}, "
                "but the rate does not depend on what it chooses (its result is discarded, multiplied by zero, or "
                "added and subtracted again)." if choices else
                " No `jnp.where`, `lax.cond`, `jnp.minimum` or `jnp.clip` in the program depends on the step.")
        return CheckResult(False, "The grader found no selection that decides the rate from the step." + seen +
                           " Compute both phases and choose with `jnp.where(step < warmup_steps, warm, decay)` "
                           "(or `lax.cond`, `jnp.minimum`/`jnp.clip`) and return what it chooses.",
                           [r.evidence("selection that does not decide the rate") for r in choices[:3]])
    order = list(NAMES)
    carrying.sort(key=lambda r: order.index(r.primitive))
    first = carrying[0]
    return CheckResult(True, f"The phases are chosen in the program with {NAMES[first.primitive]}"
                       f"{line_hint(first)}, and no comparison is used as a 0/1 multiplier.",
                       [r.evidence("phase choice") for r in carrying[:3]])


CHECKS = {
    "no-host-callback": no_host_callback,
    "no-step-table": no_step_table,
    "select-not-mask": select_not_mask,
}

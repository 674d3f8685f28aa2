"""Reading the traced program: walking equations, autodiff fingerprints, data flow.

The child sends each traced program as plain data (see ``grader/child.py``): a jaxpr is
``{"invars", "constvars", "outvars", "eqns"}`` and an equation is ``{"primitive", "invars", "outvars",
"params", "name_stack", "source_line", "line", "subjaxprs"}``. Requirement checks in ``problems/*/checks.py``
take a ``Trace`` and return a ``CheckResult`` built from these helpers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from grader.records import Evidence

# Primitive names drift across JAX versions; match every spelling we know.
SCAN = {"scan"}
CHECKPOINT = {"remat2", "checkpoint", "remat", "remat_call"}
CALL = {"jit", "pjit", "closed_call", "core_call", "xla_call", "custom_jvp_call", "custom_vjp_call",
        "custom_vjp_call_jaxpr", "custom_lin"}
MATMUL = {"dot_general"}
LOOPS = {"scan", "while"}

_FORWARD = re.compile(r"(^|[^a-z_])jvp\(")
_BACKWARD = re.compile(r"(^|[^a-z_])transpose\(")


@dataclass
class Trace:
    """One traced program: the arguments' shapes (ints for static arguments) and the jaxpr as data."""

    args: dict[str, Any]
    jaxpr: dict[str, Any]
    input_names: list[str] = field(default_factory=list)
    """The top-level invars' argument paths, e.g. ``["params['b1']", ..., "x", "y"]``."""
    case: str = ""
    """The first case that produced this trace, e.g. ``Example 1``."""


@dataclass
class CheckResult:
    passed: bool
    message: str
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class EqnRef:
    """An equation with where it sits: its path, and the equations whose sub-programs hold it."""

    eqn: dict[str, Any]
    path: str
    ancestors: tuple["EqnRef", ...] = ()

    @property
    def primitive(self) -> str:
        return self.eqn["primitive"]

    @property
    def params(self) -> dict[str, Any]:
        return self.eqn["params"]

    @property
    def full_name_stack(self) -> str:
        """Name stacks of nested programs are relative to their parent equation: join them."""
        return "/".join(a.eqn["name_stack"] for a in self.ancestors + (self,) if a.eqn["name_stack"])

    def inside(self, primitives: set[str]) -> bool:
        return any(a.primitive in primitives for a in self.ancestors)

    def evidence(self, note: str = "") -> Evidence:
        return Evidence(path=self.path, primitive=self.primitive, jaxpr_line=self.eqn.get("line"),
                        source_line=self.eqn.get("source_line"), note=note)


def iter_eqns(jaxpr: dict[str, Any], path: str = "", ancestors: tuple[EqnRef, ...] = ()) -> Iterator[EqnRef]:
    """Every equation, depth first, sub-programs right after the equation that holds them."""
    for i, eqn in enumerate(jaxpr["eqns"]):
        ref = EqnRef(eqn, f"{path}{i}", ancestors)
        yield ref
        for name, sub in eqn["subjaxprs"].items():
            yield from iter_eqns(sub, f"{path}{i}/{name}/", ancestors + (ref,))


def find(jaxpr: dict[str, Any], primitives: set[str]) -> list[EqnRef]:
    return [r for r in iter_eqns(jaxpr) if r.primitive in primitives]


def body_eqns(ref: EqnRef) -> list[EqnRef]:
    """Every equation inside the sub-programs of ``ref``."""
    out = []
    for name, sub in ref.eqn["subjaxprs"].items():
        out.extend(iter_eqns(sub, f"{ref.path}/{name}/", ref.ancestors + (ref,)))
    return out


def relative_name_stack(ref: EqnRef, outer: EqnRef) -> str:
    """The name stack of ``ref`` from inside ``outer`` on (``outer``'s own stack and above left out)."""
    chain = ref.ancestors + (ref,)
    start = chain.index(outer) + 1 if outer in chain else 0
    return "/".join(a.eqn["name_stack"] for a in chain[start:] if a.eqn["name_stack"])


def is_forward_autodiff(stack: str) -> bool:
    return bool(_FORWARD.search(stack))


def is_backward_autodiff(stack: str) -> bool:
    """Autodiff marks the equations of a backward pass with ``transpose(jvp(...))``."""
    return bool(_BACKWARD.search(stack))


def is_differentiated(ref: EqnRef) -> bool:
    stack = ref.full_name_stack
    return is_forward_autodiff(stack) or is_backward_autodiff(stack) or ref.params.get("differentiated") is True


def var_id(atom: dict[str, Any]) -> str | None:
    return atom.get("id")


def tainted_vars(jaxpr: dict[str, Any], seeds: set[str]) -> set[str]:
    """Variables whose value depends on any of ``seeds`` (var ids), through every nested program.

    Sub-programs whose inputs line up with their equation's operands (jit, scan, checkpoint, custom
    derivatives) are followed argument by argument; loop carries are iterated to a fixed point; anything
    else is treated conservatively (a tainted operand taints every input and output).
    """
    tainted = set(seeds)

    def visit(j: dict[str, Any]) -> None:
        for eqn in j["eqns"]:
            ins = [var_id(a) in tainted for a in eqn["invars"]]
            out_taint = any(ins)
            for name, sub in eqn["subjaxprs"].items():
                sub_in = sub["invars"]
                offset = len(eqn["invars"]) - len(sub_in)
                if 0 <= offset <= 1:  # cond passes its branch index first
                    mapped = ins[offset:]
                else:
                    mapped = [out_taint] * len(sub_in)
                for _ in range(3):  # loop carries: what flows out of one step flows into the next
                    for atom, t in zip(sub_in, mapped):
                        if t and var_id(atom):
                            tainted.add(var_id(atom))
                    visit(sub)
                    if eqn["primitive"] in LOOPS:
                        carry_start = int(eqn["params"].get("num_consts", 0) or 0)
                        outs = [var_id(a) in tainted for a in sub["outvars"]]
                        num_carry = int(eqn["params"].get("num_carry", 0) or 0)
                        grown = False
                        for k in range(num_carry):
                            if outs[k] and not mapped[carry_start + k]:
                                mapped[carry_start + k] = True
                                grown = True
                        if not grown:
                            break
                    else:
                        break
                if any(var_id(a) in tainted for a in sub["outvars"]):
                    out_taint = True
            if out_taint:
                for atom in eqn["outvars"]:
                    if var_id(atom):
                        tainted.add(var_id(atom))

    visit(jaxpr)
    return tainted


def input_ids(trace: Trace, *names: str) -> set[str]:
    """Var ids of the top-level inputs that come from the named arguments."""
    out = set()
    for atom, arg in zip(trace.jaxpr["invars"], trace.input_names):
        root = re.split(r"[\[.]", arg, maxsplit=1)[0]
        if root in names and var_id(atom):
            out.add(var_id(atom))
    return out


def line_hint(ref: EqnRef) -> str:
    """`` (jaxpr line 12, your line 7)`` or as much of it as is known."""
    bits = []
    if ref.eqn.get("line"):
        bits.append(f"jaxpr line {ref.eqn['line']}")
    if ref.eqn.get("source_line"):
        bits.append(f"your line {ref.eqn['source_line']}")
    return f" ({', '.join(bits)})" if bits else ""


CheckFn = Callable[[Trace], CheckResult]

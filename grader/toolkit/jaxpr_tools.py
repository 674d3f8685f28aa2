"""Reading the traced program: walking equations, autodiff's marks, data flow.

The marks autodiff leaves in name stacks (``jvp(...)``, ``transpose(jvp(...))``) and the ``api`` markers are
written in the learner's process: any code can write them. Checks use them to word messages, to draw the
structure picture, and to refuse (where they show a backward pass, it must be what the answer comes from),
never to accept: whether autodiff was called is read from the source (``Trace.source``, ``source.py``).

The child sends each traced program as plain data (see ``grader/learner/child.py``): a jaxpr is
``{"invars", "constvars", "outvars", "eqns"}`` and an equation is ``{"primitive", "invars", "outvars",
"params", "name_stack", "source_line", "line", "subjaxprs"}`` (plus ``"api"``: the JAX entry points that
were running when it was made, and ``"api_all"`` when one ran inside itself, see ``EqnRef.api_chain``). A
primitive that is not JAX's own arrives as ``foreign:<name>``, so no check mistakes a look-alike for
``scan``. Requirement checks in ``problems/*/checks.py`` take a ``Trace``
and return a ``CheckResult`` built from these helpers, ``grader/toolkit/dataflow.py`` (exact, linear data flow) and
``grader/toolkit/carries.py`` (whether a structure carries the answer).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from grader.toolkit.dataflow import Flow, Node, node, scope_of
from grader.toolkit.source import SourceFacts
from grader.records import Evidence

# Primitive names drift across JAX versions; match every spelling we know.
SCAN = {"scan"}
CHECKPOINT = {"remat2", "checkpoint", "remat", "remat_call"}
CALL = {"jit", "pjit", "closed_call", "core_call", "xla_call", "custom_jvp_call", "custom_vjp_call",
        "custom_vjp_call_jaxpr", "custom_lin"}
MATMUL = {"dot_general"}
JIT = {"jit", "pjit", "xla_call"}
LOOPS = {"scan", "while"}
HOST_CALLBACKS = {"pure_callback", "io_callback", "callback", "host_callback_call", "outside_call",
                  "buffer_callback", "ffi_call"}
"""Primitives that hand values to Python (or to foreign code) on the host and take its results back:
``jax.experimental.buffer_callback`` writes its outputs from Python, ``jax.ffi.ffi_call`` runs whatever was
registered under its name (``jax.debug.print``'s ``debug_print``/``debug_callback`` return nothing, so they
never feed a result)."""

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
    output_names: list[str] = field(default_factory=list)
    """The top-level outvars' paths in the returned pytree, e.g. ``["grads.b1", ..., "loss"]``."""
    probes: dict[str, Any] = field(default_factory=dict)
    """The child's counterfactual probes on this program (``grader/learner/counterfactual.py``): ``{"targets":
    [{"key", "kind", "paths", "label", "change", "scale"}], "skipped"}`` or ``{"error": why}``."""
    step_reads: dict[str, Any] = field(default_factory=dict)
    """For problems that ask (``step_influence``): ``{"reads": {scan path: [[step j reads block b] per step]
    per block]}, "blocks": n}`` or ``{"error": why}``; empty when not measured."""
    source: SourceFacts = field(default_factory=SourceFacts, repr=False, compare=False)
    """What the submitted source says (``grader/toolkit/source.py``): the public JAX transformations it calls,
    with their lines and where they sit. Read on the trusted side from the text the learner submitted."""
    tpu: dict[str, Any] | None = None
    """A Pallas problem's TPU v5e compile record (``grader/verifier/tpu_compile.py``), set on the trusted side."""
    experiments: dict[str, Any] = field(default_factory=dict)
    """The problem's experiments on this program (``problems/<slug>/experiments.py``, run by the verifier on
    the rebuilt program with inputs the learner's process never saw: ``grader/verifier/experiments.py``), by
    name; ``{}`` when the problem declares none or no case of this shape was probed."""
    partitioned: dict[str, Any] | None = None
    """How XLA partitioned this program over the grader's devices (``grader/verifier/partitioned.py``, read
    with ``grader/toolkit/sharding.py``), set by the verifier; None without it."""
    siblings: list["Trace"] = field(default_factory=list, repr=False, compare=False)
    """Every traced program of the same submission, this one included (one per distinct input shape), for
    checks that compare programs across shapes: a Python loop over n positions traces a program that grows
    with n, a vectorised one does not (see ``size``)."""

    @functools.cached_property
    def flow(self) -> Flow:
        return Flow(self.jaxpr)

    @functools.cached_property
    def eqn_at(self) -> dict[str, EqnRef]:
        """Every equation by path."""
        return {r.path: r for r in iter_eqns(self.jaxpr)}

    def inputs(self, *names: str) -> list[Node]:
        """Nodes of the top-level inputs that come from the named arguments (all of an argument's leaves)."""
        out = []
        for node_, arg in zip(self.flow.inputs, self.input_names):
            if re.split(r"[\[.]", arg, maxsplit=1)[0] in names and node_ is not None:
                out.append(node_)
        return out

    def output_index(self, name: str) -> list[int]:
        """Indices of the outputs named ``name`` or under it (``grads`` -> every ``grads.*`` leaf)."""
        return [k for k, n in enumerate(self.output_names)
                if n == name or n.startswith(name + ".") or n.startswith(name + "[")]


@dataclass
class CheckResult:
    passed: bool
    message: str
    evidence: list[Evidence] = field(default_factory=list)
    checked: bool = True
    """False: the grader could not check this here (see ``RequirementResult.checked``)."""


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

    @property
    def scope(self) -> str:
        return scope_of(self.path)

    @property
    def out_nodes(self) -> list[Node]:
        """Data-flow nodes of the equation's results (``grader/toolkit/dataflow.py``)."""
        return [n for n in (node(self.scope, a) for a in self.eqn["outvars"]) if n is not None]

    @property
    def in_nodes(self) -> list[Node]:
        return [n for n in (node(self.scope, a) for a in self.eqn["invars"]) if n is not None]

    @property
    def api(self) -> list[str]:
        """JAX entry points running when the equation was made, outermost first (``value_and_grad``...).

        ``jax.jit`` caches what it traced, so an equation inside a ``jit`` sub-program may have been made
        in an earlier context: inside one, the outermost ``jit`` equation's markers are the ones that hold."""
        chain_ = self.ancestors + (self,)
        outer = next((a for a in chain_ if a.primitive in JIT), self)
        return list(outer.eqn.get("api", ()))

    @property
    def api_chain(self) -> list[str]:
        """Every JAX entry point around the equation, outermost first, with repeats: those around each
        enclosing equation, then its own (JAX roots a sub-program's tracebacks at the sub-program, so each
        equation's own markers say only what ran inside the ``jit``, scan body or branch that holds it).
        ``jax.vmap(jax.vmap(f))`` gives ``["vmap", "vmap"]`` whether the vmaps are inside a ``jit``, around
        one, or split between the two; a cached ``jit`` body keeps its own markers wherever it is called."""
        out: list[str] = []
        for a in self.ancestors + (self,):
            out.extend(a.eqn.get("api_all", a.eqn.get("api", ())))
        return out

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


def size(jaxpr: dict[str, Any]) -> int:
    """The number of equations of a traced program, those of its sub-programs included (a loop's body
    counted once, however many steps it runs)."""
    return sum(1 for _ in iter_eqns(jaxpr))


def growth(trace: "Trace", dim: Callable[["Trace"], int | None]) -> tuple[int, int, int, int] | None:
    """``(small, equations, large, equations)`` when the submission's programs grow by at least one equation
    per unit of ``dim`` (a size read off each trace's arguments, ``None`` to leave a trace out) between its
    smallest and largest value: a Python loop over that dimension unrolls into the program, a vectorised
    computation does not. ``None`` when fewer than two values were traced or the program does not grow."""
    sizes: dict[int, int] = {}
    for t in trace.siblings or [trace]:
        d = dim(t)
        if d is not None:
            sizes[d] = max(sizes.get(d, 0), size(t.jaxpr))
    if len(sizes) < 2:
        return None
    small, large = min(sizes), max(sizes)
    if sizes[large] - sizes[small] >= large - small:
        return small, sizes[small], large, sizes[large]
    return None


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
    """Marked by forward-mode autodiff (a mark the learner's process writes: messages and refusals only)."""
    return bool(_FORWARD.search(stack))


def is_backward_autodiff(stack: str) -> bool:
    """Autodiff marks the equations of a backward pass with ``transpose(jvp(...))`` (a mark the learner's
    process writes: messages and refusals only)."""
    return bool(_BACKWARD.search(stack))


def is_differentiated(ref: EqnRef) -> bool:
    stack = ref.full_name_stack
    return is_forward_autodiff(stack) or is_backward_autodiff(stack) or ref.params.get("differentiated") is True


def var_id(atom: dict[str, Any]) -> str | None:
    return atom.get("id")


def chain(stack: str) -> list[str]:
    """The autodiff transformations of a name stack, outermost first: ``["jvp", "transpose", "jvp"]``."""
    return _TOKENS.findall(stack)


_TOKENS = re.compile(r"(?<![A-Za-z0-9_])(jvp|transpose)\(")


def from_inputs(trace: Trace, *names: str) -> set[Node]:
    """Every node whose value depends on the named arguments (exact, through every sub-program)."""
    return trace.flow.reach(trace.inputs(*names))


def depends_on(ref: EqnRef, nodes: set[Node]) -> bool:
    """Whether any operand of ``ref`` is among ``nodes``."""
    return any(n in nodes for n in ref.in_nodes)


def line_hint(ref: EqnRef) -> str:
    """`` (your line 7, jaxpr line 12)`` or as much of it as is known: the learner's own line first."""
    bits = []
    if ref.eqn.get("source_line"):
        bits.append(f"your line {ref.eqn['source_line']}")
    if ref.eqn.get("line"):
        bits.append(f"jaxpr line {ref.eqn['line']}")
    return f" ({', '.join(bits)})" if bits else ""


CheckFn = Callable[[Trace], CheckResult]


def opaque_sources(trace: Trace) -> list[EqnRef]:
    """Host callbacks (``HOST_CALLBACKS``) and primitives the submission defined itself (``foreign:<name>``)
    whose results flow into the returned values: work the grader cannot see. One backward pass over the data
    flow, whatever their number."""
    refs = [r for r in iter_eqns(trace.jaxpr)
            if r.primitive in HOST_CALLBACKS or r.primitive.startswith("foreign:")]
    if not refs:
        return []
    feeding = trace.flow.sources_of(trace.flow.outputs)
    return [r for r in refs if any(n in feeding for n in r.out_nodes)]


_NAME_PART = re.compile(r"\[(-?\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\.([^.\[]+)|^([^.\[]+)")


def name_path(name: str) -> tuple[str | int, ...]:
    """An input's or output's pytree path as a tuple: ``state['mu'][0]['w']`` (``Trace.input_names``) and
    ``state.mu[0].w`` (``Trace.output_names``) are both ``("state", "mu", 0, "w")``."""
    parts: list[str | int] = []
    for index, quoted, dotted, first in _NAME_PART.findall(name):
        parts.append(int(index) if index else quoted or dotted or first)
    return tuple(parts)


def input_ids(trace: Trace, *names: str) -> set[str]:
    """Var ids of the top-level inputs that come from the named arguments (prefer ``Trace.inputs``)."""
    return {n.split("|", 1)[1] for n in trace.inputs(*names)}


def tainted_vars(jaxpr: dict[str, Any], seeds: set[str]) -> set[str]:
    """Var ids (any sub-program) whose value depends on any of ``seeds`` (var ids), through every nested
    program; linear in the program's size (``grader/toolkit/dataflow.py``). Prefer ``from_inputs`` and
    ``Flow.reach``, which keep sub-program occurrences apart."""
    flow = Flow(jaxpr)
    by_id: dict[str, list[Node]] = {}
    for n in list(flow.edges) + list(flow.back):
        scope, _, vid = n.rpartition("|")
        if not vid.endswith(("eqn", "control", "in", "out")):
            by_id.setdefault(vid, []).append(n)
    start = [n for s in seeds for n in by_id.get(s, ())]
    return {n.rpartition("|")[2] for n in flow.reach(start)} | set(seeds)

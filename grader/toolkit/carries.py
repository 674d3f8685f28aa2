"""Whether a required structure carries the answer: the one helper every problem's checks call.

A structure (a ``scan``, a checkpointed region, the backward pass inside a scan body, ...) carries the
answer when two facts hold for the outputs it is responsible for:

1. **The outputs depend on it.** The child re-evaluated the traced program with the structure's results
   replaced by other values (``grader/learner/counterfactual.py``); every one of those outputs moved. A structure
   whose result is discarded, multiplied by zero, selected away by ``jnp.where``, or added and subtracted
   again leaves them where they were.
2. **Nothing computes them around it.** In the exact data flow of the program (``grader/toolkit/dataflow.py``), the
   named inputs reach those outputs only through the structure. An answer computed another way (by hand, by
   a Python loop, by full-batch autodiff) next to the structure is a path around it, even when the
   structure also contributes.

Checks ask ``carries(trace, scan_ref, outputs=["grads"], around_from=("x", "y"))`` and use the ``Carry``'s
``ok`` and ``message(...)``.

A probe that sees no movement is not yet proof. On a wrong answer the output can stay put for another reason:
an update that underflowed to zero, a count that the perturbation leaves the same, a clip or a comparison
that absorbs it. So an output that did not move is called ``still`` only when the data flow agrees that it
does not come from the structure alone: the structure's results never reach it (discarded), or the inputs
reach it by a path around the structure. When the data flow shows the opposite (the inputs the structure
reads reach that output only through it), the output is ``invisible``: the requirement is judged on the data
flow, and ``note`` says honestly that the probe could not see it on these inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from grader.toolkit.dataflow import Node, node
from grader.toolkit.jaxpr_tools import EqnRef, Trace, chain, iter_eqns
from grader.records import Evidence

MOVED_ATOL = 1e-6
MOVED_RTOL = 1e-5
"""An output moved when its largest change exceeds ``MOVED_ATOL + MOVED_RTOL * its largest magnitude``;
the probes change the structure's results by about half their own size, so a dependence that matters is
many orders of magnitude above this, and float32 rounding is below it."""

HEAVY = ("dot_general", "conv_general_dilated", "mul", "div", "add", "sub", "exp", "log", "tanh", "logistic",
         "reduce_sum", "reduce_max", "integer_pow", "pow", "select_n", "custom_jvp_call", "custom_vjp_call",
         "scan", "while", "cond")
"""Primitives worth pointing at on a path around a structure (reshapes and broadcasts are not)."""


@dataclass(frozen=True)
class Group:
    """Equations of one sub-program that autodiff made with one transformation chain, probed together."""

    key: str
    chain: str
    """``transpose>jvp`` (a backward pass), ``jvp`` (forward mode), ``jvp>transpose>jvp``..."""
    scope: str
    """The sub-program's path prefix, ``""`` for the top level, ``"6/jaxpr/"`` inside equation 6."""
    paths: tuple[str, ...]
    """The group's frontier: its equations whose results the rest of the program reads."""


def groups(trace: Trace, scope: str | None = None, within: EqnRef | None = None) -> list[Group]:
    """The autodiff groups of the traced program, as the child probes them (``counterfactual.select_targets``):
    for each sub-program, the equations made under one transformation chain, by their frontier. All of them,
    those of one sub-program ``scope``, or those anywhere inside ``within``."""
    out = []

    def walk(jaxpr: dict, prefix: str) -> None:
        chains: dict[str, list[int]] = {}
        for i, eqn in enumerate(jaxpr["eqns"]):
            c = ">".join(chain(eqn["name_stack"]))
            if c:
                chains.setdefault(c, []).append(i)
            for name, sub in eqn["subjaxprs"].items():
                walk(sub, f"{prefix}{i}/{name}/")
        for c in sorted(chains):
            members = set(chains[c])
            made = {a["id"]: i for i in members for a in jaxpr["eqns"][i]["outvars"] if "id" in a}
            used = {made[a["id"]] for j, eqn in enumerate(jaxpr["eqns"]) if j not in members
                    for a in eqn["invars"] if a.get("id") in made}
            used |= {made[a["id"]] for a in jaxpr["outvars"] if a.get("id") in made}
            if used and (scope is None or prefix == scope) and (within is None or prefix.startswith(within.path + "/")):
                out.append(Group(f"group:{prefix}#{c}", c, prefix, tuple(f"{prefix}{i}" for i in sorted(used))))

    walk(trace.jaxpr, "")
    return out


@dataclass
class Carry:
    """What the probes and the data flow say about one structure and some outputs."""

    what: str
    """The structure in words, for messages: ``the scan``."""
    outputs: list[str]
    """The outputs it should carry."""
    still: list[str] = field(default_factory=list)
    """Outputs that did not move when the structure's results were replaced."""
    around: list[str] = field(default_factory=list)
    """Outputs that the named inputs reach by a path around the structure."""
    around_evidence: list[Evidence] = field(default_factory=list)
    unknown: str = ""
    """Why the probe could not tell (empty when it could)."""
    where: str = ""
    """Where it is: `` (your line 21, jaxpr line 62)``."""
    measured: bool = True
    """False when this traced shape was not probed (each Submit probes a few shapes; see
    ``grader.grading.grade.probe_cases``): then only the data flow was checked here."""
    invisible: list[str] = field(default_factory=list)
    """Outputs that no perturbation moved, although the data flow shows them computed from the structure and
    the inputs it reads reach them by no other path: the probe could not see the dependence on these inputs
    (a wrong answer's underflow, a change absorbed by a count or a comparison). Not counted as ``still``."""
    discarded: bool = False
    """The ``still`` outputs are not reached by the structure's results at all in the data flow."""
    bypassed: bool = False
    """The inputs reach the ``still`` outputs by a path around the structure (also known when no inputs were
    named in ``around_from``: the inputs the structure reads are then followed)."""

    @property
    def ok(self) -> bool:
        return not self.unknown and not self.still and not self.around

    @property
    def note(self) -> str:
        """An honest sentence for a passing row when the probe could not see the dependence (empty
        otherwise): the row then rests on the data flow."""
        if not self.invisible:
            return ""
        names = _names(self.invisible)
        return (f" (On this input the grader could not see {names} move when it replaced the results of "
                f"{self.what} with other values, which a count, a comparison or a value that underflows to "
                f"zero can hide; the data flow shows {'it is' if len(self.invisible) == 1 else 'they are'} "
                "computed from it and by no path around it. If your numbers are wrong, the mistake is in "
                "the arithmetic, not in this structure.)")

    @property
    def decorative(self) -> bool:
        """Known, and no output it should carry depends on it at all."""
        return not self.unknown and bool(self.outputs) and len(self.still) == len(self.outputs)

    def message(self) -> str:
        """One or two sentences on what is wrong (empty when ``ok``)."""
        if self.unknown:
            return (f"The grader could not confirm that {self.what}{self.where} computes the answer: {self.unknown}. "
                    "Return values computed by it, with no tricks around it.")
        parts = []
        where = ""
        if self.around_evidence:
            e = self.around_evidence[0]
            bits = [b for b in (f"your line {e.source_line}" if e.source_line else "",
                                f"jaxpr line {e.jaxpr_line}" if e.jaxpr_line else "") if b]
            where = f" (for instance `{e.primitive}`{' at ' + ', '.join(bits) if bits else ''})"
        if self.still:
            names = _names(self.still)
            if self.decorative:
                if self.discarded:
                    how = ("its results never reach them: they are discarded, and the answer comes from "
                           "elsewhere")
                elif self.around or self.bypassed:
                    how = (f"they are computed by a path around it instead{where} (its result is multiplied by "
                           "zero, selected away, or added and subtracted again)")
                else:
                    how = ("they do not depend on it (its result is multiplied by zero, selected away, or added "
                           "and subtracted again)")
                parts.append(f"{_cap(self.what)}{self.where} is decorative: when the grader replaced its results "
                             f"with other values, {names} did not change at all, and {how}.")
                return " ".join(parts)
            parts.append(f"{_cap(self.what)}{self.where} does not compute {names}: replacing its results with "
                         f"other values left {'it' if len(self.still) == 1 else 'them'} unchanged.")
        if self.around:
            parts.append(f"{_names(self.around)} {'is' if len(self.around) == 1 else 'are'} also computed by a "
                         f"path that goes around {self.what}{'' if parts else self.where}{where}: the answer "
                         "must come from it, not from a computation beside it.")
        return " ".join(parts)


def carries(trace: Trace, target: EqnRef | Group, outputs: Iterable[str] | None = None,
            around_from: Iterable[str] = (), what: str | None = None) -> Carry:
    """Whether ``target`` (an equation, or a probed group) carries ``outputs`` (names or prefixes of the
    returned pytree's leaves; all outputs by default): they move when its results move, and, when
    ``around_from`` names arguments, those arguments reach them only through it."""
    if isinstance(target, EqnRef):
        key, paths, label = f"eqn:{target.path}", [target.path], what or f"the `{target.primitive}`"
    else:
        key, paths, label = target.key, list(target.paths), what or "that part of the program"
    index = _outputs(trace, outputs)
    carry = Carry(what=label, where=_where(trace, paths),
                  outputs=[trace.output_names[k] if k < len(trace.output_names) else f"output {k}" for k in index])
    result = _probe(trace, key) if trace.probes else None
    if result is None:  # not probed on this traced shape: other shapes' probes decide
        carry.measured = False
    elif isinstance(result, str):
        carry.unknown = result
    else:
        change, scale = result["change"], result["scale"]
        # An output with no finite non-zero value that did not move tells nothing: NaN stays NaN whatever
        # the structure computes (a wrong answer's overflow, say), so that output is left to other shapes.
        blind = {k for k in index if k < len(change) and scale[k] == 0 and change[k] == 0}
        carry.still = [carry.outputs[n] for n, k in enumerate(index)
                       if k < len(change) and k not in blind and not change[k] > MOVED_ATOL + MOVED_RTOL * scale[k]]
        if blind and len(blind) == len(index):
            carry.measured = False
    sources = trace.inputs(*around_from) if around_from else []
    blocked = [n for p in paths if p in trace.eqn_at for n in trace.eqn_at[p].out_nodes]
    if carry.still:
        _sort_still(trace, carry, index, blocked, sources)
    if sources:
        reached = trace.flow.reach(sources, blocked)
        carry.around = [carry.outputs[n] for n, k in enumerate(index) if trace.flow.outputs[k] in reached]
        if carry.around:
            targets = [trace.flow.outputs[k] for n, k in enumerate(index) if carry.outputs[n] in carry.around]
            on_path = reached & trace.flow.sources_of(targets, blocked)
            carry.around_evidence = _path_evidence(trace, on_path)
    return carry


def _sort_still(trace: Trace, carry: Carry, index: list[int], blocked: list[Node], sources: list[Node]) -> None:
    """Keep as ``still`` only the unmoved outputs that the data flow does not tie to the structure alone: those
    its results never reach (discarded), and those the inputs reach by a path around it (``sources``, or
    when none are named, the inputs the structure itself reads). The others move to ``invisible``."""
    flow = trace.flow
    from_structure = flow.reach(blocked)
    if not sources:
        sources = [n for n in flow.sources_of(blocked) if n in set(flow.inputs)]
    around = flow.reach(sources, blocked) if sources else set()
    named = {carry.outputs[n]: flow.outputs[k] for n, k in enumerate(index)}
    keep, hidden = [], []
    for name in carry.still:
        out = named[name]
        (hidden if sources and out in from_structure and out not in around else keep).append(name)
    carry.still, carry.invisible = keep, hidden
    carry.discarded = bool(keep) and not any(named[name] in from_structure for name in keep)
    carry.bypassed = any(named[name] in around for name in keep)


def paths_around(trace: Trace, blocked: Iterable[EqnRef], sources: Iterable[Node | None],
                 outputs: Iterable[str] | None = None, also: Iterable[Node] = ()) -> tuple[list[str], list[Evidence]]:
    """The data-flow half of ``carries`` for several structures at once and for any input nodes (one leaf of
    a pytree argument, say): the names of the ``outputs`` (all by default) that ``sources`` reach by a path
    entering none of the ``blocked`` equations' results (nor the nodes ``also`` names), and the equations on
    such paths, the most telling first."""
    stop = [n for ref in blocked for n in ref.out_nodes] + list(also)
    reached = trace.flow.reach(sources, stop)
    index = _outputs(trace, outputs)
    hit = [k for k in index if trace.flow.outputs[k] in reached]
    names = [trace.output_names[k] if k < len(trace.output_names) else f"output {k}" for k in hit]
    if not hit:
        return [], []
    on_path = reached & trace.flow.sources_of([trace.flow.outputs[k] for k in hit], stop)
    return names, _path_evidence(trace, on_path)


def own_scale(trace: Trace, target: EqnRef | Group) -> float | None:
    """The largest magnitude among ``target``'s own results in the unperturbed run, as the child measured it
    (``None`` when not measured: this shape was not probed, or the probes were compiled). For a structure
    of a backward pass, 0.0 means autodiff handed it a zero cotangent: its forward value was multiplied by
    zero, selected away or cancelled, so it adds nothing to the gradients even though replacing its results
    moves them."""
    key = f"eqn:{target.path}" if isinstance(target, EqnRef) else target.key
    result = _probe(trace, key) if trace.probes else None
    if not isinstance(result, dict) or "own_scale" not in result:
        return None
    return float(result["own_scale"])


def _outputs(trace: Trace, outputs: Iterable[str] | None) -> list[int]:
    if outputs is None:
        return list(range(len(trace.flow.outputs)))
    index: list[int] = []
    for name in outputs:
        index += [k for k in trace.output_index(name) if k not in index]
    return index


def _probe(trace: Trace, key: str) -> dict | str:
    """The probe's result, or why there is none."""
    if "error" in trace.probes:
        return str(trace.probes["error"])
    for t in trace.probes.get("targets", []):
        if t.get("key") == key:
            if "error" in t:
                return f"re-running the program with it replaced failed ({t['error']})"
            return t
    if trace.probes.get("skipped"):
        return "the program has more structures than the grader probes"
    return "it was not among the parts of the program the grader could re-run"


def _where(trace: Trace, paths: list[str]) -> str:
    refs = [trace.eqn_at[p] for p in paths if p in trace.eqn_at]
    first = next((r for r in refs if r.eqn.get("line") or r.eqn.get("source_line")), None)
    if first is None:
        return ""
    bits = [b for b in (f"your line {first.eqn['source_line']}" if first.eqn.get("source_line") else "",
                        f"jaxpr line {first.eqn['line']}" if first.eqn.get("line") else "") if b]
    return f" ({', '.join(bits)})"


def _path_evidence(trace: Trace, on_path: set[Node]) -> list[Evidence]:
    """Equations on a path around a structure, the most telling first."""
    found = []
    for ref in iter_eqns(trace.jaxpr):
        outs = ref.out_nodes
        if outs and any(o in on_path for o in outs) and ref.primitive.split(":")[-1] in HEAVY:
            found.append(ref)
    found.sort(key=lambda r: (HEAVY.index(r.primitive.split(":")[-1]) if r.primitive in HEAVY else 99,
                              r.eqn.get("line") or 0))
    return [r.evidence("computes the answer around the required structure") for r in found[:4]]


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["Carry", "Group", "carries", "groups", "chain", "node", "own_scale", "paths_around"]

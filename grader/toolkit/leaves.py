"""Which place in the input pytrees each returned leaf is computed from: the checks of the pytree problems.

`jax.tree.map` leaves no equation of its own. What it leaves is a program in which every returned leaf is
computed from the input leaves at its own place in the trees (``params.layers[0].w`` from
``grads.layers[0].w`` and ``velocity.layers[0].w``). ``match_leaves`` establishes that exactly, at the
granularity of arrays: the input leaves are labelled with their place (``Flow.origins``), so a returned
leaf computed from an array that holds values of another place (a concatenation of all leaves, even where
the slice taken back holds only its own values; a sum over leaves, even multiplied by zero) is reported.
``host_callback`` is the check, shared by these problems, that no work the grader cannot see feeds the
result.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from grader.toolkit.dataflow import MIXED
from grader.toolkit.jaxpr_tools import HOST_CALLBACKS, CheckResult, EqnRef, Trace, line_hint, name_path, opaque_sources
from grader.records import Evidence


def dotted(path: tuple) -> str:
    """``("params", "layers", 0, "w")`` -> ``params.layers[0].w``, as the returned values are named."""
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def place_labels(trace: Trace, trees: tuple[str, ...]) -> dict:
    """{input node: its place (the path below the argument)} for the leaves of the arguments ``trees``."""
    return {node: name_path(name)[1:] for node, name in zip(trace.flow.inputs, trace.input_names)
            if node is not None and name_path(name)[:1] and name_path(name)[0] in trees}


def meeting_point(trace: Trace, found: dict) -> EqnRef | None:
    """Where leaves of different places first meet: the first equation with a result of MIXED origin."""
    for ref in trace.eqn_at.values():
        if any(found.get(n) == MIXED for n in ref.out_nodes):
            return ref
    return None


@dataclass
class LeafMatch:
    """The returned leaves of ``returned`` trees, matched with the input leaves of ``trees`` by place."""

    trace: Trace
    trees: tuple[str, ...]
    found: dict
    """{node: its place, or MIXED} (``Flow.origins`` of the input leaves' places)."""
    checked: int = 0
    """Returned leaves at a place the input trees have."""
    elsewhere: int = 0
    """Returned leaves at places the input trees do not have (the test cases report the structure)."""
    wrong: list[tuple[str, object]] = field(default_factory=list)
    """(name, node) of the returned leaves computed from values of another place."""
    made: list[Evidence] = field(default_factory=list)
    """Where the first few checked leaves are computed."""

    def others(self, name: str, node: object) -> list[str]:
        """The input leaves at other places that the returned leaf ``name`` is computed from, dotted."""
        sources = self.trace.flow.sources_of([node])
        place = name_path(name)[1:]
        return sorted({dotted(name_path(n)) for n, inp in zip(self.trace.input_names, self.trace.flow.inputs)
                       if inp in sources and name_path(n)[:1] and name_path(n)[0] in self.trees
                       and name_path(n)[1:] != place})

    def meeting_point(self) -> EqnRef | None:
        return meeting_point(self.trace, self.found)


def match_leaves(trace: Trace, trees: tuple[str, ...], returned: tuple[str, ...]) -> LeafMatch:
    """Match each returned leaf of the trees ``returned`` with the leaves at its place in ``trees``."""
    labels = place_labels(trace, trees)
    places = set(labels.values())
    match = LeafMatch(trace, trees, trace.flow.origins(labels))
    for name, node in zip(trace.output_names, trace.flow.outputs):
        path = name_path(name)
        if not path or path[0] not in returned:
            continue
        if path[1:] not in places:
            match.elsewhere += 1
            continue
        match.checked += 1
        if node in trace.flow.made_by and len(match.made) < 4:
            match.made.append(trace.eqn_at[trace.flow.made_by[node][0]].evidence(f"computes `{name}`"))
        if match.found.get(node) not in (None, path[1:]):
            match.wrong.append((name, node))
    return match


def shown(names: list[str], most: int = 4) -> str:
    """``a``, ``b``, ... (at most ``most``), in code spans."""
    return ", ".join(f"`{n}`" for n in names[:most]) + (", ..." if len(names) > most else "")


def host_callback(trace: Trace, ok: str, leaves: str, fix: str, into: list | None = None,
                  into_name: str = "the returned values") -> CheckResult:
    """No host callback and no primitive of the submission's own feeds the result. ``ok``: the sentence when
    none does; ``leaves``: what leaves the compiled program with a callback; ``fix``: what to write instead;
    ``into``: the nodes a problem's rule is about (a decision's test, say) when it is not every returned
    value, named ``into_name``: only callbacks whose results reach one of them count."""
    found = opaque_sources(trace)
    if found and into is not None:
        feeding = trace.flow.sources_of(into)
        found = [r for r in found if any(n in feeding for n in r.out_nodes)]
    if not found:
        return CheckResult(True, ok)
    ref = found[0]
    if ref.primitive.startswith("foreign:") and ref.primitive[8:] not in HOST_CALLBACKS:
        what = (f"`{ref.primitive[8:]}`{line_hint(ref)} is a primitive your code defined itself, not one of JAX's, "
                f"and its results flow into {into_name}; the grader cannot see what it computes.")
    else:
        what = (f"`{ref.primitive.split(':')[-1]}`{line_hint(ref)} hands values to Python on the host, and its "
                f"results flow into {into_name}: {leaves}.")
    return CheckResult(False, f"{what} {fix}", [r.evidence("feeds the result from outside JAX") for r in found[:4]])

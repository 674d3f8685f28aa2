"""The picture of a traced program's structure: its regions (``Report.structure``) as boxes inside boxes,
drawn with Graphviz (``st.graphviz_chart``), and each requirement's evidence as a small green (holds) or red
(fails) tag in the region where its equation sits."""
from __future__ import annotations

from grader.records import Region, RequirementResult
from grader.toolkit.structure import locate

PALETTE = {  # kind -> (light fill, dark fill)
    "program": ("#ffffff00", "#00000000"),
    "jit": ("#e7f0ff", "#1d2b45"), "call": ("#eeeeee", "#2c2c2c"),
    "scan": ("#f1e8ff", "#34224d"), "while": ("#f1e8ff", "#34224d"), "cond": ("#e3f6f3", "#143b36"),
    "part": ("#fafafa", "#242424"),
    "checkpoint": ("#fff0df", "#4a3016"), "custom_vjp": ("#ffe8f1", "#4a1a2d"), "custom_jvp": ("#ffe8f1", "#4a1a2d"),
    "vmap": ("#e6f7e6", "#17381a"), "forward": ("#e8f4fb", "#15303f"), "backward": ("#fdecea", "#43201d"),
}
PASS, FAIL = "#2f9e44", "#e03131"


def _q(text: str) -> str:
    """A DOT string literal: quotes and backslashes escaped, line breaks as DOT's."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def evidence_marks(root: Region, requirements: list[RequirementResult]) -> dict[int, list[tuple[str, bool]]]:
    """id(region) -> (requirement id, holds) for the innermost region of each piece of evidence."""
    out: dict[int, list[tuple[str, bool]]] = {}
    for req in requirements:
        for ev in req.evidence:
            region = locate(root, ev.path)[-1]
            tag = (req.id, req.passed or not req.decides)
            if tag not in out.setdefault(id(region), []):
                out[id(region)].append(tag)
    return out


def dot(root: Region, requirements: list[RequirementResult], *, dark: bool = False, title: str = "your program") -> str:
    """The DOT source of the picture; ``title`` names the outermost box (and whose lines the boxes cite)."""
    whose = "your" if title == "your program" else "the reference's"
    ink = "#e6e6e6" if dark else "#262730"
    edge = "#6b6b6b" if dark else "#9a9a9a"
    marks = evidence_marks(root, requirements)
    lines = ["digraph structure {",
             f'graph [rankdir=TB, bgcolor="transparent", fontname="sans-serif", fontsize=11, fontcolor="{ink}", '
             'nodesep=0.12, ranksep=0.14, margin=0.05];',
             f'node [shape=box, style="rounded,filled", fontname="sans-serif", fontsize=10, fontcolor="{ink}", '
             f'color="{edge}", penwidth=0.8, margin="0.08,0.03", height=0.25];',
             "edge [style=invis];"]
    counter = [0]

    def new_id(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def summary(region: Region) -> str:
        if not region.eqns:
            return "no equations of its own" if region.kind != "program" else "program"
        names = ", ".join(region.primitives[:3]) + (", …" if len(region.primitives) > 3 else "")
        return f"{region.eqns} equation{'s' if region.eqns != 1 else ''}: {names}"

    def fill(kind: str) -> str:
        light, dk = PALETTE.get(kind, PALETTE["call"])
        return dk if dark else light

    def emit(region: Region, out: list[str]) -> tuple[str, str]:
        """Draw ``region``; returns the ids of its first and last nodes, which invisible edges chain in program
        order so that boxes stack top to bottom."""
        tags = marks.get(id(region), [])
        # the learner's own line when JAX recorded one (the reference's picture: the reference's line); the
        # jaxpr's line otherwise, said as such: a bare "line 64" read as a line of a 25-line file
        src = getattr(region, "source_line", None)
        where = f" · {whose} line {src}" if src else (f" · jaxpr line {region.line}" if region.line else "")
        if not region.children and not tags and region.kind != "program":
            node = new_id("n")
            out.append(f'{node} [label={_q(region.label + where + chr(10) + summary(region))}, '
                       f'fillcolor="{fill(region.kind)}"];')
            return node, node
        cluster = new_id("cluster_")
        out.append(f"subgraph {cluster} {{")
        label = region.label if region.kind != "program" else title
        out.append(f'label={_q(label + where)}; labeljust=l; style="rounded,filled"; '
                   f'fillcolor="{fill(region.kind)}"; color="{edge}"; penwidth=0.8;')
        head = new_id("n")
        out.append(f'{head} [label={_q(summary(region))}, shape=plaintext, style="", fillcolor=none];')
        items = [(head, head)]
        for req_id, ok in tags:
            node = new_id("n")
            out.append(f'{node} [label={_q(("✓ " if ok else "✗ ") + req_id)}, fillcolor="{PASS if ok else FAIL}", '
                       'fontcolor="white", color="{0}"];'.format(PASS if ok else FAIL))
            items.append((node, node))
        for child in region.children:
            items.append(emit(child, out))
        out.append("}")
        for (_, last), (first, _) in zip(items, items[1:]):
            out.append(f"{last} -> {first};")
        return items[0][0], items[-1][1]

    body: list[str] = []
    emit(root, body)
    lines.extend(body)
    lines.append("}")
    return "\n".join(lines)

"""Exact data flow through a traced program, in time linear in its size.

``Flow`` turns a serialised jaxpr (see ``grader/toolkit/jaxpr_tools.py``) into one graph over every variable of
every sub-program: an equation's operands flow to its results, an operand of a ``scan``/``while``/``cond``/
``jit``/``checkpoint``/custom-derivative equation flows into the matching input of its sub-program, the
sub-program's results flow to the equation's results, and a loop's carried results flow back into the
next step. Each sub-program occurrence has its own variables (a sub-program shared by two equations is two
occurrences), so a value never leaks from one call to another. Building the graph and every query visit each
variable and edge at most once, so twenty nested scans cost twenty times one, not two to the twentieth.

It answers "which outputs can this data reach", "which outputs can it reach *without* passing through these
equations" (a path around a required structure) and "what does this value come from".
"""
from __future__ import annotations

from collections import deque
from typing import Any, Hashable, Iterable, Mapping

Node = str
"""A variable occurrence: ``"<scope>|<var id>"``; the scope is the path prefix of its sub-program."""

MIXED = "<mixed>"
"""``Flow.origins``: the label of a node that values of more than one label reach."""

POSITIONAL = {"jit", "pjit", "closed_call", "core_call", "remat2", "checkpoint", "remat", "custom_jvp_call",
              "custom_vjp_call", "custom_vjp_call_jaxpr", "shard_map", "xla_pmap", "xla_call", "custom_lin"}
"""Higher-order primitives whose sub-program takes the operands and gives the results one to one."""


def scope_of(path: str) -> str:
    """``"6/jaxpr/3"`` -> ``"6/jaxpr/"``; ``"3"`` -> ``""``."""
    return path.rsplit("/", 1)[0] + "/" if "/" in path else ""


def node(scope: str, atom: dict[str, Any]) -> Node | None:
    """The node of an atom (``None`` for a literal)."""
    vid = atom.get("id")
    return f"{scope}|{vid}" if vid is not None else None


class Flow:
    """The data-flow graph of one traced program (a serialised top-level jaxpr)."""

    def __init__(self, jaxpr: dict[str, Any]) -> None:
        self.edges: dict[Node, list[Node]] = {}
        self.back: dict[Node, list[Node]] = {}
        self.made_by: dict[Node, tuple[str, dict[str, Any]]] = {}
        """Node -> (equation path, equation) that produces it."""
        self.inputs = [node("", a) for a in jaxpr["invars"]]
        self.outputs = [node("", a) for a in jaxpr["outvars"]]
        self._build(jaxpr, "")

    def _edge(self, a: Node | None, b: Node | None) -> None:
        if a is None or b is None:
            return
        self.edges.setdefault(a, []).append(b)
        self.back.setdefault(b, []).append(a)

    def _build(self, jaxpr: dict[str, Any], scope: str) -> None:
        for i, eqn in enumerate(jaxpr["eqns"]):
            path = f"{scope}{i}"
            ins = [node(scope, a) for a in eqn["invars"]]
            outs = [node(scope, a) for a in eqn["outvars"]]
            for o in outs:
                if o is not None:
                    self.made_by[o] = (path, eqn)
            subs = eqn["subjaxprs"]
            if not subs:
                hub = f"{path}|eqn"  # one hub per equation: m + n edges, not m * n
                for a in ins:
                    self._edge(a, hub)
                for o in outs:
                    self._edge(hub, o)
                continue
            self._higher_order(eqn, path, ins, outs)

    def _higher_order(self, eqn: dict[str, Any], path: str, ins: list, outs: list) -> None:
        prim, params, subs = eqn["primitive"], eqn["params"], eqn["subjaxprs"]
        inner = {name: f"{path}/{name}/" for name in subs}
        for name, sub in subs.items():
            self._build(sub, inner[name])

        def sub_in(name: str) -> list:
            return [node(inner[name], a) for a in subs[name]["invars"]]

        def sub_out(name: str) -> list:
            return [node(inner[name], a) for a in subs[name]["outvars"]]

        if prim == "scan" and "jaxpr" in subs:
            nc, ncarry = int(params.get("num_consts") or 0), int(params.get("num_carry") or 0)
            body_in, body_out = sub_in("jaxpr"), sub_out("jaxpr")
            for a, b in zip(ins, body_in):
                self._edge(a, b)
            for b, o in zip(body_out, outs):
                self._edge(b, o)
            for k in range(ncarry):  # the next step's carry
                self._edge(body_out[k], body_in[nc + k])
            return
        if prim == "while" and "body_jaxpr" in subs and "cond_jaxpr" in subs:
            cn, bn = int(params.get("cond_nconsts") or 0), int(params.get("body_nconsts") or 0)
            cond_in, body_in, body_out = sub_in("cond_jaxpr"), sub_in("body_jaxpr"), sub_out("body_jaxpr")
            carry = ins[cn + bn:]
            for a, b in zip(ins[:cn], cond_in[:cn]):
                self._edge(a, b)
            for a, b in zip(ins[cn:cn + bn], body_in[:bn]):
                self._edge(a, b)
            for k, a in enumerate(carry):
                self._edge(a, body_in[bn + k])
                self._edge(a, cond_in[cn + k])
                self._edge(a, outs[k])  # zero steps: the carry comes out as it went in
                self._edge(body_out[k], body_in[bn + k])
                self._edge(body_out[k], cond_in[cn + k])
                self._edge(body_out[k], outs[k])
            hub = f"{path}|control"  # the condition decides every result
            for c in sub_out("cond_jaxpr"):
                self._edge(c, hub)
            for o in outs:
                self._edge(hub, o)
            return
        if prim == "cond":
            index, ops = ins[:1], ins[1:]
            hub = f"{path}|control"
            self._edge(index[0] if index else None, hub)
            for o in outs:
                self._edge(hub, o)
            for name in subs:
                for a, b in zip(ops, sub_in(name)):
                    self._edge(a, b)
                for b, o in zip(sub_out(name), outs):
                    self._edge(b, o)
            return
        positional = prim in POSITIONAL and len(subs) == 1
        for name in subs:
            s_in, s_out = sub_in(name), sub_out(name)
            if positional and len(s_in) == len(ins) and len(s_out) == len(outs):
                for a, b in zip(ins, s_in):
                    self._edge(a, b)
                for b, o in zip(s_out, outs):
                    self._edge(b, o)
                continue
            hub_in, hub_out = f"{path}/{name}|in", f"{path}/{name}|out"  # unknown layout: all to all
            for a in ins:
                self._edge(a, hub_in)
            for b in s_in:
                self._edge(hub_in, b)
            for b in s_out:
                self._edge(b, hub_out)
            for o in outs:
                self._edge(hub_out, o)
        if not positional:  # an unknown primitive may also compute outside its sub-programs
            hub = f"{path}|eqn"
            for a in ins:
                self._edge(a, hub)
            for o in outs:
                self._edge(hub, o)

    # ------------------------------------------------------------------------------------------------
    # Queries

    def reach(self, sources: Iterable[Node | None], blocked: Iterable[Node | None] = ()) -> set[Node]:
        """Every node reachable from ``sources`` by paths that enter no node in ``blocked``."""
        stop = {b for b in blocked if b is not None}
        seen = {s for s in sources if s is not None and s not in stop}
        queue = deque(seen)
        while queue:
            for nxt in self.edges.get(queue.popleft(), ()):
                if nxt not in seen and nxt not in stop:
                    seen.add(nxt)
                    queue.append(nxt)
        return seen

    def sources_of(self, targets: Iterable[Node | None], blocked: Iterable[Node | None] = ()) -> set[Node]:
        """Every node from which a node of ``targets`` can be reached without entering ``blocked``."""
        stop = {b for b in blocked if b is not None}
        seen = {t for t in targets if t is not None and t not in stop}
        queue = deque(seen)
        while queue:
            for prev in self.back.get(queue.popleft(), ()):
                if prev not in seen and prev not in stop:
                    seen.add(prev)
                    queue.append(prev)
        return seen

    def outputs_reached(self, sources: Iterable[Node | None], blocked: Iterable[Node | None] = ()) -> list[int]:
        """Indices of the program's outputs that ``sources`` reach without entering ``blocked``."""
        seen = self.reach(sources, blocked)
        return [k for k, o in enumerate(self.outputs) if o in seen]

    def origins(self, labels: Mapping[Node | None, Hashable],
                blocked: Iterable[Node | None] = ()) -> dict[Node, Hashable]:
        """Which labelled sources reach each node, without entering ``blocked``: the one label that reaches
        it, or ``MIXED`` when sources of different labels do (a node no labelled source reaches is left
        out). Label the leaves of a pytree by their place in it, and a result labelled with another place,
        or ``MIXED``, was computed from leaves of another place. Each node's label changes at most twice
        (none, one label, ``MIXED``), so this is linear in the size of the graph, whatever the labels."""
        stop = {b for b in blocked if b is not None}
        found: dict[Node, Hashable] = {}
        queue: deque[Node] = deque()
        for n, label in labels.items():
            if n is None or n in stop:
                continue
            merged = label if found.get(n, label) == label else MIXED
            if found.get(n) != merged:
                found[n] = merged
                queue.append(n)
        while queue:
            current = queue.popleft()
            label = found[current]
            for nxt in self.edges.get(current, ()):
                if nxt in stop:
                    continue
                old = found.get(nxt)
                new = label if old is None or old == label else MIXED
                if new != old:
                    found[nxt] = new
                    queue.append(nxt)
        return found

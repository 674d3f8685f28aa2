"""The shape of a traced program as nested regions, for the app's picture of it.

Built in the parent from the structured program the child already sends (``grader/learner/child.py``): calls of
sub-programs (jit, scan, while, cond, checkpoint/remat, custom_vjp, custom_jvp) become regions holding their
sub-programs' regions, and runs of consecutive equations that a transformation produced (their name stack
says ``vmap(...)``, ``jvp(...)``, ``transpose(jvp(...))``) become regions too: the vmapped part, the forward
and the backward pass of autodiff. So "a scan whose body holds a forward and a backward pass" and "a
checkpoint inside the backward pass" are told apart at a glance.

One pass over the equations, with a cap on the number of regions, so a hostile program (thousands of nested
scans) costs the server no more than reading it. Everything drawn is the grader's words or identifier
characters; names a program chose are cut to those characters.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from grader.records import Region

MAX_REGIONS = 150
"""Regions kept per program; deeper or further ones are counted as plain equations of their parent."""

CALLS = {
    "jit": "jit", "pjit": "jit", "closed_call": "jit", "core_call": "jit", "xla_call": "jit",
    "scan": "scan", "while": "while", "cond": "cond",
    "remat2": "checkpoint", "checkpoint": "checkpoint", "remat": "checkpoint", "remat_call": "checkpoint",
    "custom_vjp_call": "custom_vjp", "custom_vjp_call_jaxpr": "custom_vjp",
    "custom_jvp_call": "custom_jvp", "custom_lin": "custom_vjp",
}
PART_WORDS = {"cond_jaxpr": "condition", "body_jaxpr": "body", "jaxpr": "body", "call_jaxpr": "body"}
TRANSFORMS = ("vmap", "jvp", "transpose")
_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
_IDENT = re.compile(r"[^A-Za-z0-9_.]")


def build(jaxpr: dict[str, Any], max_regions: int = MAX_REGIONS) -> Region:
    """The region tree of one structured program (``Trace.jaxpr``)."""
    root = Region(kind="program", label="program")
    budget = [max_regions]
    counts: dict[int, Counter] = {}
    _fill(root, jaxpr, "", budget, counts)
    _finish(root, counts)
    return root


def _fill(region: Region, jaxpr: dict[str, Any], prefix: str, budget: list[int],
          counts: dict[int, Counter]) -> None:
    run: tuple[tuple[str, ...], Region, int] | None = None
    for i, eqn in enumerate(jaxpr.get("eqns", [])):
        chain = transform_chain(eqn.get("name_stack", ""))
        parent = region
        if chain:
            if run is None or run[0] != chain:
                run = None
                if budget[0] > 0:
                    budget[0] -= 1
                    virtual = Region(kind=chain_kind(chain), label=chain_label(chain), path=f"{prefix}{i}", span=0,
                                     line=eqn.get("line"), source_line=eqn.get("source_line"))
                    region.children.append(virtual)
                    run = (chain, virtual, i)
            if run is not None:
                parent = run[1]
                parent.span = i - run[2] + 1
        else:
            run = None
        subs = eqn.get("subjaxprs") or {}
        if subs and budget[0] > 0:
            budget[0] -= 1
            call = Region(kind=CALLS.get(eqn["primitive"], "call"), label=call_label(eqn), path=f"{prefix}{i}",
                          line=eqn.get("line"), source_line=eqn.get("source_line"))
            parent.children.append(call)
            if len(subs) == 1:
                name, sub = next(iter(subs.items()))
                _fill(call, sub, f"{prefix}{i}/{name}/", budget, counts)
            else:
                for name, sub in subs.items():
                    part = Region(kind="part", label=part_label(name), path=f"{prefix}{i}/{name}/")
                    call.children.append(part)
                    _fill(part, sub, f"{prefix}{i}/{name}/", budget, counts)
        else:
            parent.eqns += 1
            counts.setdefault(id(parent), Counter())[str(eqn.get("primitive", "?"))[:40]] += 1
            if subs:  # over the cap: still count what is inside, without regions for it
                for sub in subs.values():
                    parent.eqns += _count(sub)


def _count(jaxpr: dict[str, Any]) -> int:
    """Equations in a program and all its sub-programs (iteratively: nesting may be deep)."""
    total, stack = 0, [jaxpr]
    while stack:
        for e in stack.pop().get("eqns", []):
            total += 1
            stack.extend((e.get("subjaxprs") or {}).values())
    return total


def _finish(region: Region, counts: dict[int, Counter]) -> None:
    region.primitives = [name for name, _ in counts.get(id(region), Counter()).most_common(5)]
    for child in region.children:
        _finish(child, counts)


def transform_chain(name_stack: str) -> tuple[str, ...]:
    """The transformations in a name stack, outermost first, as the picture names them: ``jvp`` under a
    ``transpose`` is part of the backward pass and dropped (``transpose(jvp(f))`` is just ``transpose``)."""
    out: list[str] = []
    under_transpose = False
    for token in _TOKEN.findall(name_stack or ""):
        if token not in TRANSFORMS:
            continue
        if token == "jvp" and under_transpose:
            continue
        under_transpose = under_transpose or token == "transpose"
        if not out or out[-1] != token:
            out.append(token)
    return tuple(out)


def chain_kind(chain: tuple[str, ...]) -> str:
    """``backward`` if any part is a transpose, else ``forward`` for a jvp, else ``vmap``."""
    return "backward" if "transpose" in chain else "forward" if "jvp" in chain else "vmap"


_CHAIN_WORDS = {"vmap": "vmapped", "jvp": "forward pass (jvp)", "transpose": "backward pass (transpose)"}


def chain_label(chain: tuple[str, ...]) -> str:
    return " of ".join(_CHAIN_WORDS[t] for t in chain)


def call_label(eqn: dict[str, Any]) -> str:
    """``scan · length 4 · reverse``, ``checkpoint · dots_saveable``, ``jit · softplus``..."""
    prim = str(eqn.get("primitive", "?"))
    kind = CALLS.get(prim, "call")
    params = eqn.get("params") or {}
    bits = [kind if kind != "call" else ident(prim)]
    if kind == "scan":
        if params.get("length") is not None:
            bits.append(f"length {params['length']}")
        if params.get("reverse") is True:
            bits.append("reverse")
    elif kind == "jit" and params.get("name"):
        bits.append(ident(params["name"]))
    elif kind == "checkpoint" and params.get("policy"):
        bits.append(ident(params["policy"]))
    return " · ".join(b for b in bits if b)


def part_label(name: str) -> str:
    m = re.fullmatch(r"branches\[(\d+)\]", name)
    if m:
        return f"branch {m.group(1)}"
    return PART_WORDS.get(name, ident(name))


def ident(text: Any, limit: int = 32) -> str:
    """Identifier characters only: what the program named itself is shown, but can carry no markup."""
    return _IDENT.sub("", str(text))[:limit]


def contains(region: Region, path: str, level_prefix: str) -> bool:
    """Whether the equation at ``path`` lies in ``region`` (whose own equations sit at ``level_prefix``)."""
    if region.kind == "program":
        return True
    if region.kind == "part":
        return path.startswith(region.path)
    if region.kind in ("vmap", "forward", "backward"):
        own = region.path[len(level_prefix):] if region.path.startswith(level_prefix) else "/"
        rest = path[len(level_prefix):] if path.startswith(level_prefix) else None
        if rest is None or "/" in own:
            return False
        head = rest.split("/", 1)[0]
        start = int(region.path[len(level_prefix):].split("/", 1)[0])
        return head.isdigit() and start <= int(head) < start + region.span
    return path == region.path or path.startswith(region.path + "/")


def locate(root: Region, path: str) -> list[Region]:
    """The regions holding the equation at ``path`` (as in ``Evidence.path``), outermost first."""
    chain = [root]
    prefix = ""
    region = root
    while True:
        nxt = None
        for child in region.children:
            if contains(child, path, prefix):
                nxt = child
                break
        if nxt is None:
            return chain
        chain.append(nxt)
        if nxt.path == path and nxt.kind not in ("vmap", "forward", "backward"):
            return chain  # the region's own equation (a scan, a checkpoint...)
        if nxt.kind == "part":
            prefix = nxt.path
        elif nxt.kind not in ("vmap", "forward", "backward"):
            subs = [c for c in nxt.children if c.kind == "part"]
            if not subs:  # one sub-program: its equations sit under "<path>/<name>/"
                rest = path[len(nxt.path) + 1:] if path.startswith(nxt.path + "/") else ""
                prefix = nxt.path + "/" + rest.split("/", 1)[0] + "/" if rest else prefix
        region = nxt

"""Where each axis of every value in a traced program comes from, and which inputs had their batch axis cut.

Data flow (``grader/toolkit/dataflow.py``) says *which* inputs a value depends on; this says *along which axes*. Every
axis of every value gets a set of labels: ``("arg", "x", 0)`` for axis 0 of the argument leaf ``x`` (any axis
it was computed along: a matrix product's batch axis carries the labels of both operands' batch axes), and
``("iota", path, d)`` for an axis along which an ``iota`` made by the program varies (a basis such as
``jnp.eye``, the one-hot rows a Jacobian pushes through a program), ``("const", path, d)`` for an axis of an
array the program captured as a constant (``np.eye``). An axis made by broadcasting has no label.

A check names the *batch axis* of some arguments (``{"x": 0, "y": 0}``). Cutting that axis, by slicing or
indexing it to fewer than its length, or by a loop that walks it (a ``scan`` over it, a ``dynamic_slice`` of
it in a loop body), adds the argument to the value's ``cut`` set, and every value computed from that value
keeps it. So a Python loop over examples (``x[n]``), ``lax.map``, a ``fori_loop`` with ``x[i]``, or picking
entry ``i`` of a batched result all leave ``cut`` values, while ``jax.vmap`` and hand-batched code (which
never take the examples apart) leave none; slicing another axis (a loop over query positions, ``q[:, t]``)
cuts nothing.

One pass over the program, each sub-program once (a loop body is read with the labels its inputs have on
entry), so the cost is linear in the program's size. Primitives without a rule give unlabelled results and
are listed in ``unknown``.
"""
from __future__ import annotations

import re
from typing import Any

from grader import pysource
from grader.toolkit.dataflow import POSITIONAL, Node, node
from grader.toolkit.jaxpr_tools import Trace

Label = tuple
Labels = tuple  # one frozenset of Label per axis

REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
              "argmax", "argmin"}
INDEXING = {"slice", "dynamic_slice", "gather", "split"}
"""Primitives that can take part of an axis (and so cut a batch axis)."""
STRUCTURAL = {"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "dot_general", "concatenate",
              "stack", "pad", "iota", "dynamic_update_slice", "scatter", "scatter-add", "scatter_add", "top_k",
              "rev", "select_and_scatter_add", "conv_general_dilated"} | REDUCTIONS | INDEXING


class Axes:
    """Axis labels and batch cuts of every value of one traced program (``Trace``)."""

    def __init__(self, trace: Trace, batch: dict[str, int]) -> None:
        self.batch = dict(batch)
        self.labels: dict[Node, Labels] = {}
        self.cut: dict[Node, frozenset[str]] = {}
        self.cuts_at: dict[str, frozenset[str]] = {}
        """Equation path -> arguments whose batch axis that equation cut."""
        self.unknown: list[str] = []
        """Paths of equations no rule covered (their results are unlabelled)."""
        self.batch_labels: dict[Label, str] = {}
        ins = []
        for atom, name in zip(trace.jaxpr["invars"], trace.input_names):
            root = re.split(r"[\[.]", name, maxsplit=1)[0]
            labels = tuple(frozenset({("arg", name, ax)}) for ax in range(len(atom["shape"])))
            if root in self.batch and self.batch[root] < len(labels):
                self.batch_labels[("arg", name, self.batch[root])] = root
            ins.append((labels, frozenset()))
        self._walk(trace.jaxpr, "", ins)

    # ------------------------------------------------------------------------------------------------
    # Queries

    def of(self, n: Node | None) -> Labels:
        return self.labels.get(n, ()) if n else ()

    def batch_roots(self, labels: Labels, axis: int | None = None) -> set[str]:
        """Arguments whose batch axis the given axes (one axis, or any) carry."""
        axes = labels if axis is None else labels[axis:axis + 1]
        return {self.batch_labels[lab] for ax in axes for lab in ax if lab in self.batch_labels}

    def roots(self, labels: Labels) -> set[str]:
        """Arguments any axis of which the given axes carry."""
        return {re.split(r"[\[.]", lab[1], maxsplit=1)[0] for ax in labels for lab in ax if lab[0] == "arg"}

    @staticmethod
    def basis_axes(labels: Labels) -> list[int]:
        """Axes labelled only by an ``iota`` or a captured constant (a basis such as ``jnp.eye`` or
        ``np.eye``, one-hot rows), by no argument's axis."""
        return [i for i, ax in enumerate(labels) if ax and all(lab[0] in ("iota", "const") for lab in ax)]

    @staticmethod
    def made_axes(labels: Labels, axis: int) -> bool:
        """Whether the axis carries the label of an ``iota`` or a captured constant: a mask or one-hot row
        made with ``arange``/``one_hot``/``eye`` (or NumPy's) runs along it."""
        return axis < len(labels) and any(lab[0] in ("iota", "const") for lab in labels[axis])

    # ------------------------------------------------------------------------------------------------
    # The walk

    def _get(self, scope: str, atom: dict) -> tuple[Labels, frozenset[str]]:
        n = node(scope, atom)
        if n is None or n not in self.labels:
            return tuple(frozenset() for _ in atom["shape"]), frozenset()
        return self.labels[n], self.cut[n]

    def _set(self, scope: str, atom: dict, value: tuple[Labels, frozenset[str]]) -> None:
        n = node(scope, atom)
        if n is not None:
            labels = tuple(value[0])
            if len(labels) != len(atom["shape"]):
                labels = tuple(frozenset() for _ in atom["shape"])
            self.labels[n], self.cut[n] = labels, value[1]

    def _walk(self, jaxpr: dict, scope: str, ins: list) -> list:
        for k, atom in enumerate(jaxpr.get("constvars", [])):  # arrays the program captured (NumPy constants)
            self._set(scope, atom, (tuple(frozenset({("const", f"{scope}{k}", ax)})
                                          for ax in range(len(atom["shape"]))), frozenset()))
        for atom, value in zip(jaxpr["invars"], ins):
            self._set(scope, atom, value)
        for i, eqn in enumerate(jaxpr["eqns"]):
            path = f"{scope}{i}"
            vals = [self._get(scope, a) for a in eqn["invars"]]
            try:
                outs = self._eqn(eqn, path, vals)
            except (ValueError, IndexError, KeyError, TypeError, SyntaxError):
                outs = None
            if outs is None:
                self.unknown.append(path)
                cut = frozenset().union(*(c for _, c in vals)) if vals else frozenset()
                outs = [(tuple(frozenset() for _ in a["shape"]), cut) for a in eqn["outvars"]]
            for atom, value in zip(eqn["outvars"], outs):
                self._set(scope, atom, value)
        return [self._get(scope, a) for a in jaxpr["outvars"]]

    def _eqn(self, eqn: dict, path: str, vals: list) -> list | None:
        prim, subs = eqn["primitive"], eqn["subjaxprs"]
        if subs:
            return self._higher_order(eqn, path, vals)
        labels = [v[0] for v in vals]
        cut = frozenset().union(*(v[1] for v in vals)) if vals else frozenset()
        in_shapes = [a["shape"] for a in eqn["invars"]]
        out_shapes = [a["shape"] for a in eqn["outvars"]]
        if prim.startswith("foreign:"):
            return None
        rule = _RULES.get(prim)
        if rule is not None:
            outs, newly = rule(eqn["params"], labels, in_shapes, out_shapes, path)
        elif prim not in STRUCTURAL and _elementwise(in_shapes, out_shapes):
            outs, newly = [_union_broadcast(labels, in_shapes, s) for s in out_shapes], []
        else:
            return None
        cut_now = frozenset(self.batch_labels[lab] for lab in newly if lab in self.batch_labels)
        if cut_now:
            self.cuts_at[path] = cut_now
        return [(o, cut | cut_now) for o in outs]

    def _higher_order(self, eqn: dict, path: str, vals: list) -> list | None:
        prim, params, subs = eqn["primitive"], eqn["params"], eqn["subjaxprs"]
        if prim in POSITIONAL and len(subs) == 1:
            name, sub = next(iter(subs.items()))
            if len(sub["invars"]) == len(vals) and len(sub["outvars"]) == len(eqn["outvars"]):
                return self._walk(sub, f"{path}/{name}/", vals)
            return None
        if prim == "scan" and "jaxpr" in subs:
            nc, ncarry = int(params.get("num_consts") or 0), int(params.get("num_carry") or 0)
            xs = []
            newly: set[str] = set()
            for labels, cut in vals[nc + ncarry:]:
                newly |= self.batch_roots(labels, 0) if labels else set()
                xs.append((labels[1:], cut))
            if newly:
                self.cuts_at[path] = frozenset(newly)
            body = self._walk(subs["jaxpr"], f"{path}/jaxpr/", vals[:nc + ncarry] +
                              [(lab, cut | frozenset(newly)) for lab, cut in xs])
            step_axis = frozenset().union(*(lab[0] for lab, _ in vals[nc + ncarry:] if lab))
            outs = [_merge(init, out) for init, out in zip(vals[nc:nc + ncarry], body[:ncarry])]
            outs += [((step_axis,) + lab, cut) for lab, cut in body[ncarry:]]
            return outs
        if prim == "while" and "body_jaxpr" in subs and "cond_jaxpr" in subs:
            cn, bn = int(params.get("cond_nconsts") or 0), int(params.get("body_nconsts") or 0)
            carry = vals[cn + bn:]
            self._walk(subs["cond_jaxpr"], f"{path}/cond_jaxpr/", vals[:cn] + carry)
            body = self._walk(subs["body_jaxpr"], f"{path}/body_jaxpr/", vals[cn:cn + bn] + carry)
            return [_merge(init, out) for init, out in zip(carry, body)]
        if prim == "cond":
            outs = None
            for name, sub in subs.items():
                got = self._walk(sub, f"{path}/{name}/", vals[1:])
                outs = got if outs is None else [_merge(a, b) for a, b in zip(outs, got)]
            return outs
        return None


# ----------------------------------------------------------------------------------------------------
# Rules: (params, operand labels, operand shapes, result shapes, path) -> (result labels, labels cut)

def param(text: Any) -> Any:
    """A serialised parameter as plain Python data: ``"(np.int64(2),)"`` -> ``(2,)``."""
    if not isinstance(text, str):
        return text
    return pysource.literal_eval(re.sub(r"np\.\w+\(([^()]*)\)", r"\1", text))


def _none(shape: list) -> Labels:
    return tuple(frozenset() for _ in shape)


def _merge(a: tuple, b: tuple) -> tuple:
    la, lb = a[0], b[0]
    if len(la) != len(lb):
        return lb, a[1] | b[1]
    return tuple(x | y for x, y in zip(la, lb)), a[1] | b[1]


def _elementwise(in_shapes: list, out_shapes: list) -> bool:
    if len(out_shapes) < 1 or any(len(s) != len(out_shapes[0]) for s in out_shapes):
        return False
    out = out_shapes[0]
    return all(len(s) == 0 or (len(s) == len(out) and all(a in (b, 1) for a, b in zip(s, out))) for s in in_shapes)


def _union_broadcast(labels: list, shapes: list, out: list) -> Labels:
    result = [set() for _ in out]
    for lab, shape in zip(labels, shapes):
        if len(shape) != len(out):
            continue
        for j, (a, b) in enumerate(zip(shape, out)):
            if a == b:
                result[j] |= lab[j]
    return tuple(frozenset(r) for r in result)


def _broadcast_in_dim(p, labels, shapes, outs, path):
    dims, out = param(p["broadcast_dimensions"]), outs[0]
    result = [frozenset()] * len(out)
    for i, d in enumerate(dims):
        if shapes[0][i] == out[d]:
            result[d] = labels[0][i]
    return [tuple(result)], []


def _reshape(p, labels, shapes, outs, path):
    return [reshape_labels(labels[0], shapes[0], outs[0])], []


def reshape_labels(labels: Labels, shape: list, out: list) -> Labels:
    """Labels after a reshape: axes that are merged or split share the union of their labels."""
    if list(shape) == list(out):
        return labels
    cin, cout = [1], [1]
    for s in shape:
        cin.append(cin[-1] * s)
    for s in out:
        cout.append(cout[-1] * s)
    common = sorted(set(cin) & set(cout))
    result = [set() for _ in out]

    def group(prefix: list, i: int) -> int:  # the group an axis of non-unit size falls in
        return max(k for k, c in enumerate(common) if c <= prefix[i])

    groups: dict[int, set] = {}
    unit_in: dict[int, list] = {}
    for i, s in enumerate(shape):
        g = group(cin, i)
        if s == 1:
            unit_in.setdefault(g, []).append(labels[i])
        else:
            groups.setdefault(g, set()).update(labels[i])
    for j, s in enumerate(out):
        g = group(cout, j)
        if s == 1:
            pending = unit_in.get(g, [])
            if pending:
                result[j] |= pending.pop(0)
        else:
            result[j] |= groups.get(g, set())
    leftover = [lab for units in unit_in.values() for lab in units]
    for lab in leftover:  # a unit axis that vanished: its labels go to a neighbouring axis
        target = next((j for j, s in enumerate(out) if s != 1), 0 if out else None)
        if target is not None:
            result[target] |= lab
    return tuple(frozenset(r) for r in result)


def _squeeze(p, labels, shapes, outs, path):
    dims = {d % len(shapes[0]) for d in param(p["dimensions"])}
    return [tuple(lab for i, lab in enumerate(labels[0]) if i not in dims)], []


def _expand_dims(p, labels, shapes, outs, path):
    return [reshape_labels(labels[0], shapes[0], outs[0])], []


def _transpose(p, labels, shapes, outs, path):
    return [tuple(labels[0][i] for i in param(p["permutation"]))], []


def _dot_general(p, labels, shapes, outs, path):
    (lc, rc), (lb, rb) = param(p["dimension_numbers"])
    left, right = labels[0], labels[1]
    result = [left[a] | right[b] for a, b in zip(lb, rb)]
    result += [left[i] for i in range(len(left)) if i not in lc and i not in lb]
    result += [right[i] for i in range(len(right)) if i not in rc and i not in rb]
    return [tuple(result)], []


def _reduce(p, labels, shapes, outs, path):
    axes = {a % max(1, len(shapes[0])) for a in param(p["axes"])}
    return [tuple(lab for i, lab in enumerate(labels[0]) if i not in axes)], []


def _sliced(labels: Labels, shape: list, out: list) -> tuple[Labels, list]:
    """Keep the labels of axes kept whole; an axis cut shorter loses them (and they are reported cut)."""
    kept, cut = [], []
    for lab, a, b in zip(labels, shape, out):
        if a == b:
            kept.append(lab)
        else:
            kept.append(frozenset())
            cut.extend(lab)
    return tuple(kept), cut


def _slice(p, labels, shapes, outs, path):
    kept, cut = _sliced(labels[0], shapes[0], outs[0])
    return [kept], cut


def _split(p, labels, shapes, outs, path):
    results, cut = [], []
    for out in outs:
        kept, c = _sliced(labels[0], shapes[0], out)
        results.append(kept)
        cut.extend(c)
    return results, cut


def _dynamic_update_slice(p, labels, shapes, outs, path):
    return [_union_broadcast(labels[:2], shapes[:2], outs[0])], []


def _gather(p, labels, shapes, outs, path):
    text = str(p.get("dimension_numbers", ""))
    fields = {k: param(v) for k, v in re.findall(r"(\w+)=(\([^()]*\))", text)}
    sizes = param(p["slice_sizes"])
    operand, indices = labels[0], labels[1]
    collapsed = set(fields.get("collapsed_slice_dims", ())) | set(fields.get("operand_batching_dims", ()))
    offset_dims = list(fields.get("offset_dims", ()))
    cut = [lab for i, ax in enumerate(operand) if sizes[i] < shapes[0][i] for lab in ax]
    offset_labels = [operand[i] if sizes[i] == shapes[0][i] else frozenset()
                     for i in range(len(operand)) if i not in collapsed]
    batch_labels = list(indices[:-1]) if indices else []
    out, k, b = [], 0, 0
    for j in range(len(outs[0])):
        if j in offset_dims and k < len(offset_labels):
            out.append(offset_labels[k])
            k += 1
        else:
            out.append(batch_labels[b] if b < len(batch_labels) else frozenset())
            b += 1
    return [tuple(out)], cut


def _concatenate(p, labels, shapes, outs, path):
    out = outs[0]
    result = [set() for _ in out]
    for lab, shape in zip(labels, shapes):
        for j in range(len(out)):
            result[j] |= lab[j]
    return [tuple(frozenset(r) for r in result)], []


def _stack(p, labels, shapes, outs, path):
    axis = int(param(p.get("axis", 0))) % len(outs[0])
    result = [set() for _ in outs[0]]
    for lab in labels:
        rest = [j for j in range(len(outs[0])) if j != axis]
        for i, j in enumerate(rest):
            result[j] |= lab[i]
    return [tuple(frozenset(r) for r in result)], []


def _pad(p, labels, shapes, outs, path):
    return [labels[0]], []


def _iota(p, labels, shapes, outs, path):
    dim = int(param(p.get("dimension", 0)))
    return [tuple(frozenset({("iota", path, d)}) if d == dim else frozenset() for d in range(len(outs[0])))], []


def _top_k(p, labels, shapes, outs, path):
    kept = tuple(labels[0][:-1]) + (frozenset(),)
    return [kept, kept], []


def _same_as_operand(p, labels, shapes, outs, path):
    return [labels[0] if len(labels[0]) == len(o) else _none(o) for o in outs], []


_RULES = {
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "squeeze": _squeeze, "expand_dims": _expand_dims,
    "transpose": _transpose, "dot_general": _dot_general, "slice": _slice, "dynamic_slice": _slice,
    "split": _split, "dynamic_update_slice": _dynamic_update_slice, "gather": _gather,
    "concatenate": _concatenate, "stack": _stack, "pad": _pad, "iota": _iota, "top_k": _top_k, "rev": _pad,
    "scatter": _same_as_operand, "scatter-add": _same_as_operand, "scatter_add": _same_as_operand,
    **{r: _reduce for r in REDUCTIONS},
}


def axes_of(trace: Trace, batch: dict[str, int]) -> Axes:
    """The ``Axes`` of a trace, computed once per trace and batch naming."""
    key = "_axes_" + ",".join(f"{k}:{v}" for k, v in sorted(batch.items()))
    cached = trace.__dict__.get(key)
    if cached is None:
        cached = trace.__dict__[key] = Axes(trace, batch)
    return cached

"""What is subtracted from the scores before each ``exp``: a small symbolic reading of the traced program.

Softmax is shift-invariant, so whether a maximum was subtracted cannot be seen in the outputs (a probe that
moves a correctly subtracted row maximum moves nothing, exactly like a decorative one). It is read off the
program instead. Every value computed from the scores is written, where possible, as

    a * Z + b + sum_k c_k * T_k

where ``Z`` is one array (the *frame*, identified by value numbering, so the same computation done twice is
the same array), ``a``, ``b``, ``c_k`` are numbers, and each ``T_k`` is a row statistic of ``Z`` that is
constant along the axes ``R`` it was taken over: ``max_R Z`` (``reduce_max``) or ``log sum_R exp(a' Z)``
(``log`` of ``reduce_sum`` of ``exp``, as ``logsumexp`` and ``log_softmax`` compute it). Positive scalings,
constant offsets, ``stop_gradient``, layout changes, ``max(m, -inf)`` and ``logsumexp``'s
``where(isfinite(m), m, 0)`` keep the form. The exponent of an ``exp`` is then stable exactly when all its
statistics are taken along the key axis only, of the same ``Z``, and the maxima cancel: its row maximum is

    (a + sum_max c + sum_lse c * a') * max_R Z + b + sum_lse c * delta,   0 <= delta <= log S,

so it must have ``a > 0``, the coefficient of ``max_R Z`` zero, ``b = 0`` and the log-sum-exp coefficients
between -1 and 0 (the largest exponent is then between -log S and 0). Anything else (an unscaled maximum
subtracted from scaled scores, ``0 * max``, a maximum per example or along the query axis, the maximum of a
different array, a mean, a clip) is reported with what was seen.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from grader.toolkit import POSITIONAL, Node, node

IDENTITY = {"stop_gradient", "copy", "copy_p", "reduce_precision", "optimization_barrier"}
EXPONENTIALS = {"exp", "exp2", "expm1", "pow"}
TOL = 1e-5


@dataclass(frozen=True)
class Const:
    value: float | None


@dataclass(frozen=True)
class Lin:
    """``a * Z + b + sum c_k T_k`` in the layout ``amap`` (current axis -> axis of Z, None if broadcast)."""

    frame: int
    a: float
    b: float
    terms: tuple  # ((kind, R, scale), coef), sorted
    amap: tuple

    def scaled(self, c: float) -> "Lin":
        return Lin(self.frame, self.a * c, self.b * c, tuple((k, v * c) for k, v in self.terms), self.amap)


@dataclass(frozen=True)
class Exp:
    arg: Lin
    amap: tuple


@dataclass(frozen=True)
class SumExp:
    arg: Lin
    R: frozenset
    amap: tuple


@dataclass(frozen=True)
class IsFinite:
    vn: int


@dataclass(frozen=True)
class Opaque:
    """A value the form cannot describe; ``why`` completes "what it exponentiates ..." in a message, and
    ``frame`` names the other array when a statistic of a different array was subtracted."""

    why: str = ""
    frame: int | None = None


@dataclass
class Reading:
    """The forms of the values of one traced program, and the exponent of every exponential."""

    exponents: dict[str, object] = field(default_factory=dict)
    """Equation path of an exponential -> the form of its exponent (``Lin``, ``Opaque``...)."""
    frames: dict[int, tuple[Node, str]] = field(default_factory=dict)
    """Frame (value number) -> (its first node, the path of the equation that made it)."""


def read(jaxpr: dict) -> Reading:
    return _Reader().run(jaxpr)


class _Reader:
    def __init__(self) -> None:
        self.vn: dict[Node, int] = {}
        self.form: dict[Node, object] = {}
        self.table: dict[tuple, int] = {}
        self.out = Reading()

    def run(self, jaxpr: dict) -> Reading:
        self._walk(jaxpr, "", None)
        return self.out

    # value numbering: the same computation on the same operands is the same value
    def _number(self, key: tuple, n: Node, path: str) -> int:
        if key not in self.table:
            self.table[key] = len(self.table)
        v = self.table[key]
        self.out.frames.setdefault(v, (n, path))
        return v

    def _operand(self, scope: str, atom: dict) -> tuple:
        n = node(scope, atom)
        if n is None:
            return ("lit", atom.get("lit"), tuple(atom["shape"]))
        if n not in self.vn:
            self.vn[n] = self._number(("free", n), n, "")
        return ("v", self.vn[n])

    def _get(self, scope: str, atom: dict) -> object:
        n = node(scope, atom)
        if n is None:
            return Const(_literal(atom.get("lit")))
        return self.form.get(n) or self._base(n, len(atom["shape"]))

    def _base(self, n: Node, ndim: int) -> Lin:
        if n not in self.vn:
            self.vn[n] = self._number(("free", n), n, "")
        return Lin(self.vn[n], 1.0, 0.0, (), tuple(range(ndim)))

    def _walk(self, jaxpr: dict, scope: str, ins: list | None) -> list:
        for atom in jaxpr.get("constvars", []):
            n = node(scope, atom)
            if n is not None:
                self.form[n] = Const(None)
        if ins is not None:
            for atom, (vn, form) in zip(jaxpr["invars"], ins):
                n = node(scope, atom)
                if n is not None:
                    self.vn[n], self.form[n] = vn, form
        for i, eqn in enumerate(jaxpr["eqns"]):
            self._eqn(eqn, f"{scope}{i}", scope)
        return [self._pair(scope, a) for a in jaxpr["outvars"]]

    def _pair(self, scope: str, atom: dict) -> tuple:
        key = self._operand(scope, atom)
        vn = key[1] if key[0] == "v" else self._number(key, "", "")
        return vn, self._get(scope, atom)

    def _eqn(self, eqn: dict, path: str, scope: str) -> None:
        prim, subs = eqn["primitive"], eqn["subjaxprs"]
        outs = [node(scope, a) for a in eqn["outvars"]]
        if subs:
            name, sub = next(iter(subs.items()))
            if prim in POSITIONAL and len(subs) == 1 and len(sub["invars"]) == len(eqn["invars"]):
                got = self._walk(sub, f"{path}/{name}/", [self._pair(scope, a) for a in eqn["invars"]])
                for n, (vn, form) in zip(outs, got):
                    if n is not None:
                        self.vn[n], self.form[n] = vn, form
                return
            for name, sub in subs.items():  # loops and branches: read inside, their results are new arrays
                self._walk(sub, f"{path}/{name}/", None)
            for k, n in enumerate(outs):
                if n is not None:
                    self.vn[n] = self._number(("eqn", path, k), n, path)
            return
        keys = tuple(self._operand(scope, a) for a in eqn["invars"])
        params = tuple(sorted((k, str(v)) for k, v in eqn["params"].items()))
        same_type = len(eqn["invars"]) == 1 and eqn["invars"][0].get("dtype") == eqn["outvars"][0].get("dtype")
        for k, n in enumerate(outs):
            if n is None:
                continue
            if (prim in IDENTITY or (prim == "convert_element_type" and same_type)) and keys[0][0] == "v":
                self.vn[n] = keys[0][1]
            else:
                self.vn[n] = self._number((prim, params, keys, k), n, path)
        forms = [self._get(scope, a) for a in eqn["invars"]]
        if prim in EXPONENTIALS and not prim.startswith("foreign:"):
            exponent = forms[-1] if prim == "pow" else forms[0]
            if prim == "exp2":
                exponent = _scale(exponent, math.log(2.0))
            elif prim == "pow":
                base = forms[0]
                exponent = (_scale(exponent, math.log(base.value)) if isinstance(base, Const) and base.value
                            and base.value > 0 else Opaque("is a power whose base is not a positive constant"))
            self.out.exponents[path] = exponent
        if len(outs) == 1 and outs[0] is not None:
            try:
                result = _rule(prim, eqn, forms, self.vn.get(outs[0]), self._vns(scope, eqn))
            except (ValueError, TypeError, KeyError, IndexError, SyntaxError, ZeroDivisionError, OverflowError):
                result = None
            if result is not None:
                self.form[outs[0]] = result

    def _vns(self, scope: str, eqn: dict) -> list:
        return [self.vn.get(node(scope, a)) for a in eqn["invars"]]


# ----------------------------------------------------------------------------------------------------

def _literal(text) -> float | None:
    if text is None:
        return None
    s = str(text)
    if "True" in s:
        return 1.0
    if "False" in s:
        return 0.0
    inner = re.sub(r"^[\w.]+\(", "", s)
    m = re.match(r"\s*(-?inf|nan|-?\d+\.?\d*(?:e[-+]?\d+)?)", inner)
    if not m:
        return None
    return float(m.group(1))


def _ints(text) -> list[int]:
    return [int(v) for v in re.findall(r"-?\d+", re.sub(r"np\.\w+\(([^()]*)\)", r"\1", str(text)))]


def _scale(f, c: float):
    if isinstance(f, Lin):
        return f.scaled(c)
    if isinstance(f, Const):
        return Const(None if f.value is None else f.value * c)
    return f


CONST_OPS = {
    "neg": lambda x: -x, "sqrt": math.sqrt, "rsqrt": lambda x: 1 / math.sqrt(x), "exp": math.exp,
    "log": math.log, "abs": abs, "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": lambda x, y: x / y, "max": max, "min": min, "pow": lambda x, y: x ** y,
    "convert_element_type": lambda x: x, "stop_gradient": lambda x: x, "broadcast_in_dim": lambda x: x,
    "reshape": lambda x: x, "squeeze": lambda x: x, "copy": lambda x: x, "copy_p": lambda x: x,
    "square": lambda x: x * x,
}


def _rule(prim: str, eqn: dict, forms: list, vn: int | None, vns: list):
    shapes = [a["shape"] for a in eqn["invars"]]
    out = eqn["outvars"][0]["shape"]
    if all(isinstance(f, Const) for f in forms) and forms:
        values = [f.value for f in forms]
        if prim == "integer_pow" and values[0] is not None:
            return Const(values[0] ** int(eqn["params"]["y"]))
        if prim in CONST_OPS and None not in values:
            return Const(float(CONST_OPS[prim](*values)))
        return Const(None)
    if prim in IDENTITY or prim == "convert_element_type":
        return forms[0] if not isinstance(forms[0], IsFinite) else None
    if prim == "is_finite":
        return IsFinite(vns[0]) if vns[0] is not None else None
    if prim in ("broadcast_in_dim", "reshape", "squeeze", "transpose"):
        return _layout(prim, eqn, forms[0], shapes[0], out)
    if prim == "neg":
        return _scale(forms[0], -1.0) if isinstance(forms[0], Lin) else forms[0]
    if prim in ("add", "add_any", "sub"):
        return _combine(forms[0], forms[1], -1.0 if prim == "sub" else 1.0, shapes, out)
    if prim == "mul":
        lin, c = (forms[0], forms[1]) if isinstance(forms[1], Const) else (forms[1], forms[0])
        if isinstance(lin, Lin) and isinstance(c, Const):
            return lin.scaled(c.value) if c.value is not None else Opaque("is scaled by a constant the grader "
                                                                          "cannot read")
        if isinstance(c, Const) and isinstance(lin, Opaque):
            return lin
        return None
    if prim == "div":
        if isinstance(forms[0], Lin) and isinstance(forms[1], Const) and forms[1].value:
            return forms[0].scaled(1.0 / forms[1].value)
        if isinstance(forms[0], Opaque) and isinstance(forms[1], Const):
            return forms[0]
        return None
    if prim in ("max", "min"):
        limit = math.inf if prim == "min" else -math.inf
        for x, y in ((forms[0], forms[1]), (forms[1], forms[0])):
            if isinstance(y, Const) and y.value == limit:
                return x
        return None
    if prim == "select_n" and len(forms) == 3:
        pred, low, high = forms
        if isinstance(pred, IsFinite) and pred.vn == vns[2] and isinstance(low, Const):
            return high
        if isinstance(pred, Const) and pred.value is not None:
            return high if pred.value else low
        return None
    if prim == "reduce_max":
        return _reduce_max(forms[0], _ints(eqn["params"]["axes"]), shapes[0])
    if prim == "exp":
        return Exp(forms[0], forms[0].amap) if isinstance(forms[0], Lin) else None
    if prim == "reduce_sum":
        axes = set(_ints(eqn["params"]["axes"]))
        f = forms[0]
        if isinstance(f, Exp):
            R = frozenset(f.amap[j] for j in axes if f.amap[j] is not None)
            if all(t[0][1] >= R for t in f.arg.terms):
                return SumExp(f.arg, R, tuple(m for j, m in enumerate(f.amap) if j not in axes))
        if isinstance(f, Lin) and not f.terms:
            return Opaque("subtracts a sum or mean of the scores, not their row maximum")
        return None
    if prim == "abs" and isinstance(forms[0], SumExp):
        return forms[0]
    if prim == "log" and isinstance(forms[0], SumExp):
        s = forms[0]
        terms = dict(s.arg.terms)
        key = ("lse", s.R, s.arg.a)
        terms[key] = terms.get(key, 0.0) + 1.0
        return Lin(s.arg.frame, 0.0, s.arg.b, tuple(sorted(terms.items(), key=str)), s.amap)
    return None


def _layout(prim: str, eqn: dict, f, shape: list, out: list):
    if isinstance(f, (Const, IsFinite)) or f is None:
        return f if isinstance(f, Const) else None
    if isinstance(f, Opaque):
        return f
    amap = f.amap
    if prim == "broadcast_in_dim":
        new = [None] * len(out)
        for i, d in enumerate(_ints(eqn["params"]["broadcast_dimensions"])):
            new[d] = amap[i] if shape[i] == out[d] else None
    elif prim == "squeeze":
        drop = {d % len(shape) for d in _ints(eqn["params"]["dimensions"])}
        new = [m for i, m in enumerate(amap) if i not in drop]
    elif prim == "transpose":
        new = [amap[i] for i in _ints(eqn["params"]["permutation"])]
    else:
        new = _reshape_map(amap, shape, out)
        if new is None:
            return Opaque("is reshaped after a statistic was subtracted") if isinstance(f, Lin) and (
                f.terms or f.a != 1.0 or f.b) else None
    new = tuple(new)
    if isinstance(f, Lin):
        return Lin(f.frame, f.a, f.b, f.terms, new)
    if isinstance(f, Exp):
        return Exp(f.arg, new)
    return SumExp(f.arg, f.R, new)


def _reshape_map(amap: tuple, shape: list, out: list):
    """The axis map after a reshape that only adds or removes axes of length 1 (None otherwise)."""
    if list(shape) == list(out):
        return list(amap)
    if [s for s in shape if s != 1] != [s for s in out if s != 1]:
        return None

    def gaps(dims):  # unit axes grouped by the non-unit axis that follows them
        groups, cur = [], []
        for i, s in enumerate(dims):
            if s == 1:
                cur.append(i)
            else:
                groups.append((cur, i))
                cur = []
        groups.append((cur, None))
        return groups

    new = [None] * len(out)
    for (units_in, big_in), (units_out, big_out) in zip(gaps(shape), gaps(out)):
        for a, b in zip(units_in, units_out):
            new[b] = amap[a]
        if big_in is not None and big_out is not None:
            new[big_out] = amap[big_in]
    return new


def _aligned(f, shape: list, out: list) -> tuple:
    """``f``'s axis map on the result of a broadcasting elementwise op (broadcast axes -> None)."""
    if not shape:
        return tuple([None] * len(out))
    return tuple(m if s == o else None for m, s, o in zip(f.amap, shape, out))


def _combine(x, y, sign: float, shapes: list, out: list):
    if isinstance(x, Const) and isinstance(y, Lin):
        return _combine(y.scaled(sign), x, 1.0, [shapes[1], shapes[0]], out)
    if not isinstance(x, Lin):
        return x if isinstance(x, Opaque) else None
    if isinstance(y, Const):
        if y.value is None:
            return Opaque("adds a constant the grader cannot read")
        return Lin(x.frame, x.a, x.b + sign * y.value, x.terms, _aligned(x, shapes[0], out))
    if isinstance(y, Opaque):
        return y
    if not isinstance(y, Lin):
        return Opaque("subtracts something that is not a row maximum of the same scores")
    if x.frame != y.frame:
        if x.a and y.a:
            return None  # two different arrays added: a new array
        pure = y if not y.a else x
        if any(k[0] == "max" for k, _ in pure.terms):
            return Opaque("subtracts the maximum of a different array", pure.frame)
        return Opaque("subtracts a statistic of a different array", pure.frame)
    ax, ay = _aligned(x, shapes[0], out), _aligned(y, shapes[1], out)
    amap = []
    const_axes = frozenset().union(*(t[0][1] for t in x.terms + y.terms)) if (x.terms or y.terms) else frozenset()
    for i, (p, q) in enumerate(zip(ax, ay)):
        if p is not None and q is not None and p != q:
            return Opaque("combines values laid out along different axes")
        m = p if p is not None else q
        for f, mine in ((x, p), (y, q)):
            if mine is None and m is not None and f.a and m not in const_axes:
                return Opaque("broadcasts the scores along an axis")
        amap.append(m)
    terms = dict(x.terms)
    for k, c in y.terms:
        terms[k] = terms.get(k, 0.0) + sign * c
    return Lin(x.frame, x.a + sign * y.a, x.b + sign * y.b, tuple(sorted(terms.items(), key=str)), tuple(amap))


def _reduce_max(f, axes: list, shape: list):
    if not isinstance(f, Lin):
        return None
    axes = {a % max(1, len(shape)) for a in axes}
    R = frozenset(f.amap[j] for j in axes if f.amap[j] is not None)
    amap = tuple(m for j, m in enumerate(f.amap) if j not in axes)
    if f.a < 0:
        return None  # a minimum in disguise: a new array
    if any(not (t[0][1] >= R) for t in f.terms):
        return None
    if f.a == 0:
        return Lin(f.frame, 0.0, f.b, f.terms, amap)
    terms = dict(f.terms)
    terms[("max", R, 1.0)] = terms.get(("max", R, 1.0), 0.0) + f.a
    return Lin(f.frame, 0.0, f.b, tuple(sorted(terms.items(), key=str)), amap)


@dataclass
class Verdict:
    stable: bool
    why: str = ""
    R: frozenset = frozenset()


def judge(form, key_axes: set[int]) -> Verdict:
    """Whether an exponent of this form is each row's score minus that row's maximum along the key axis
    (or its log-sum-exp), and if not, why not, in words."""
    if isinstance(form, Opaque):
        return Verdict(False, f"what it exponentiates {form.why}" if form.why else
                       "the grader cannot follow what it exponentiates")
    if not isinstance(form, Lin):
        return Verdict(False, "the grader cannot follow what it exponentiates")
    if not form.terms:
        return Verdict(False, "no row maximum of the scores is subtracted from what it exponentiates")
    if all(abs(c) <= 1e-12 for _, c in form.terms):
        return Verdict(False, "a row maximum enters the exponent only multiplied by 0, so nothing is subtracted")
    if form.a <= 0:
        return Verdict(False, "the scores enter the exponent negated or not at all")
    axes = {t[0][1] for t in form.terms}
    if len(axes) > 1:
        return Verdict(False, "it subtracts statistics taken along different axes")
    R = next(iter(axes))
    if not key_axes:
        return Verdict(False, "the grader cannot tell which axis of the scores is the key axis", R)
    if R != frozenset(key_axes):
        return Verdict(False, "wrong-axes", R)
    max_coef = form.a + sum(c * (1.0 if k[0] == "max" else k[2]) for k, c in form.terms)
    lse = sum(c for k, c in form.terms if k[0] == "lse")
    if abs(max_coef) > TOL * max(1.0, abs(form.a)):
        shift = form.a - max_coef
        return Verdict(False, f"the maximum subtracted is {shift / form.a:.4g} times the row maximum of the "
                       "exponentiated scores, not exactly once: it is scaled differently from the scores (for "
                       "instance the maximum of the unscaled products subtracted from the scaled scores)", R)
    if abs(form.b) > TOL * max(1.0, abs(form.a)):
        return Verdict(False, f"after subtracting the row maximum, the constant {form.b:.4g} is added to the "
                       "exponent, so its largest value is not 0", R)
    if lse < -1.0 - TOL or lse > TOL:
        return Verdict(False, "it subtracts a log-sum-exp a number of times other than once", R)
    return Verdict(True, "", R)

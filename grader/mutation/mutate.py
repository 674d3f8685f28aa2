"""A catalogue of source-level mutations of a reference solution (``python -m grader mutants``).

Each mutant is the reference with one small change of the kind a learner's wrong answer makes: an integer
off by one, ``<`` for ``<=``, a large negative for ``-inf``, an epsilon or a floor added to a divisor, a
dtype swapped, a cast dropped, a list for a tuple, a term of a binary operation dropped or the operands
swapped, an axis changed, a mask inverted, a rounding mode changed. The problem's hidden cases must tell
every one of them from the reference, unless it is equivalent (``problems/<slug>/equivalent_mutants.json``).

Mutants are numbered in a fixed order (the order of ``ast.walk`` over the parsed reference, then the
operator's own order), so an id such as ``m017`` names the same mutant until the reference changes; each
also carries a key (operator, the changed node's span, variant) that stays stable when other lines change, which is
what ``equivalent_mutants.json`` lists.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator

from grader import pysource

EPS = "1e-6"
JNP = "_mutant_jnp"
"""The name the mutant imports ``jax.numpy`` under when a change needs it (the reference may not)."""


@dataclass(frozen=True)
class Mutant:
    id: str
    """``m000``, ``m001``...: the position in this reference's catalogue."""
    key: str
    """``operator@line:col-end_line:end_col#variant``: stable across edits elsewhere in the file (equivalence lists use it)."""
    operator: str
    description: str
    line: int
    source: str


Change = tuple[str, str, Callable[[], ast.AST]]
"""(variant, description, build the replacement node)."""

FLOATS = ("float32", "float16", "bfloat16")
INTS = ("int32", "int16", "int8")
ROUNDING = ("round", "floor", "ceil", "trunc", "rint")
DTYPE_MODULES = ("jnp", "np", "jax.numpy", "numpy")


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _jnp(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(JNP, ast.Load()), attr, ast.Load())


def _call(attr: str, *args: ast.expr) -> ast.expr:
    return ast.Call(_jnp(attr), list(args), [])


def _num(text: str) -> ast.expr:
    return pysource.parse(text, mode="eval").body


def _is_dtype_attr(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in names and ast.unparse(node.value) in DTYPE_MODULES


def _is_inf(node: ast.AST) -> bool:
    """``jnp.inf``, ``np.inf``, ``math.inf``, ``float('inf')``."""
    if isinstance(node, ast.Attribute) and node.attr == "inf":
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).strip("+-").lower() in ("inf", "infinity"))


def _changes(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, Change]]:
    """Every (operator, change) the catalogue makes at ``node``."""
    c = copy.deepcopy
    # -- constants: integers off by one; -inf versus a large finite number --------------------------------
    sign = -1 if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub) else 1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        for d in (1, -1):
            yield "off-by-one", (f"{d:+d}", f"{sign * node.value} -> {sign * (node.value + d)}",
                                 lambda d=d: ast.Constant(node.value + d))
    if isinstance(node, ast.Constant) and type(node.value) is float and node.value.is_integer() \
            and abs(node.value) >= 2:
        yield "off-by-one", ("+1", f"{sign * node.value:g} -> {sign * (node.value + 1):g}",
                             lambda: ast.Constant(node.value + 1.0))
    if _is_inf(node):
        negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)
        yield "inf-as-finite", ("1e9", f"{'-' if negated else ''}{_text(node)} -> {'-' if negated else ''}1e9",
                                lambda: ast.Constant(1e9))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and abs(node.operand.value) >= 1e8:
        yield "finite-as-inf", ("inf", f"{_text(node)} -> -inf", lambda: ast.UnaryOp(ast.USub(), _jnp("inf")))
    # -- comparisons -------------------------------------------------------------------------------------
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq}
        op = type(node.ops[0])
        if op in swap:
            def flipped(op=op):
                new = c(node)
                new.ops = [swap[op]()]
                return new
            yield "comparison", (swap[op].__name__, f"{_text(node)}: {op.__name__} -> {swap[op].__name__}", flipped)
    # -- binary operations: dropped terms, swapped operands, eps and floors on divisors -----------------
    if isinstance(node, ast.BinOp):
        name = type(node.op).__name__
        yield "dropped-term", ("left", f"{_text(node)} -> {_text(node.right)}", lambda: c(node.right))
        yield "dropped-term", ("right", f"{_text(node)} -> {_text(node.left)}", lambda: c(node.left))
        if isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult, ast.Pow, ast.FloorDiv, ast.Mod)):
            yield "swapped-operands", (name, f"{_text(node)}: operands swapped",
                                       lambda: ast.BinOp(c(node.right), node.op, c(node.left)))
        if isinstance(node.op, (ast.Add, ast.Sub)):
            other = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            yield "swapped-operator", (name, f"{_text(node)}: {name} -> {type(other).__name__}",
                                       lambda: ast.BinOp(c(node.left), other, c(node.right)))
        if isinstance(node.op, ast.Div):
            yield "eps", ("add", f"{_text(node)}: divisor + {EPS}",
                          lambda: ast.BinOp(c(node.left), ast.Div(), ast.BinOp(c(node.right), ast.Add(), _num(EPS))))
            yield "floor", ("max", f"{_text(node)}: divisor floored at {EPS}",
                            lambda: ast.BinOp(c(node.left), ast.Div(), _call("maximum", c(node.right), _num(EPS))))
            yield "floor", ("result", f"{_text(node)}: result floored at {EPS}",
                            lambda: _call("maximum", c(node), _num(EPS)))
    # -- calls: sqrt's eps, rounding modes, where's branches, casts, list/tuple --------------------------
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr == "sqrt" and len(node.args) == 1:
            def sqrt_eps():
                new = c(node)
                new.args = [ast.BinOp(new.args[0], ast.Add(), _num(EPS))]
                return new
            yield "eps", ("sqrt", f"{_text(node)}: + {EPS} inside", sqrt_eps)
        if attr in ROUNDING and ast.unparse(node.func.value) in DTYPE_MODULES:
            for other in ROUNDING:
                if other != attr:
                    def rounded(other=other):
                        new = c(node)
                        new.func = _jnp(other)
                        return new
                    yield "rounding", (other, f"{_text(node)}: {attr} -> {other}", rounded)
        if attr == "where" and len(node.args) == 3:
            def swapped():
                new = c(node)
                new.args = [new.args[0], new.args[2], new.args[1]]
                return new
            yield "mask-inverted", ("where", f"{_text(node)}: branches swapped", swapped)
        if attr == "astype" and len(node.args) == 1:
            yield "cast-dropped", ("astype", f"{_text(node)}: cast dropped", lambda: c(node.func.value))
        if attr in ("maximum", "minimum") and len(node.args) == 2:
            other = "minimum" if attr == "maximum" else "maximum"
            def flipped_extreme(other=other):
                new = c(node)
                new.func = _jnp(other)
                return new
            yield "swapped-operator", (other, f"{_text(node)}: {attr} -> {other}", flipped_extreme)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") \
            and len(node.args) == 1:
        other = "tuple" if node.func.id == "list" else "list"
        yield "container", (other, f"{_text(node)}: {node.func.id} -> {other}",
                            lambda: ast.Call(ast.Name(other, ast.Load()), [c(node.args[0])], []))
    if isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load) and node.elts \
            and not isinstance(parent, (ast.Subscript, ast.Call, ast.keyword, ast.comprehension)):
        other = ast.Tuple if isinstance(node, ast.List) else ast.List
        yield "container", (other.__name__, f"{_text(node)}: {type(node).__name__} -> {other.__name__}",
                            lambda: other([c(e) for e in node.elts], ast.Load()))
    if isinstance(node, ast.ListComp):
        yield "container", ("tuple", f"{_text(node)}: list -> tuple",
                            lambda: ast.Call(ast.Name("tuple", ast.Load()), [ast.GeneratorExp(c(node.elt),
                                                                                           c(node.generators))], []))
    # -- dtypes --------------------------------------------------------------------------------------------
    for family in (FLOATS, INTS):
        if _is_dtype_attr(node, family):
            for other in family:
                if other != node.attr:
                    yield "dtype", (other, f"{_text(node)} -> jnp.{other}", lambda other=other: _jnp(other))
    if isinstance(node, ast.Call) and _is_dtype_attr(node.func, FLOATS + INTS) and len(node.args) == 1:
        yield "cast-dropped", ("weak", f"{_text(node)}: cast dropped (weakly typed)", lambda: c(node.args[0]))
    # -- masks: ~x and logical_not dropped ----------------------------------------------------------------
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        yield "mask-inverted", ("not", f"{_text(node)}: negation dropped", lambda: c(node.operand))
    # -- axes: axis= changed, .T dropped, in_axes swapped -------------------------------------------------
    if isinstance(node, ast.keyword) and node.arg in ("axis", "axes") and isinstance(node.value, (ast.Constant,
                                                                                                   ast.UnaryOp)):
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            value = None
        if isinstance(value, int):
            for other in sorted({0, 1, -1} - {value}):
                yield "axis", (str(other), f"axis={value} -> axis={other}",
                               lambda other=other: ast.keyword(node.arg, _num(str(other))))
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT") and isinstance(node.ctx, ast.Load):
        yield "axis", ("T", f"{_text(node)}: transpose dropped", lambda: c(node.value))
    if isinstance(node, ast.keyword) and node.arg in ("in_axes", "out_axes") and isinstance(node.value, ast.Tuple) \
            and len(node.value.elts) == 2:
        yield "axis", ("swap", f"{node.arg}={_text(node.value)}: entries swapped",
                       lambda: ast.keyword(node.arg, ast.Tuple([c(e) for e in node.value.elts[::-1]], ast.Load())))


def _numbered(tree: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """Every node with its parent, in ``ast.walk``'s order (the same for two parses of one text)."""
    parents: dict[int, ast.AST] = {}
    for p in ast.walk(tree):
        for child in ast.iter_child_nodes(p):
            parents[id(child)] = p
    return [(n, parents.get(id(n))) for n in ast.walk(tree)]


def _skip(node: ast.AST, parent: ast.AST | None) -> bool:
    """Nodes no learner would change: docstrings, import lines, decorators' names."""
    return isinstance(node, (ast.Import, ast.ImportFrom, ast.alias)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise LookupError("node not found in its parent")


def mutants(source: str) -> list[Mutant]:
    """The catalogue's mutants of ``source``; each one's source differs from it by one change and parses."""
    base = pysource.parse(source)
    base_text = ast.unparse(base)
    sites = []
    in_import = {id(n) for top in ast.walk(base) if isinstance(top, (ast.Import, ast.ImportFrom))
                 for n in ast.walk(top)}
    for index, (node, parent) in enumerate(_numbered(base)):
        if id(node) in in_import or _skip(node, parent) or parent is None:
            continue
        for operator, (variant, description, _) in _changes(node, parent):
            line = getattr(node, "lineno", getattr(parent, "lineno", 0))
            span = f"{getattr(node, 'col_offset', 0)}-{getattr(node, 'end_lineno', line)}:{getattr(node, 'end_col_offset', 0)}"
            sites.append((index, operator, variant, description, line, span))
    found, seen = [], {base_text}
    for index, operator, variant, description, line, span in sites:
        tree = pysource.parse(source)
        numbered = _numbered(tree)
        node, parent = numbered[index]
        build = next(b for op, (v, d, b) in _changes(node, parent) if op == operator and v == variant and d == description)
        _replace(parent, node, build())
        ast.fix_missing_locations(tree)
        text = ast.unparse(tree)
        if text in seen:  # the same program as the reference or an earlier mutant
            continue
        seen.add(text)
        if JNP in text:
            text = f"import jax.numpy as {JNP}\n" + text
        try:
            compile(text, "<mutant>", "exec")
        except SyntaxError:
            continue
        found.append(Mutant(id=f"m{len(found):03d}", key=f"{operator}@{line}:{span}#{variant}", operator=operator,
                            description=description, line=line, source=text))
    return found

"""What the submitted source says, read on the trusted side: which public JAX transformations it calls, where.

The traced program shows what was computed, not how it was asked for: a backward pass written by hand can be
the very equations autodiff writes, and the marks autodiff leaves on equations (``jvp(...)`` in a name stack)
are written by the learner's process, so any code can write them. Whether ``jax.grad`` was *called* is a fact
of the source text. This module parses the submission with ``ast`` (nothing of it runs) and lists every call
of a public transformation (``jax.grad``, ``jax.value_and_grad``, ``jax.vjp``, ``jax.jvp``, ``jax.linearize``,
``jax.jacfwd``/``jacrev``/``hessian``, ``jax.custom_vjp``/``custom_jvp``, ``jax.checkpoint``/``remat``,
``jax.vmap``, ``jax.lax.scan``/``fori_loop``/``map``/``stop_gradient``, and the flax, equinox and haiku
spellings of these) under any import alias (``from jax import grad as g``, ``import jax as j``,
``import flax.linen as nn``), with its line, and two lexical relations between them:

- ``inside``: the structures whose function argument holds the call, directly or through functions of the
  submission it names (``lax.scan(step, ...)`` where ``step`` calls ``jax.value_and_grad``: the call is
  inside ``scan``); decorators count (``@jax.checkpoint``);
- ``applied_to``: the transformations reachable from the call's own function argument
  (``jax.jvp(jax.grad(f), ...)`` applies ``jvp`` to a function holding ``grad``).

These are facts about the text, used only where a requirement's sentence asks for something only the source
can show (and each such row says so: "read from your source: `jax.value_and_grad` on line 12"); whether the
call's result computes the answer is the traced program's to show (``carries.py``).
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from grader import pysource

MODULES = {"jax", "jax.lax", "jax.numpy", "jax.ad_checkpoint", "jax.experimental", "flax.linen", "flax.nnx",
           "flax", "equinox", "haiku", "jax.tree_util", "jax.nn", "jax.custom_derivatives", "jax.api"}
"""Modules whose transformations count (a name from elsewhere, or defined by the submission, does not)."""
CANONICAL = {
    "grad": "grad", "value_and_grad": "value_and_grad", "vjp": "vjp", "jvp": "jvp", "linearize": "linearize",
    "jacfwd": "jacfwd", "jacrev": "jacrev", "jacobian": "jacrev", "hessian": "hessian",
    "custom_vjp": "custom_vjp", "custom_jvp": "custom_jvp", "checkpoint": "checkpoint", "remat": "checkpoint",
    "vmap": "vmap", "pmap": "pmap", "scan": "scan", "fori_loop": "fori_loop", "while_loop": "while_loop",
    "map": "map", "stop_gradient": "stop_gradient", "linear_transpose": "linear_transpose",
    "filter_grad": "grad", "filter_value_and_grad": "value_and_grad", "filter_vjp": "vjp", "filter_jvp": "jvp",
    "filter_checkpoint": "checkpoint", "filter_vmap": "vmap", "cond": "cond", "switch": "switch",
}
"""The last part of a public name -> the transformation it is (equinox's ``filter_*`` are the same ones)."""
LAX_ONLY = {"map", "scan", "fori_loop", "while_loop", "cond", "switch", "stop_gradient"}
"""Names that mean the transformation only in ``LAX_MODULES`` (``jax.tree.map`` is no ``lax.map``)."""
LAX_MODULES = {"jax.lax", "flax.linen", "flax.nnx", "haiku", "jax"}
FUNCTION_ARGUMENT = {"fori_loop": 2, "while_loop": 1, "cond": 1, "switch": 1}
"""Which positional argument is the transformed function (the first one by default)."""
FUNCTION_KEYWORDS = ("f", "fun", "body_fun", "fn", "func", "target", "true_fun", "false_fun")
REVERSE = {"grad", "value_and_grad", "vjp", "jacrev", "hessian"}
"""Transformations that run reverse-mode autodiff."""
AUTODIFF = REVERSE | {"jvp", "linearize", "jacfwd", "linear_transpose"}


@dataclass(frozen=True)
class Call:
    """One call (or decorator use) of a public JAX transformation in the submitted source."""

    api: str
    """The transformation (``CANONICAL``'s values): ``value_and_grad`` for ``jax.value_and_grad`` and
    ``eqx.filter_value_and_grad`` alike."""
    line: int
    spelled: str
    """How the source wrote it: ``jax.value_and_grad``, ``g``, ``nn.remat``."""
    inside: frozenset[str] = frozenset()
    """Transformations whose function argument holds this call (lexically, or through named functions)."""
    applied_to: frozenset[str] = frozenset()
    """Transformations reachable from this call's own function argument."""
    used: bool = True
    """Whether its result is used at all: not a bare statement, nor assigned only to names never read
    (``_ = jax.grad(loss)(params)`` is not used; JAX drops such a call from the traced program)."""
    own: bool = False
    """Whether the function it transforms is the submission's own (a ``def``, a lambda, a ``partial`` of
    one, a name bound to one), not a library's (``jax.grad(jnp.tanh)``)."""

    def shown(self) -> str:
        return f"`{self.spelled}` on line {self.line}"


@dataclass
class SourceFacts:
    """Every public transformation the source calls; empty when the source does not parse."""

    calls: list[Call] = field(default_factory=list)
    parsed: bool = True

    def of(self, *apis: str) -> list[Call]:
        """The calls of ``apis`` whose result is used (``Call.used``)."""
        return [c for c in self.calls if c.api in apis and c.used]

    def unused(self, *apis: str) -> list[Call]:
        """The calls of ``apis`` whose result is thrown away."""
        return [c for c in self.calls if c.api in apis and not c.used]

    def inside(self, structures: set[str] | tuple[str, ...], *apis: str) -> list[Call]:
        """Calls of ``apis`` whose place is inside one of ``structures``' functions."""
        return [c for c in self.of(*apis) if c.inside & set(structures)]

    def applied(self, api: str, to: set[str] | tuple[str, ...]) -> list[Call]:
        """Calls of ``api`` applied to a function that reaches one of ``to``."""
        return [c for c in self.of(api) if c.applied_to & set(to)]

    def thrown_away(self, *apis: str) -> str:
        """`` (`jax.vjp` on line 32 is called, but its result is thrown away)`` for unused calls, or ""."""
        calls = self.unused(*apis)
        if not calls:
            return ""
        return (f" ({', '.join(c.shown() for c in calls[:2])} {'is' if len(calls) == 1 else 'are'} called, but "
                "the result is thrown away, so JAX leaves it out of the program)")

    @staticmethod
    def note(calls: list[Call], limit: int = 3) -> str:
        """``read from your source: `jax.value_and_grad` on line 12`` (or that none was found)."""
        if not calls:
            return "read from your source: no such call"
        shown = ", ".join(c.shown() for c in calls[:limit])
        return f"read from your source: {shown}" + (", ..." if len(calls) > limit else "")


@functools.lru_cache(maxsize=32)
def read(code: str) -> SourceFacts:
    """The facts of ``code`` (cached: every trace of a submission shares its source)."""
    try:
        tree = pysource.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return SourceFacts(parsed=False)
    try:
        return _Reader(tree).facts()
    except RecursionError:
        return SourceFacts(parsed=False)


class _Reader:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}  # local name -> dotted public name
        self.defs: dict[str, list[ast.AST]] = {}  # function (or class method) name -> its definitions
        self.reach: dict[int, set[str]] = {}  # function body (by id) -> transformations it reaches
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        self.aliases.setdefault(a.name.split(".")[0], a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(node.name, []).append(node)
        self.bound: dict[str, list[ast.Call]] = {}  # name = jax.checkpoint(f, ...): the name is that call
        self.partials: dict[str, list[ast.Call]] = {}  # name = functools.partial(jax.checkpoint, ...)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and self._is_partial(node.value.func):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.partials.setdefault(t.id, []).append(node.value)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if isinstance(node.value, ast.Lambda):  # grad_fn = lambda p: jax.grad(loss)(p, batch)
                for name in names:
                    self.defs.setdefault(name, []).append(node.value)
            elif isinstance(node.value, ast.Call) and (self.transformation(node.value) is not None
                                                       or self._is_partial(node.value.func)):
                for name in names:  # name = jax.checkpoint(f, ...), or functools.partial(f, ...)
                    self.bound.setdefault(name, []).append(node.value)

    def api_of(self, func: ast.AST) -> tuple[str, str] | None:
        """(transformation, spelling) when ``func`` names a public transformation."""
        parts: list[str] = []
        node = func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        spelled = ".".join([node.id] + parts[::-1])
        full = ".".join([self.aliases.get(node.id, node.id)] + parts[::-1])
        module, _, name = full.rpartition(".")
        if name not in CANONICAL:
            return None
        if name in LAX_ONLY:
            return (CANONICAL[name], spelled) if module in LAX_MODULES else None
        if module in MODULES or any(module.startswith(m + ".") for m in MODULES):
            return CANONICAL[name], spelled
        return None

    def transformation(self, call: ast.Call) -> tuple[str, str, ast.AST | None] | None:
        """(api, spelling, the function argument) for a call of a transformation, ``functools.partial`` of
        one included (``partial(jax.checkpoint, policy=...)``)."""
        found = self.api_of(call.func)
        if found is None and isinstance(call.func, ast.Name):  # remat = partial(jax.checkpoint, ...); remat(f)
            for value in self.partials.get(call.func.id, ()):
                inner = self.api_of(value.args[0]) if value.args else None
                if inner is not None:
                    found = (inner[0], call.func.id)
                    break
        if found is None and self._is_partial(call.func) and call.args:
            found = self.api_of(call.args[0])
            args = call.args[1:]
        else:
            args = call.args
        if found is None:
            return None
        api, spelled = found
        index = FUNCTION_ARGUMENT.get(api, 0)
        fn = args[index] if len(args) > index else next(
            (k.value for k in call.keywords if k.arg in FUNCTION_KEYWORDS), None)
        return api, spelled, fn

    def _is_partial(self, func: ast.AST) -> bool:
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name == "partial"

    def functions_named(self, node: ast.AST | None) -> list[ast.AST]:
        """The function bodies an argument stands for: a lambda, a named function of the submission (all its
        definitions), ``partial(f, ...)``, a transformed function (``jax.grad(f)``), a bound method's name."""
        if node is None:
            return []
        if isinstance(node, ast.Lambda):
            return [node]
        if isinstance(node, ast.Name):
            return list(self.defs.get(node.id, [])) + list(self.bound.get(node.id, []))
        if isinstance(node, ast.Attribute):
            return list(self.defs.get(node.attr, []))
        if isinstance(node, ast.Call):
            if self._is_partial(node.func) and node.args:
                return self.functions_named(node.args[0])
            if self.transformation(node) is not None:
                return [node]
            return self.functions_named(node.func)  # a factory: make_step(...) -> what make_step defines
        return []

    def reaches(self, body: ast.AST, seen: set[int] | None = None) -> set[str]:
        """Transformations called in ``body`` or in any function of the submission it names (transitively)."""
        key = id(body)
        if key in self.reach:
            return self.reach[key]
        seen = set() if seen is None else seen
        if key in seen:
            return set()
        seen.add(key)
        out: set[str] = set()
        for node in ast.walk(body):
            if isinstance(node, ast.Call):
                t = self.transformation(node)
                if t is not None:
                    out.add(t[0])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not body:
                out |= self.decorators(node)
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
                name = node.id if isinstance(node, ast.Name) else node.attr
                for d in self.defs.get(name, []):
                    if d is not body:
                        out |= self.decorators(d) | self.reaches(d, seen)
                for call in self.bound.get(name, []) if isinstance(node, ast.Name) else []:
                    if call is not body:
                        out |= self.reaches(call, seen)
        self.reach[key] = out
        return out

    def decorators(self, fn: ast.AST) -> set[str]:
        """The transformations ``fn`` is decorated with (``@jax.checkpoint``, ``@partial(jax.custom_vjp, ...)``)."""
        out = set()
        for d in getattr(fn, "decorator_list", []):
            found = self.api_of(d.func if isinstance(d, ast.Call) else d)
            if found is None and isinstance(d, ast.Call) and self._is_partial(d.func) and d.args:
                found = self.api_of(d.args[0])
            if found:
                out.add(found[0])
        return out

    def facts(self) -> SourceFacts:
        # Where each function body sits: the transformations whose function argument is that body.
        structure_of: dict[int, set[str]] = {}
        uses: list[tuple[str, int, str, ast.AST | None, ast.AST]] = []  # api, line, spelled, fn, node
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                t = self.transformation(node)
                if t is not None:
                    uses.append((t[0], node.lineno, t[1], t[2], node))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    target = d.func if isinstance(d, ast.Call) else d
                    found = self.api_of(target)
                    if found is None and isinstance(d, ast.Call) and self._is_partial(d.func) and d.args:
                        found = self.api_of(d.args[0])
                    if found is not None:
                        uses.append((found[0], d.lineno, found[1], ast.Name(id=node.name, ctx=ast.Load()), node))
        for api, _, _, fn, node in uses:
            bodies = [node] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else self.functions_named(fn)
            for body in bodies:
                for inner in self._enclosed(body):
                    structure_of.setdefault(id(inner), set()).add(api)
        parents = self._parents()
        calls = []
        for api, line, spelled, fn, node in uses:
            bodies = [node] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else self.functions_named(fn)
            applied: set[str] = set()
            for body in bodies:
                applied |= self.reaches(body) if body is not node else self._reaches_inside(body)
            inside: set[str] = set()
            at: ast.AST | None = node
            while at is not None:
                inside |= structure_of.get(id(at), set())
                at = parents.get(id(at))
            decorated = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            calls.append(Call(api, line, spelled, frozenset(inside - ({api} if decorated else set())),
                              frozenset(applied), decorated or self._used(node, parents, api), bool(bodies)))
        calls.sort(key=lambda c: (c.line, c.api))
        return SourceFacts(calls)

    @functools.cached_property
    def loaded(self) -> set[str]:
        """Every name the source reads."""
        return {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    def _used(self, node: ast.AST, parents: dict[int, ast.AST], api: str = "") -> bool:
        """Whether the value of the expression around ``node`` (``jax.grad(f)`` and its call ``(...)(x)``) is
        used: not a statement of its own, nor assigned only to names that are never read. For ``jax.vjp``
        unpacked as ``out, pullback = jax.vjp(...)``, the pullback must be called and its result used (its
        backward pass is otherwise dropped from the program)."""
        parent = parents.get(id(node))
        if api == "vjp" and isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], (ast.Tuple, ast.List)) and len(parent.targets[0].elts) == 2 \
                and isinstance(parent.targets[0].elts[1], ast.Name):
            pullback = parent.targets[0].elts[1].id
            for n in ast.walk(self.tree):
                if isinstance(n, ast.Name) and n.id == pullback and isinstance(n.ctx, ast.Load):
                    call = parents.get(id(n))
                    if not (isinstance(call, ast.Call) and call.func is n) or self._used(call, parents):
                        return True  # called with its result used, or handed on (jax.vmap(pullback))
            return False
        expr = node
        while isinstance(parents.get(id(expr)), (ast.Call, ast.Attribute, ast.Subscript)) and (
                getattr(parents[id(expr)], "func", None) is expr or getattr(parents[id(expr)], "value", None) is expr):
            expr = parents[id(expr)]
        parent = parents.get(id(expr))
        if isinstance(parent, ast.Expr):
            return False
        if isinstance(parent, ast.Assign) and parent.value is expr:
            names = [n.id for t in parent.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            plain = all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in parent.targets)
            return not plain or any(n in self.loaded for n in names)
        return True

    def _reaches_inside(self, fn: ast.AST) -> set[str]:
        out: set[str] = set()
        for stmt in getattr(fn, "body", []):
            out |= self.reaches(stmt)
        return out

    def _enclosed(self, body: ast.AST) -> list[ast.AST]:
        """``body`` and every function body it names, transitively (where its calls run)."""
        out, stack, seen = [], [body], set()
        while stack:
            b = stack.pop()
            if id(b) in seen:
                continue
            seen.add(id(b))
            out.append(b)
            for node in ast.walk(b):
                if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
                    name = node.id if isinstance(node, ast.Name) else node.attr
                    stack.extend(self.defs.get(name, []))
                    if isinstance(node, ast.Name):
                        stack.extend(self.bound.get(name, []))
        return out

    def _parents(self) -> dict[int, ast.AST]:
        """Every node's enclosing function body, lambda or transformation call (for ``inside``): a call
        sits inside the bodies that hold it, and inside the functions that name the function holding it."""
        parents: dict[int, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        # A function named by a structure's argument but defined elsewhere is reached via _enclosed, whose
        # members are keys of structure_of: walking up the lexical parents meets them.
        return parents

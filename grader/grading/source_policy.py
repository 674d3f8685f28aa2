"""The source policy: code that reaches into the grader or into JAX's private modules is refused before it runs.

A first layer only, in front of the rules that decide verdicts (numbers from the verifier's rebuild, checks
on the rebuilt program, facts parsed from the source): a submission that gets past it still gains nothing it
could use, but one that plainly tries is told so at once, with the line and what to use instead, rather than
run. The walk reads the submitted text with ``ast`` on the trusted side; nothing of the submission runs.

What is refused (each with its own sentence): JAX's private modules (``jax._src``, ``jaxlib``'s internals);
the interpreter's registry of modules (``sys.modules``) and frames (``sys._getframe``, ``inspect.currentframe``,
``f_back``, ``f_globals``, ``gi_frame``, a traceback's ``tb_frame``...); ``gc``, ``ctypes``, ``importlib`` and
``__import__``; the grader's own modules and the payload and its companions (``grader``, ``problems``,
``jaxplay_*``); code built at run time (``eval``, ``exec``, ``compile``); and the object model's back doors
(``__subclasses__``, ``__globals__``, ``__code__``, ``__builtins__``, ``__closure__``, ``__dict__`` of a
function..., and ``getattr``/``setattr``/``delattr`` of a literal dunder name or one of these, or of a
name built at run time: an f-string, a sum, a call). Underscore names of the learner's own, augmented
assignment, classes, closures, decorators,
``jax.custom_vjp`` and every public JAX, NumPy, optax- or flax-style spelling are untouched: every gallery
file, reference and baseline passes (``tests/test_source_policy.py``, and the measurement against
RestrictedPython in ``benchmarks/source_policy.py``).

``JAXPLAY_SOURCE_POLICY=0`` turns the layer off (the attack and forgery suites run that way too, so the
deeper defences stay tested on the very payloads this layer would stop first).
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from grader import pysource

ENABLED = os.environ.get("JAXPLAY_SOURCE_POLICY", "1") != "0"
"""Whether ``grade`` applies the policy (on by default)."""

PRIVATE_MODULE_PARTS = {"_src", "_C", "xla_extension", "_jax", "_pretty_printer"}
"""Module path components that are a library's private implementation (``jax._src``, ``jaxlib._jax``)."""
FORBIDDEN_MODULES = {
    "gc": "the garbage collector lets code reach every object of the process, the grader's included",
    "ctypes": "`ctypes` calls native code around Python and JAX",
    "importlib": "modules are imported with a plain `import` statement",
    "inspect": None,  # allowed except its frame functions (see FRAME_FUNCTIONS)
    "grader": "the grader's own modules are not part of a submission",
    "problems": "the problems' data and checks are not part of a submission",
    "builtins": "the interpreter's built-in namespace is not part of a submission",
    "_thread": "threads of your own are not needed",
    "__main__": "the running program's main module is the grader's",
    "traceback": None,
}
FRAME_FUNCTIONS = {
    ("sys", "_getframe"), ("sys", "_current_frames"), ("sys", "settrace"), ("sys", "setprofile"),
    ("sys", "_getframemodulename"), ("sys", "modules"), ("sys", "meta_path"), ("sys", "path_hooks"),
    ("sys", "exc_info"), ("sys", "exception"), ("sys", "last_traceback"), ("sys", "addaudithook"),
    ("inspect", "currentframe"), ("inspect", "stack"), ("inspect", "trace"), ("inspect", "getouterframes"),
    ("inspect", "getinnerframes"), ("inspect", "getframeinfo"), ("inspect", "getmembers"),
    ("traceback", "walk_stack"), ("traceback", "extract_stack"), ("traceback", "walk_tb"),
}
FORBIDDEN_ATTRIBUTES = {
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace", "gi_frame", "cr_frame", "ag_frame",
    "tb_frame", "tb_next", "gi_code", "cr_code", "__subclasses__", "__globals__", "__code__", "__builtins__",
    "__closure__", "__import__", "__loader__", "__spec__", "__getattribute__", "__reduce__", "__reduce_ex__",
    "__traceback__", "__bases__", "__base__", "__mro__", "func_globals", "__self__", "__func__", "__wrapped__",
    "__objclass__", "_getframe", "modules",
}
"""Attributes that reach frames, globals, code objects, other classes' internals or the module registry.
``modules`` is refused as an attribute of ``sys`` only (see ``_attribute``)."""
FORBIDDEN_CALLS = {
    "eval": "code built at run time cannot be read before it runs; write it out",
    "exec": "code built at run time cannot be read before it runs; write it out",
    "compile": "code built at run time cannot be read before it runs; write it out",
    "__import__": "import modules with a plain `import` statement",
    "globals": "module-level names are used directly",
    "vars": "read attributes by name (`obj.name`)",
    "breakpoint": "there is no debugger in the grader; print instead",
}
NAME_ARGUMENT_CALLS = {"getattr", "setattr", "delattr", "hasattr"}
HARMLESS_DUNDERS = {"__array__", "__jax_array__", "__len__", "__iter__", "__call__", "__name__", "__qualname__",
                    "__doc__", "__module__", "__annotations__", "__dataclass_fields__", "__getitem__"}
"""Dunder names honest code asks about (``hasattr(x, "__array__")``, ``getattr(f, "__name__")``)."""
FORBIDDEN_NAMES = {"__builtins__", "__loader__", "__spec__", "__import__"}


@dataclass(frozen=True)
class Refusal:
    """Why a submission is refused before it runs: the line and a sentence saying what to use instead."""

    line: int
    what: str
    instead: str
    reaching: bool = True
    """False for code refused because it cannot be read at all (not for what it reaches)."""

    def message(self) -> str:
        if not self.reaching:
            return (f"Line {self.line}: {self.what}. The grader reads every submission before running it and runs "
                    f"none it cannot read; {self.instead}.")
        return (f"Line {self.line}: {self.what}. The grader refuses code that reaches into the grader, the "
                f"interpreter's internals or JAX's private modules, before running it; {self.instead}.")


_PUBLIC_INSTEAD = ("use JAX's public API instead (`jax`, `jax.numpy`, `jax.lax`, `jax.nn`, `jax.random`, "
                   "`jax.tree_util`...)")


UNREADABLE = Refusal(1, "the code is nested too deeply for the grader to read (Python's parser gives up on it)",
                     "split the long expression into steps, each assigned to a name", reaching=False)


def unreadable(code: str) -> Refusal | None:
    """A refusal when the trusted side cannot parse ``code`` at all (thousands of nested operators exhaust
    Python's parser), whether or not the policy is on: a program the grader cannot read is never run, passed or
    taken for the grader's own error. None for readable code, and for a syntax error (the child reports it with
    its line)."""
    try:
        pysource.parse(code)
    except (RecursionError, MemoryError):
        return UNREADABLE
    except (SyntaxError, ValueError):
        return None
    return None


def check(code: str) -> Refusal | None:
    """The first thing in ``code`` (in reading order) the policy refuses, or None (None too when the code does
    not parse: the child reports the syntax error with its line; ``unreadable`` refuses what cannot be parsed
    at all)."""
    try:
        tree = pysource.parse(code)
    except (SyntaxError, ValueError):
        return None
    except (MemoryError, RecursionError):
        return UNREADABLE
    found: list[tuple[int, int, int, Refusal]] = []
    try:
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            refusal = _node(node, aliases)
            if refusal is not None:
                found.append((refusal.line, getattr(node, "col_offset", 0), getattr(node, "end_col_offset", 0),
                              refusal))
    except RecursionError:
        return UNREADABLE
    return min(found, key=lambda f: f[:3])[3] if found else None


def _module_aliases(tree: ast.AST) -> dict[str, str]:
    """The names ``import sys as S`` (and the like) binds to the modules whose attributes the policy reads."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in {"sys", "inspect", "traceback"}:
                    aliases[alias.asname] = alias.name
    return aliases


def _module(name: str, line: int) -> Refusal | None:
    parts = name.split(".")
    top = parts[0]
    if top.startswith("jaxplay"):
        return Refusal(line, f"`import {name}` reaches the grader's payload in your process",
                       "your function gets its inputs as arguments and returns its result")
    if any(p in PRIVATE_MODULE_PARTS for p in parts[1:]) or (top in ("jax", "jaxlib") and len(parts) > 1
                                                             and parts[1].startswith("_")):
        return Refusal(line, f"`{name}` is a private module of {top}", _PUBLIC_INSTEAD)
    why = FORBIDDEN_MODULES.get(top)
    if why:
        return Refusal(line, f"`import {name}`: {why}", "write the computation with JAX and NumPy")
    return None


def _node(node: ast.AST, aliases: dict[str, str]) -> Refusal | None:
    line = getattr(node, "lineno", 1)
    if isinstance(node, ast.Import):
        for alias in node.names:
            refusal = _module(alias.name, line)
            if refusal:
                return refusal
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            return Refusal(line, "a relative import reaches modules beside the grader's payload",
                           "import only installed libraries")
        module = node.module or ""
        refusal = _module(module, line)
        if refusal:
            return refusal
        for alias in node.names:
            if (module.split(".")[0], alias.name) in FRAME_FUNCTIONS:
                return Refusal(line, f"`from {module} import {alias.name}` reaches the interpreter's frames or "
                               "module registry", "your function gets everything it needs as arguments")
            refusal = _module(f"{module}.{alias.name}", line)
            if refusal and module.split(".")[0] in ("jax", "jaxlib"):
                return refusal
            if alias.name in FORBIDDEN_ATTRIBUTES - {"modules"} or alias.name in FORBIDDEN_CALLS:
                return Refusal(line, f"`from {module} import {alias.name}`", _PUBLIC_INSTEAD)
    elif isinstance(node, ast.Attribute):
        return _attribute(node, line, aliases)
    elif isinstance(node, ast.Name):
        if node.id in FORBIDDEN_NAMES:
            return Refusal(line, f"`{node.id}` is the interpreter's internals", "import modules with `import`")
    elif isinstance(node, ast.Call):
        return _call(node, line)
    return None


def _attribute(node: ast.Attribute, line: int, aliases: dict[str, str]) -> Refusal | None:
    attr = node.attr
    base = node.value.id if isinstance(node.value, ast.Name) else None
    base = aliases.get(base, base) if base else None
    if attr in PRIVATE_MODULE_PARTS:
        return Refusal(line, f"`.{attr}` is a library's private implementation", _PUBLIC_INSTEAD)
    if base and (base, attr) in FRAME_FUNCTIONS:
        return Refusal(line, f"`{base}.{attr}` reaches the interpreter's frames or module registry",
                       "your function gets everything it needs as arguments and returns its result")
    if attr == "modules":
        return None if base != "sys" else Refusal(line, "`sys.modules`", "import modules with `import`")
    if attr in FORBIDDEN_ATTRIBUTES:
        return Refusal(line, f"`.{attr}` reaches frames, globals, code objects or other classes' internals",
                       "keep to your own values, passed as arguments or closed over")
    return None


def _call(node: ast.Call, line: int) -> Refusal | None:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else None
    if name in FORBIDDEN_CALLS:
        return Refusal(line, f"`{name}(...)`", FORBIDDEN_CALLS[name])
    if name in NAME_ARGUMENT_CALLS and name != "hasattr" and len(node.args) >= 2:
        # a name built at run time (`getattr(jnp, "float" + str(bits))`, `getattr(self, f"dense_{i}")`) is
        # honest code's business: only a literal name that reaches the interpreter's internals is refused here
        key = node.args[1]
        text = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        if text is not None and (text in FORBIDDEN_ATTRIBUTES - {"modules", "__dict__"}
                                 or text in PRIVATE_MODULE_PARTS
                                 or (text.startswith("__") and text.endswith("__") and text not in HARMLESS_DUNDERS)):
            return Refusal(line, f"`{name}(..., {text!r})`", "keep to your own values and JAX's public API")
    return None

"""The cost of a program at a realistic size, measured inside the child (a job with ``"kind": "cost"``).

Loaded by ``child.py`` from its own folder (like ``counterfactual.py``); standard library and JAX only. For
each program of the job (a piece of code, the entry function's argument shapes, a label) it traces the entry
function with ``jax.jit(...).trace`` on ``jax.ShapeDtypeStruct`` arguments, lowers and compiles it, and reads:

- XLA's memory analysis of the compiled program (temporary, argument, output bytes);
- XLA's cost analysis (FLOPs, bytes accessed), corrected for loops: XLA counts a ``while`` body once
  whatever its trip count, so each loop with a known trip count adds ``(trip - 1)`` times XLA's own count of
  its body and condition (``loop_corrected_costs``);
- XLA's FLOP count of the program as JAX lowered it, before XLA's own passes (on the CPU they may merge a
  checkpoint's recomputation back into the forward pass; this count still shows it);
- the program's size (equations in the traced program, instructions in the optimised HLO);
- the residuals the backward pass reads (``saved_residuals``), found in the traced program itself, because
  the learner's function calls ``jax.grad`` inside: every value an equation of a transposed (backward) pass
  reads that was computed outside that pass, or is an input. That is the set JAX's own
  ``jax.ad_checkpoint.print_saved_residuals`` lists for the differentiated function (a test checks it).

With a ``"target"`` in the job (``grader/cost/targets.py``) the programs are compiled for that TPU instead
of this machine's CPU: libtpu gives a TPU topology's devices without a TPU (``target_device``), the arguments
are placed on one of them, and XLA's TPU compiler plans the program ahead of time. Nothing runs there either.

Nothing runs at that size: compiling allocates no arrays. Code is loaded program by program in the order of
the job; the parent sends trusted code (reference, baseline) and the learner's code in separate jobs.
"""
import contextlib
import json
import linecache
import os
import re
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

LEARNER_FILE = "solution.py"
MAX_RESIDUALS = 200
"""Residuals listed per program (their bytes are all summed)."""


# ----------------------------------------------------------------------------------------------------
# Loading code

def load_entry(code, filename, entry, child):
    """``(function, None)`` or ``(None, error dict)`` shaped like ``child.run_job``'s load errors."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        compiled = compile(code, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return None, {"status": "syntax_error", "message": "%s: %s" % (type(exc).__name__, getattr(exc, "msg", exc)),
                      "line": getattr(exc, "lineno", None),
                      "traceback": "".join(traceback.format_exception_only(type(exc), exc))[-4000:]}
    module = type(sys)(filename[:-3] if filename.endswith(".py") else filename)
    module.__file__ = filename
    try:
        exec(compiled, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - the learner's code may raise anything
        if isinstance(exc, MemoryError):
            return None, {"status": "memory_error", "message": "MemoryError", "traceback": trace_of(exc, filename)}
        return None, {"status": "load_error", "message": child["describe"](exc), "traceback": trace_of(exc, filename)}
    fn = module.__dict__.get(entry)
    if not callable(fn):
        return None, {"status": "missing_entry", "message": "Your code must define a function named `%s`." % entry}
    return fn, None


def trace_of(exc, filename):
    """The exception with only ``filename``'s frames, plus the line that raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename == filename]
    if frames and (not mine or frames[-1] is not mine[-1]):
        mine.append(frames[-1])
    text = "Traceback (most recent call last):\n" if mine else ""
    text += "".join(traceback.format_list(mine))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text[-8000:]


# ----------------------------------------------------------------------------------------------------
# Arguments: shapes only

def abstract_args(t, specs, shapes, device=None):
    """The entry function's arguments as shapes only: ``jax.ShapeDtypeStruct`` for each array (of the
    argument's ``dtype``) and each non-static number, the value of each static number, a key's shape for a
    PRNG key (kinds as in ``child.build_args``); each placed on ``device`` when one is given (a TPU's)."""
    args = _abstract_args(t, specs, shapes)
    if device is None:
        return args
    jax = t["jax"]
    on = jax.sharding.SingleDeviceSharding(device)
    return jax.tree_util.tree_map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=on) if isinstance(a, jax.ShapeDtypeStruct) else a,
        args)


def _abstract_args(t, specs, shapes):
    jax, jnp = t["jax"], t["jnp"]
    args = []
    for spec in specs:
        value = shapes[spec["name"]]
        kind = spec["kind"]
        dtype = jnp.dtype(spec.get("dtype") or "float32")
        if kind in ("int", "float"):
            python = int if kind == "int" else float
            args.append(python(value) if spec.get("static") else
                        jax.ShapeDtypeStruct((), jnp.int32 if kind == "int" else jnp.float32))
        elif kind == "ints":
            args.append(tuple(int(v) for v in value) if spec.get("static") else
                        tuple(jax.ShapeDtypeStruct((), jnp.int32) for _ in value))
        elif kind == "key":
            args.append(jax.eval_shape(lambda: jax.random.key(0)))
        elif kind in ("tree", "float32_tree"):
            args.append(abstract_tree(jax, value, dtype))
        else:
            args.append(jax.ShapeDtypeStruct(tuple(value), dtype))
    return args


# ----------------------------------------------------------------------------------------------------
# The target: this machine's CPU, or a TPU compiled for ahead of time

TPU_ENV = {
    "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",  # no /tmp/libtpu_lockfile: it guards a real chip, and two measurements
                                        # at once would otherwise refuse each other
    "TPU_LOG_DIR": "disabled",          # no log files under /tmp/tpu_logs (a folder that does not exist)
    "TPU_STDERR_LOG_LEVEL": "3",
    "TPU_MIN_LOG_LEVEL": "3",
}
"""Set before libtpu loads. No TPU is named (no TPU_ACCELERATOR_TYPE): the topology says which chip."""


def target_device(t, target):
    """One device of the target's TPU topology (``{"topology": "v5e:2x2", "options": {...}}``), or None for
    this machine. libtpu is loaded here, in the child, the first time; it needs no TPU."""
    if not target or target.get("platform", "cpu") == "cpu":
        return None
    for key, value in TPU_ENV.items():
        os.environ[key] = value
    # libtpu checks that the folder above the working folder can be read (its "runfiles"): a fork server's
    # worker works in a folder of its own below the server's, which it may not list, so libtpu starts from
    # a folder below the worker's
    here = os.getcwd()
    below = os.path.join(here, "libtpu")
    os.makedirs(below, exist_ok=True)
    os.chdir(below)
    try:
        return _topology_device(target)
    finally:
        os.chdir(here)


def _topology_device(target):
    from jax.experimental import topologies
    topology = topologies.get_topology_desc(platform="tpu", topology_name=target["topology"],
                                            **target.get("options", {}))
    device = topology.devices[0]
    if target.get("all_devices"):
        return TopologyDevices(device, list(topology.devices))
    return device


class TopologyDevices:
    """Every chip of the topology, for a program that builds its own mesh from ``jax.devices()`` (a ring of
    ``ppermute``): while it is traced and compiled, ``jax.devices()`` answers these chips and the arguments
    are left unplaced, so the program's own mesh places them."""

    def __init__(self, first, devices):
        self.first, self.devices = first, devices

    def __enter__(self):
        import jax
        self._saved = jax.devices
        jax.devices = lambda backend=None: list(self.devices)
        self._default = jax.default_device(self.first)
        self._default.__enter__()
        return self

    def __exit__(self, *exc):
        import jax
        self._default.__exit__(*exc)
        jax.devices = self._saved
        return False


def is_shape(value):
    return isinstance(value, list) and all(isinstance(d, int) for d in value)


def abstract_tree(jax, value, dtype):
    """A pytree of ``ShapeDtypeStruct``: dicts stay dicts, a shape (a list of ints) is a leaf, any other list
    is a list of subtrees."""
    if isinstance(value, dict):
        return {k: abstract_tree(jax, v, dtype) for k, v in value.items()}
    if is_shape(value):
        return jax.ShapeDtypeStruct(tuple(value), dtype)
    return [abstract_tree(jax, v, dtype) for v in value]


def leaf_names(specs, shapes):
    """The name of each input leaf of the traced program, in flattening order (``params['w1']``)."""
    def walk(prefix, value):
        if isinstance(value, dict):
            return [n for k in sorted(value) for n in walk("%s['%s']" % (prefix, k), value[k])]
        if is_shape(value):
            return [prefix]
        return [n for i, v in enumerate(value) for n in walk("%s[%d]" % (prefix, i), v)]

    names = []
    for spec in specs:
        if spec["kind"] in ("int", "float", "ints") and spec.get("static"):
            continue
        value = shapes[spec["name"]]
        if spec["kind"] == "ints":
            names.extend("%s[%d]" % (spec["name"], i) for i in range(len(value)))
        elif spec["kind"] in ("tree", "float32_tree"):
            names.extend(walk(spec["name"], value))
        else:
            names.append(spec["name"])
    return names


# ----------------------------------------------------------------------------------------------------
# XLA's figures

def memory_figures(compiled):
    stats = compiled.memory_analysis()
    peak = getattr(stats, "peak_memory_in_bytes", None)
    return {
        "peak_bytes": int(peak) if peak is not None else None,
        "temp_bytes": int(stats.temp_size_in_bytes),
        "argument_bytes": int(stats.argument_size_in_bytes),
        "output_bytes": int(stats.output_size_in_bytes),
        "alias_bytes": int(stats.alias_size_in_bytes),
    }


def _cost_dict(raw):
    if isinstance(raw, (list, tuple)):  # older JAX: one dict per device program
        raw = raw[0] if raw else {}
    return dict(raw or {})


_COMP_HEAD = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s+\(.*\{\s*$")
_WHILE = re.compile(r"\bwhile\(.*?condition=%?([\w.\-]+), body=%?([\w.\-]+)")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_REF = re.compile(r"%([\w.\-]+)")
COST_KEYS = ("flops", "bytes accessed", "transcendentals")


def split_computations(text):
    """``({name: text}, [names in order], entry name)`` of an HLO module's text."""
    comps, order, entry, current, lines = {}, [], None, None, []
    for line in text.splitlines():
        if current is None:
            m = _COMP_HEAD.match(line)
            if m:
                current, lines = m.group(2), [line]
                if m.group(1):
                    entry = current
        else:
            lines.append(line)
            if line.startswith("}"):
                comps[current] = "\n".join(lines)
                order.append(current)
                current = None
    return comps, order, entry


class LoopCosts:
    """XLA's own cost analysis of each loop body of a compiled module, to multiply by its trip count.

    ``HloCostAnalysis`` visits a ``while`` body once. Each body (and condition) is cut out of the optimised
    module's text with the computations it calls, parsed back as a module of its own and analysed by the same
    XLA function that ``Compiled.cost_analysis`` calls."""

    def __init__(self, t, compiled):
        self.t = t
        self.module = compiled.runtime_executable().hlo_modules()[0]
        self.text = self._text(large_constants=False)
        self.comps, self.order, self.entry = split_computations(self.text)
        names = set(self.comps)
        self.callees = {n: [c for c in _REF.findall(body.split("\n", 1)[-1]) if c in names and c != n]
                        for n, body in self.comps.items()}
        self.cache = {}
        self.extras = {}
        self.loops = []

    def _text(self, large_constants):
        import jaxlib._hlo as hlo
        options = hlo.HloPrintOptions()
        options.print_metadata = False  # stack frame ids would not resolve in a module cut out of this one
        options.print_large_constants = large_constants
        return self.module.to_string(options)

    def instructions(self):
        return sum(len(c.instructions()) for c in self.module.computations())

    def cost(self, name):
        """XLA's cost analysis of computation ``name`` as the entry of a module of its own."""
        if name not in self.cache:
            import jaxlib._hlo as hlo
            from jax._src.lib import xla_client
            need, stack = [], [name]
            while stack:
                c = stack.pop()
                if c not in need:
                    need.append(c)
                    stack.extend(self.callees[c])
            parts = [self.comps[c] for c in self.order if c in need and c != name]
            main = re.sub(r"^(ENTRY\s+)?", "ENTRY ", self.comps[name], count=1)
            text = "HloModule part\n\n" + "\n\n".join(parts + [main]) + "\n"
            if "{...}" in text:  # a large constant elided when printed: print the module again with it
                comps, _, _ = split_computations(self._text(large_constants=True))
                text = "HloModule part\n\n" + "\n\n".join(
                    [comps[c] for c in self.order if c in need and c != name]
                    + [re.sub(r"^(ENTRY\s+)?", "ENTRY ", comps[name], count=1)]) + "\n"
            part = hlo.hlo_module_from_text(text)
            client = self.t["jax"].devices()[0].client
            self.cache[name] = _cost_dict(xla_client._xla.hlo_module_cost_analysis(client, part))
        return self.cache[name]

    def extra(self, name, key, depth=0):
        """What XLA's count for computation ``name`` misses: each loop's body and condition past their first
        visit, nested loops included."""
        if (name, key) in self.extras:
            return self.extras[name, key]
        extra = 0.0
        if depth > 16:
            return extra
        for line in self.comps[name].splitlines():
            m = _WHILE.search(line)
            if not m:
                continue
            cond, body = m.groups()
            trip = _TRIP.search(line)
            inferred = None if trip else self.infer_trip(name, line, cond, body)
            if trip is None and inferred is None:  # an unknown trip count (a while_loop on a traced bound): counted once
                if key == "flops":
                    self.loops.append({"trip_count": None, "body_flops": self.cost(body).get("flops", 0.0)})
                continue
            n = int(trip.group(1)) if trip else inferred
            once = self.cost(body).get(key, 0.0) + self.cost(cond).get(key, 0.0)
            inner = self.extra(body, key, depth + 1) + self.extra(cond, key, depth + 1)
            extra += (n - 1) * once + n * inner
            if key == "flops":
                self.loops.append({"trip_count": n, "body_flops": self.cost(body).get("flops", 0.0)})
        for callee in self.callees[name]:  # loops inside called computations (call, conditional)
            if callee not in self._loop_parts():
                extra += self.extra(callee, key, depth + 1)
        self.extras[name, key] = extra
        return extra

    def infer_trip(self, caller, line, cond, body):
        """The trip count of a loop whose compiler did not record it (the TPU's does not): a condition
        ``counter < N`` on a tuple element that starts at a constant and that the body adds 1 to; else None."""
        try:
            cdefs, bdefs, odefs = _defs(self.comps[cond]), _defs(self.comps[body]), _defs(self.comps[caller])
            root = _root(self.comps[cond])
            op, args = _op(cdefs[root])
            if op != "compare" or "direction=LT" not in cdefs[root] or len(args) != 2:
                return None
            index = _tuple_index(cdefs, args[0])
            limit = _constant(cdefs, args[1])
            operand = _op(line[line.index("=") + 1:])[1][0]
            start = _constant(odefs, _op(odefs[operand])[1][index]) if _op(odefs[operand])[0] == "tuple" else None
            bop, bargs = _op(bdefs[_root(self.comps[body])])
            if None in (index, limit, start) or bop != "tuple":
                return None
            sop, sargs = _op(bdefs[bargs[index]])
            if sop != "add" or sorted([_tuple_index(bdefs, a) == index for a in sargs]) != [False, True] or \
                    1 not in [_constant(bdefs, a) for a in sargs]:
                return None
            return max(0, limit - start)
        except (KeyError, IndexError, ValueError):
            return None

    def _loop_parts(self):
        """Computations that are some loop's body or condition (counted by ``extra`` through their loop)."""
        if not hasattr(self, "_parts"):
            self._parts = set()
            for body in self.comps.values():
                for m in _WHILE.finditer(body):
                    self._parts.update(m.groups())
        return self._parts


_DEF = re.compile(r"^\s*(ROOT\s+)?%([\w.\-]+)\s*=\s*(.*)$")


def _defs(comp):
    """``{name: right-hand side}`` of one computation's instructions."""
    return {m.group(2): m.group(3) for m in map(_DEF.match, comp.splitlines()[1:]) if m}


def _root(comp):
    return next(m.group(2) for m in map(_DEF.match, comp.splitlines()[1:]) if m and m.group(1))


def _op(rhs):
    """``(opcode, [operand names])`` of an instruction's right-hand side (its type may hold ``T(8,128)``)."""
    body, before = rhs, None
    while body != before:  # drop layouts and attributes in braces, innermost first
        before, body = body, re.sub(r"\{[^{}]*\}", "", body)
    m = re.search(r"(?:^|\s)([a-z][\w\-]*)\(([^()]*)\)", body)
    if not m:
        return "", []
    return m.group(1), [a.strip().lstrip("%") for a in m.group(2).split(",") if a.strip()]


def _tuple_index(defs, name):
    """``k`` when ``name`` is ``get-tuple-element(parameter), index=k``, following copies."""
    rhs = defs.get(name, "")
    op, args = _op(rhs)
    if op == "copy" and args:
        return _tuple_index(defs, args[0])
    m = re.search(r"index=(\d+)", rhs)
    return int(m.group(1)) if op == "get-tuple-element" and m else None


def _constant(defs, name):
    """The integer a scalar ``constant(N)`` holds, following copies; else None."""
    op, args = _op(defs.get(name, ""))
    if op == "copy" and args:
        return _constant(defs, args[0])
    if op == "constant" and len(args) == 1 and re.fullmatch(r"-?\d+", args[0]):
        return int(args[0])
    return None


def loop_corrected_costs(t, compiled):
    """XLA's cost analysis with every loop counted as many times as it runs, and the raw figures beside."""
    raw = _cost_dict(compiled.cost_analysis())
    out = {"flops_xla": raw.get("flops"), "bytes_accessed_xla": raw.get("bytes accessed"),
           "transcendentals_xla": raw.get("transcendentals")}
    try:
        loops = LoopCosts(t, compiled)
        out["hlo_instructions"] = loops.instructions()
        for key, field in (("flops", "flops"), ("bytes accessed", "bytes_accessed"),
                           ("transcendentals", "transcendentals")):
            out[field] = None if raw.get(key) is None else float(raw[key]) + loops.extra(loops.entry, key)
        out["loops"] = loops.loops
        if any(loop["trip_count"] is None for loop in loops.loops):
            out["cost_note"] = "a loop with a trip count XLA cannot know is counted once"
    except Exception as exc:  # noqa: BLE001 - the raw figures still stand, said to be uncorrected
        out.update(flops=None, bytes_accessed=None, transcendentals=None,
                   cost_note="loops could not be counted (%s: %s)" % (type(exc).__name__, str(exc)[:160]))
    return out


# ----------------------------------------------------------------------------------------------------
# The traced program: size, checkpoints and the residuals its backward passes read

def _subjaxprs(t, eqn):
    for value in eqn.params.values():
        if isinstance(value, (t["ClosedJaxpr"], t["Jaxpr"])):
            yield value
        elif isinstance(value, (tuple, list)):
            for v in value:
                if isinstance(v, (t["ClosedJaxpr"], t["Jaxpr"])):
                    yield v


def _open(t, jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, t["ClosedJaxpr"]) else jaxpr


def count_eqns(t, jaxpr, depth=0):
    jaxpr = _open(t, jaxpr)
    total = len(jaxpr.eqns)
    if depth < 64:
        for e in jaxpr.eqns:
            total += sum(count_eqns(t, s, depth + 1) for s in _subjaxprs(t, e))
    return total


CHECKPOINT_PRIMITIVES = ("remat2", "checkpoint", "remat")


def has_checkpoint(t, jaxpr, depth=0):
    for e in _open(t, jaxpr).eqns:
        if e.primitive.name in CHECKPOINT_PRIMITIVES and id(e.primitive) in t["own_primitives"]:
            return True
        if depth < 64 and any(has_checkpoint(t, s, depth + 1) for s in _subjaxprs(t, e)):
            return True
    # a differentiated checkpoint leaves its forward pass inlined and its mark on the name stacks
    return False


def _nbytes(aval):
    size = 1
    for d in getattr(aval, "shape", ()):
        size *= int(d)
    return size * getattr(getattr(aval, "dtype", None), "itemsize", 4)


def _line_in(eqn, filename):
    try:
        for frame in eqn.source_info.traceback.frames:
            if frame.file_name == filename:
                return int(frame.line_num)
    except Exception:  # noqa: BLE001
        pass
    return None


class Residuals:
    """The values each backward pass of a traced program reads from outside itself."""

    SAVED_MARKERS = ("reduce_precision",)
    """What ``jax.checkpoint`` puts on a value its policy saves (an identity): named by its input instead."""

    def __init__(self, t, child, filename, input_names):
        self.t, self.child, self.filename, self.input_names = t, child, filename, input_names
        self.found = []
        self.backward = False

    def is_backward(self, eqn):
        stack = self.child["name_stack_text"](self.t, getattr(eqn.source_info, "name_stack", None))
        return "transpose(" in stack

    def walk(self, jaxpr, scope="", outer=None, depth=0):
        """Record the residuals of ``jaxpr``'s backward passes; ``outer`` gives the origin of each of its
        inputs (the values an enclosing equation binds them to), or None at the top."""
        jaxpr = _open(self.t, jaxpr)
        origin = {}
        for i, v in enumerate(jaxpr.invars):
            if outer is not None and i < len(outer) and outer[i] is not None:
                origin[v] = outer[i]
            elif outer is None and i < len(self.input_names):
                origin[v] = ("argument", self.input_names[i], None)
            else:
                origin[v] = ("input", "an input of this region", None)
        for v in jaxpr.constvars:
            origin[v] = ("constant", "a constant", None)
        read = set()
        for e in jaxpr.eqns:
            if self.is_backward(e):
                self.backward = True
                for v in e.invars:
                    if isinstance(v, self.t["Literal"]) or v in read or v not in origin:
                        continue
                    read.add(v)
                    self.found.append(self.describe(v, origin, scope))
                continue
            for v in e.outvars:
                origin[v] = ("intermediate", e.primitive.name, e)
            if depth < 32:
                self.walk_inside(e, origin, scope, depth)

    def walk_inside(self, e, origin, scope, depth):
        name = e.primitive.name
        where = "inside `lax.scan` (per step)" if name == "scan" else (
            "inside `lax.while_loop` (per step)" if name == "while" else "inside `%s`" % name)
        scope = (scope + " > " if scope else "") + where
        bound = [origin.get(v) if not isinstance(v, self.t["Literal"]) else None for v in e.invars]
        if name == "scan":  # the scanned-over inputs arrive one step's slice at a time
            first_xs = e.params.get("num_consts", 0) + e.params.get("num_carry", 0)
            bound = [b if (i < first_xs or b is None) else (b[0], b[1] + " (one step's slice)", b[2])
                     for i, b in enumerate(bound)]
        for sub in _subjaxprs(self.t, e):
            n = len(_open(self.t, sub).invars)
            if n == len(bound):
                inner = bound
            elif name == "cond" and n == len(bound) - 1:
                inner = bound[1:]
            else:
                inner = [None] * n
            self.walk(sub, scope, inner, depth + 1)

    def describe(self, v, origin, scope):
        kind, label, eqn = origin[v]
        primitive = label
        if eqn is not None and eqn.primitive.name in self.SAVED_MARKERS and eqn.invars:
            source = origin.get(eqn.invars[0])
            if source and source[2] is not None:
                primitive = source[1]
                line = _line_in(eqn, self.filename) or _line_in(source[2], self.filename)
            else:
                line = _line_in(eqn, self.filename)
        else:
            line = _line_in(eqn, self.filename) if eqn is not None else None
        aval = v.aval
        name = label if kind != "intermediate" else "output of %s" % primitive
        code = linecache.getline(self.filename, line).strip()[:160] if line else ""
        return {"name": name, "kind": kind, "primitive": primitive if kind == "intermediate" else None,
                "shape": [int(d) for d in aval.shape], "dtype": str(aval.dtype), "bytes": _nbytes(aval),
                "line": line, "code": code, "scope": scope}


def residual_figures(t, child, closed, filename, input_names):
    r = Residuals(t, child, filename, input_names)
    r.walk(closed)
    return {"has_backward": r.backward, "residual_bytes": sum(x["bytes"] for x in r.found),
            "residuals": r.found[:MAX_RESIDUALS], "residual_count": len(r.found)}


# ----------------------------------------------------------------------------------------------------

def measure_program(t, child, fn, specs, program, filename, device=None):
    """One program's figures, or ``{"status": "error", ...}`` when it cannot be traced or compiled (on
    ``device``'s TPU when one is given)."""
    prepared = prepare_program(t, child, fn, specs, program, filename, device)
    if prepared.get("status") == "error":
        return prepared
    compile_program(child, prepared, filename)
    return finish_program(t, child, fn, specs, program, filename, device, prepared)


def prepare_program(t, child, fn, specs, program, filename, device=None):
    """Trace and lower one program (Python: the learner's function runs here, in this thread). A dict holding
    the lowered program, or ``{"status": "error", ...}``."""
    jax = t["jax"]
    shapes = program["shapes"]
    static = tuple(i for i, s in enumerate(specs) if s.get("static"))
    out = {"label": program["label"]}
    started = time.monotonic()
    try:
        every_chip = isinstance(device, TopologyDevices)  # the program's own mesh places its arguments
        with device if every_chip else contextlib.nullcontext():
            args = abstract_args(t, specs, shapes, None if every_chip else device)
            traced = jax.jit(fn, static_argnums=static).trace(*args)
            closed = traced.jaxpr
            lowered = traced.lower()
    except BaseException as exc:  # noqa: BLE001 - the learner's function may raise anything while traced
        if isinstance(exc, MemoryError):
            raise
        message = child["describe"](exc)
        return dict(out, status="error", message=message, traceback=trace_of(exc, filename))
    return {"out": out, "closed": closed, "lowered": lowered, "traced_s": time.monotonic() - started,
            "every_chip": every_chip, "device": device}


def compile_program(child, prepared, filename):
    """XLA's compile of a lowered program (outside Python's lock: several run side by side in threads)."""
    started = time.monotonic()
    try:
        device = prepared["device"]
        with device if prepared["every_chip"] else contextlib.nullcontext():
            prepared["compiled"] = prepared["lowered"].compile()
    except BaseException as exc:  # noqa: BLE001 - reported as this program's error
        if isinstance(exc, MemoryError):
            raise
        prepared["error"] = dict(prepared["out"], status="error", message=child["describe"](exc),
                                 traceback=trace_of(exc, filename))
    prepared["compile_s"] = time.monotonic() - started


def finish_program(t, child, fn, specs, program, filename, device, prepared):
    """The figures of a compiled program."""
    if "error" in prepared:
        return prepared["error"]
    jax = t["jax"]
    shapes = program["shapes"]
    static = tuple(i for i, s in enumerate(specs) if s.get("static"))
    out, closed, lowered, compiled = prepared["out"], prepared["closed"], prepared["lowered"], prepared["compiled"]
    out["status"] = "ok"
    out["compile_s"] = round(prepared["compile_s"], 3)
    out.update(memory_figures(compiled))
    out.update(loop_corrected_costs(t, compiled))
    try:  # the program as JAX wrote it, before XLA's passes (which may merge a recomputation away again)
        out["flops_lowered"] = _cost_dict(lowered.cost_analysis()).get("flops")
        if out["flops_lowered"] is None and device is not None:  # the TPU's client counts nothing before its passes:
            # the same program lowered for this machine is the same program as written
            cpu = jax.jit(fn, static_argnums=static).trace(*abstract_args(t, specs, shapes)).lower()
            out["flops_lowered"] = _cost_dict(cpu.cost_analysis()).get("flops")
    except Exception:  # noqa: BLE001
        out["flops_lowered"] = None
    out["jaxpr_eqns"] = count_eqns(t, closed)
    out["checkpointed"] = has_checkpoint(t, closed)
    if program.get("residuals") or out["checkpointed"]:
        try:
            out.update(residual_figures(t, child, closed, filename, leaf_names(specs, shapes)))
        except Exception as exc:  # noqa: BLE001 - ours, said so, never the learner's fault
            out["residual_error"] = "%s: %s" % (type(exc).__name__, str(exc)[:200])
    return out


COMPILE_THREADS = 4
"""At most this many programs compiled at once (and no more than the machine's cores): XLA's compile runs
outside Python's lock, so a job's programs (a sweep's sizes, the stacked blocks) compile side by side."""


def run(t, job, guard, child, progress=None):
    """The child's answer to a cost job: ``{"status": "ok", "programs": [...]}`` or a load error.
    ``progress(text)`` hears how far it is (the Cost tab's status line): each program is traced in turn, then
    they compile side by side (``COMPILE_THREADS``), then their figures are read."""
    specs = job["args"]
    deadline = time.monotonic() + float(job.get("budget_s", 1e9))
    try:
        device = target_device(t, job.get("target"))
    except Exception as exc:  # noqa: BLE001 - ours: libtpu missing or refusing the topology
        return {"status": "target_error", "message": "%s: %s" % (type(exc).__name__, str(exc)[:400])}
    where = (job.get("target") or {}).get("name", "cpu")
    total = len(job["programs"])
    loaded = {}
    prepared = []
    for program in job["programs"]:
        filename = program.get("file") or LEARNER_FILE
        if filename not in loaded:
            fn, error = load_entry(job["codes"][filename], filename, job["entry"], child)
            if guard is not None and guard.changed():
                return guard.report()
            if error is not None:
                error["file"] = filename
                return error
            loaded[filename] = fn
        if time.monotonic() > deadline:
            prepared.append(None)
            continue
        if progress is not None:
            progress("tracing %s (%d of %d programs), then compiling for %s" % (program["label"], len(prepared) + 1,
                                                                              total, where))
        prepared.append(prepare_program(t, child, loaded[program.get("file") or LEARNER_FILE], specs, program,
                                        filename, device))
        if guard is not None and guard.changed():
            return guard.report()
    pending = [p for p in prepared if p is not None and p.get("status") != "error"]
    done = [0]
    lock = threading.Lock()

    def one(p):
        compile_program(child, p, LEARNER_FILE)
        with lock:
            done[0] += 1
            if progress is not None:
                progress("compiled %d of %d programs for %s (%d left)" % (done[0], len(pending), where,
                                                                         len(pending) - done[0]))
    if progress is not None and pending:
        progress("compiling %d programs for %s side by side (0 of %d done)" % (len(pending), where, len(pending)))
    # a program that builds its own mesh swaps jax.devices while it compiles: one at a time then
    threads = 1 if isinstance(device, TopologyDevices) else max(1, min(COMPILE_THREADS, os.cpu_count() or 1,
                                                                        len(pending)))
    if threads == 1:
        for p in pending:
            one(p)
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for _ in pool.map(one, pending):
                pass
    if guard is not None and guard.changed():
        return guard.report()
    results = []
    for program, p in zip(job["programs"], prepared):
        filename = program.get("file") or LEARNER_FILE
        if p is None:
            results.append({"label": program["label"], "status": "skipped",
                            "message": "not measured: the measurement's time budget was spent"})
        elif p.get("status") == "error":
            results.append(p)
        else:
            results.append(finish_program(t, child, loaded[filename], specs, program, filename, device, p))
        if guard is not None and guard.changed():
            return guard.report()
    json.dumps(results)  # fail here, inside the grader's own error handling, if a figure is not plain data
    return {"status": "ok", "programs": results}

"""The grading payload: what runs one submission inside the sandbox (``grader/sandbox/``).

The sandbox loads this file by path (see ``grader/sandbox/inside/__init__.py`` for the payload interface at
the bottom of this file). It is self-contained (standard library, NumPy and JAX only) so the sandbox never
needs the grader's or the problems' source. Phases:

1. ``prepare``: import JAX and keep trusted references, without starting its backend (a fork server does
   this once); ``start``: initialise the backend (each worker, after the sandbox's start-up lockdown);
   ``warm_up``: a worker nobody is waiting for yet runs a small job of its own (see ``WARM_UP_CODE``);
2. the sandbox reads the job (code, entry name, argument specs, case inputs; never expected outputs), locks
   down (resource limits, a seccomp filter on every thread) and snapshots what learner code could
   monkeypatch before any learner code is compiled;
3. ``run``: for each case, build the arguments, trace the entry function with ``jax.make_jaxpr`` once per
   distinct shape, run *that traced program* to get the outputs, so the program the checks read is the one
   that produced the numbers;
4. the sandbox writes the answer. Learner output goes to the inherited stdout/stderr, which the parent
   captures and caps.
"""
import importlib.util
import json
import linecache
import os
import sys
import traceback

SOLUTION_FILE = "solution.py"
# What one answer may hold (all cases together). The parent checks the same bounds again on reading
# (``grader/grading/bounds.py``): an answer is the learner's code's to forge.
MAX_OUTPUT_ELEMENTS = 100_000
"""Array elements in the outputs; arrays past it are sent as omitted (a wrong answer, not a crash)."""
MAX_OUTPUT_ITEMS = 10_000
"""Dictionary entries and list or tuple items in the outputs."""
MAX_KEY_CHARS = 100
"""Characters of one dictionary key in the outputs."""
MAX_DEPTH = 32
"""Nesting of the outputs; deeper values are sent as ``<nested too deeply>``."""
MAX_PROGRAM_EQNS = 10_000
"""Equations in the traced programs, nested ones included."""
MAX_PROGRAM_DEPTH = 32
"""Nesting of sub-programs in a traced program (a scan in a scan in a jit...)."""


COMPANIONS = ("counterfactual.py", "jaxpr_numpy.py", "cost_child.py", "../boundary/program.py")
"""Files the payload loads by path (the sandbox shows them at the same places relative to it): the
counterfactual probes, their NumPy evaluator, the cost measurement, and the format that crosses to the
verifier (``grader/boundary/program.py``: the traced program as data, which ``grader/verifier/`` rebuilds)."""


def load_companion(name):
    """``NAME.py`` relative to this file's folder (``-I`` leaves that folder off sys.path on purpose)."""
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    spec = importlib.util.spec_from_file_location("jaxplay_" + os.path.basename(name), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Loaded now, when the payload is loaded: the lockdown that follows closes this folder to Landlock.
_COMPANIONS = {os.path.basename(name[:-3]): load_companion(name[:-3]) for name in COMPANIONS}


# ----------------------------------------------------------------------------------------------------
# Start-up: import JAX and keep trusted references before learner code can replace anything.

# XLA's CPU options for tiny programs (see benchmarks/compile_options.py): compiling dominates a Run, and
# optimisation level 0 cuts a Run's CPU time by about a fifth; the programs here are far too small for the
# slower code to show, and results stay within float32 rounding of the default. XLA's older (non-MLIR)
# fusion emitters compile the same programs in about two thirds of the time: a gallery's grading takes
# 0.55 x the CPU seconds (benchmarks/grading_cpu.py), every verdict the same. Other options measured
# (no expensive LLVM passes, single-threaded Eigen, eager eval_jaxpr, disable_jit) gained nothing or lost.
#
# Every worker also has HOST_DEVICES CPU devices, so a problem about collectives (`shard_map`, `ppermute`)
# runs on several devices on any machine; single-device programs use the first, as before (measured: no
# change in start-up or compile time, a few more idle threads).
HOST_DEVICES = 8
XLA_FLAGS = ("--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false "
             "--xla_force_host_platform_device_count=%d" % HOST_DEVICES)


def import_jax():
    """Import JAX and keep trusted references, without starting its backend (which starts threads): a fork
    server calls this once and forks workers from the result (``grader/sandbox/inside/zygote.py``)."""
    os.environ["XLA_FLAGS"] = os.environ.get("GRADER_XLA_FLAGS", XLA_FLAGS)  # set before JAX reads it
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import tree_util
    from jax.extend import core as jcore
    from jax._src.source_info_util import Transform

    from jax import lax
    import jax.experimental.pallas  # noqa: F401 - Pallas' primitives (pallas_call, program_id...) are JAX's own,
    import jax.experimental.pallas.tpu  # noqa: F401 - taken before learner code runs like every other

    policies = {}
    names = [n for n in dir(jax.checkpoint_policies) if not n.startswith("_")]
    for name in sorted(names, key=lambda n: (n.startswith("checkpoint_"), n)):  # canonical names before aliases
        policies.setdefault(id(getattr(jax.checkpoint_policies, name)), name)
    counterfactual, jaxpr_numpy = _COMPANIONS["counterfactual"], _COMPANIONS["jaxpr_numpy"]
    own = counterfactual.own_primitives(sys.modules, jcore.Primitive)
    return {
        "jax": jax, "jnp": jnp, "np": np, "lax": lax,
        "make_jaxpr": jax.make_jaxpr, "jit": jax.jit, "effects_barrier": jax.effects_barrier,
        "counterfactual": counterfactual, "jaxpr_numpy": jaxpr_numpy, "own_primitives": own, "api_markers": api_marker_table(),
        "jaxpr_as_fun": jcore.jaxpr_as_fun,
        "ClosedJaxpr": jcore.ClosedJaxpr, "Jaxpr": jcore.Jaxpr, "Literal": jcore.Literal,
        "tree_flatten": tree_util.tree_flatten, "tree_unflatten": tree_util.tree_unflatten,
        "tree_structure": tree_util.tree_structure, "tree_leaves": tree_util.tree_leaves,
        "tree_flatten_with_path": tree_util.tree_flatten_with_path,
        "asarray": np.asarray, "ndarray": np.ndarray, "float32": jnp.float32,
        "policies": policies, "Transform": Transform,
        "PartitionSpec": jax.sharding.PartitionSpec, "meshes": (jax.sharding.Mesh, jax.sharding.AbstractMesh),
        "cost": _COMPANIONS["cost_child"],  # jobs of kind "cost" (run_job)
        "program": _COMPANIONS["program"],  # jobs with "verify": the traced program as data
    }


# JAX's own entry points, recognised on an equation's creation stack by code object (a submission cannot
# make its code *be* JAX's): which transformations and custom rules were running when JAX made it.
API_MARKERS = (
    ("jax._src.api", "grad", ("grad_f", "grad_f_aux"), "grad"),
    ("jax._src.api", "value_and_grad", ("value_and_grad_f",), "value_and_grad"),
    ("jax._src.api", "vjp", ("vjp",), "vjp"),
    ("jax._src.api", "jvp", ("jvp",), "jvp"),
    ("jax._src.api", "linearize", ("linearize",), "linearize"),
    ("jax._src.api", "vmap", ("vmap_f",), "vmap"),
    ("jax._src.api", "jacfwd", ("jacfun",), "jacfwd"),
    ("jax._src.api", "jacrev", ("jacfun",), "jacrev"),
    ("jax._src.ad_checkpoint", "checkpoint", ("fun_remat",), "checkpoint"),
    ("jax._src.custom_derivatives", "custom_vjp", ("__call__",), "custom_vjp"),
    ("jax._src.custom_derivatives", "_flatten_fwd", ("_flatten_fwd",), "custom_vjp.fwd"),
    ("jax._src.custom_derivatives", "_flatten_bwd", ("_flatten_bwd",), "custom_vjp.bwd"),
    ("jax._src.custom_derivatives", "custom_jvp", ("__call__",), "custom_jvp"),
    ("jax._src.custom_derivatives", "_flatten_jvp", ("_flatten_jvp",), "custom_jvp.rule"),
    ("jax._src.lax.control_flow.loops", "scan", ("scan",), "lax.scan"),
    ("jax._src.lax.control_flow.loops", "map", ("map",), "lax.map"),
    ("jax._src.lax.control_flow.loops", "fori_loop", ("fori_loop",), "lax.fori_loop"),
    ("jax._src.lax.control_flow.loops", "while_loop", ("while_loop",), "lax.while_loop"),
    ("jax._src.lax.control_flow.loops", "associative_scan", ("associative_scan",), "lax.associative_scan"),
    ("jax._src.lax.control_flow.conditionals", "cond", ("cond",), "lax.cond"),
    ("jax._src.lax.control_flow.conditionals", "switch", ("switch",), "lax.switch"),
)


def _code_objects(obj, depth=0):
    """Code objects of a function, of the functions it defines, and of what it wraps."""
    import functools
    import inspect
    out = []
    if depth > 4:
        return out
    if isinstance(obj, functools.partial):
        for part in (obj.func,) + tuple(obj.args):
            out += _code_objects(part, depth + 1)
        return out
    if isinstance(obj, type):
        obj = vars(obj).get("__call__")
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # noqa: BLE001
        return out
    stack = [getattr(obj, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        out.append(code)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_name"))
    return out


def api_marker_table():
    """``{id(code object): marker}`` for the entry points in ``API_MARKERS``, and the code objects (kept
    alive so their ids stay theirs)."""
    import importlib
    table, keep = {}, []
    for module_name, attr, inner, marker in API_MARKERS:
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except Exception:  # noqa: BLE001 - an entry point this JAX version lacks
            continue
        for code in _code_objects(obj):
            if code.co_name in inner:
                table[id(code)] = marker
                keep.append(code)
    return {"table": table, "keep": keep}


def init_backend(t):
    """Start the CPU backend now, not on the learner's clock."""
    t["jnp"].zeros(1).block_until_ready()


def start_jax():
    t = import_jax()
    init_backend(t)
    return t


# ----------------------------------------------------------------------------------------------------
# The traced program as plain data.

class JaxprSerializer:
    """Turns a ClosedJaxpr into nested dicts that the parent's checks read (see grader/toolkit/jaxpr_tools.py)."""

    def __init__(self, t, evaluate=False):
        self.t = t
        self.names = {}
        self.evaluate = evaluate
        """Whether to run each ``pallas_call``'s index maps at every grid point (``index_table``): the verifier's
        view only (the checks read the verifier's)."""

    def var(self, v):
        aval = getattr(v, "aval", None)
        shape = list(getattr(aval, "shape", ()) or ())
        dtype = str(getattr(aval, "dtype", ""))
        if isinstance(v, self.t["Literal"]):
            return {"lit": repr(getattr(v, "val", v))[:40], "shape": shape, "dtype": dtype}
        key = id(v)
        if key not in self.names:
            self.names[key] = "v%d" % len(self.names)
        out = {"id": self.names[key], "shape": shape, "dtype": dtype}
        if type(aval).__name__ == "AbstractRef":  # a Pallas kernel's block or scratch buffer, and where it lives
            space = getattr(aval, "memory_space", None)
            out["ref"] = str(getattr(space, "name", space) or "default")
        return out

    def jaxpr(self, j):
        if isinstance(j, self.t["ClosedJaxpr"]):
            j = j.jaxpr
        return {
            "constvars": [self.var(v) for v in j.constvars],
            "invars": [self.var(v) for v in j.invars],
            "outvars": [self.var(v) for v in j.outvars],
            "eqns": [self.eqn(e) for e in j.eqns],
        }

    def sharding(self, v):
        """A mesh or partition specs (a ``shard_map``'s ``mesh``, ``in_specs``, ``out_specs``) as plain data:
        ``{"axis_names": ["i"], "axis_sizes": [4]}``; a spec as ``{"spec": ["i", None, ["a", "b"]]}`` (one
        entry per dimension: the mesh axes it is split over); a tuple of specs as a list. None otherwise."""
        spec_type = self.t.get("PartitionSpec")
        if spec_type is None:
            return None

        def entry(e):
            return list(e) if isinstance(e, (tuple, list)) else e

        if isinstance(v, spec_type):
            return {"spec": [entry(e) for e in v]}
        if isinstance(v, self.t["meshes"]):
            names = list(v.axis_names)
            sizes = getattr(v, "axis_sizes", None) or [dict(v.shape)[a] for a in names]
            return {"axis_names": [str(a) for a in names], "axis_sizes": [int(n) for n in sizes]}
        if isinstance(v, (tuple, list)) and v and all(isinstance(x, spec_type) for x in v):
            return [{"spec": [entry(e) for e in x]} for x in v]
        return None

    def pallas(self, p, params, subs):
        """A ``pallas_call``'s grid and blocks as plain data for the checks: ``grid``, ``blocks`` (per input,
        then per output: ``origin`` such as ``args[0]`` or ``outputs``, ``block_shape`` with None for a squeezed
        dimension, ``array_shape``, ``dtype``; each block's index map is the sub-program ``index_map[i]``),
        ``scratch`` (shape, dtype, memory space), ``num_scalar_prefetch`` and ``dimension_semantics``."""
        gm = p.get("grid_mapping")
        if gm is None:
            return

        def size(b):
            n = getattr(b, "block_size", None)
            return int(n) if isinstance(n, int) else None

        blocks = []
        for i, bm in enumerate(gm.block_mappings):
            blocks.append({"origin": str(bm.origin)[:80], "block_shape": [size(b) for b in bm.block_shape],
                           "array_shape": [int(n) for n in bm.array_aval.shape], "dtype": str(bm.array_aval.dtype)})
            subs["index_map[%d]" % i] = self.jaxpr(bm.index_map_jaxpr)
        params["grid"] = [int(n) if isinstance(n, int) else None for n in gm.grid]
        params["blocks"] = blocks
        if self.evaluate:
            params["block_table"] = self.index_table(gm)
        params["num_inputs"], params["num_outputs"] = int(gm.num_inputs), int(gm.num_outputs)
        params["num_scalar_prefetch"] = int(gm.num_index_operands)
        params["scratch"] = [{"shape": [int(n) for n in a.shape], "dtype": str(a.dtype),
                              "space": str(getattr(a.memory_space, "name", a.memory_space) or "default")}
                             for a in gm.scratch_avals]
        cp = p.get("compiler_params")
        sem = getattr(cp, "dimension_semantics", None)
        params["dimension_semantics"] = (None if sem is None else
                                         [str(getattr(x, "name", x)).lower() for x in sem])

    def index_table(self, gm):
        """Each block's index map run at every grid point (``program.run_index_map``: the grid in the order a TPU
        walks it, its last axis fastest): ``[[block index per point] per block]``, an entry None where a map
        could not be run. None for the whole when the maps take scalar-prefetch operands (their values are the
        case's). The checks read it where reading the map's equations gives up."""
        if gm.num_index_operands:
            return None
        run = _COMPANIONS["program"].run_index_map
        return [run(bm.index_map_jaxpr, gm.grid) for bm in gm.block_mappings]

    def is_jaxpr(self, v):
        return isinstance(v, (self.t["ClosedJaxpr"], self.t["Jaxpr"]))

    def eqn(self, e):
        own = id(e.primitive) in self.t["own_primitives"]
        params, subs = {}, {}
        for k, v in e.params.items():
            if self.is_jaxpr(v):
                subs[k] = self.jaxpr(v)
            elif isinstance(v, (tuple, list)) and v and all(self.is_jaxpr(x) for x in v):
                for i, x in enumerate(v):
                    subs["%s[%d]" % (k, i)] = self.jaxpr(x)
            elif k == "policy" and v is not None:
                params[k] = self.t["policies"].get(id(v)) or ("custom:" + getattr(v, "__name__", repr(v))[:80])
            elif isinstance(v, (bool, int, float, str)) or v is None:
                params[k] = v
            elif self.sharding(v) is not None:
                params[k] = self.sharding(v)
            else:
                params[k] = repr(v)[:200]
        if e.primitive.name == "pallas_call" and own:
            self.pallas(e.params, params, subs)
        out = {
            # A primitive that is not JAX's own keeps its name only behind a prefix no check matches.
            "primitive": e.primitive.name if own else "foreign:" + str(e.primitive.name)[:80],
            "invars": [self.var(v) for v in e.invars],
            "outvars": [self.var(v) for v in e.outvars],
            "params": params,
            "name_stack": name_stack_text(self.t, getattr(e.source_info, "name_stack", None)),
            "source_line": source_line(e),
            "subjaxprs": subs,
            "line": None,
        }
        api = api_markers(self.t, e)
        if api:
            out["api"] = api
        every = api_markers(self.t, e, repeats=True)
        if every != api:  # a vmap of a vmap: ["vmap", "vmap"], where "api" says ["vmap"]
            out["api_all"] = every
        return out


def name_stack_text(t, name_stack):
    """The name stack as JAX prints it (``transpose(jvp(loss))``), except that names the program chose
    itself (``jax.named_scope``, function names) have their parentheses replaced by brackets, so only
    JAX's own transformations can look like ``jvp(...)`` or ``transpose(...)`` to the checks."""
    if name_stack is None:
        return ""
    try:
        scope = []
        for elem in name_stack.stack[::-1]:
            if isinstance(elem, t["Transform"]):
                if scope:
                    scope[-1] = "%s(%s)" % (elem.name, scope[-1])
                else:
                    scope.append("%s()" % elem.name)
            else:
                scope.append(str(elem.name).replace("(", "[").replace(")", "]"))
        return "/".join(reversed(scope))
    except Exception:
        return str(name_stack).replace("(", "[").replace(")", "]")


def api_markers(t, eqn, repeats=False):
    """The JAX entry points (``API_MARKERS``) that were running when JAX made this equation, outermost
    first, e.g. ``["value_and_grad", "custom_vjp", "custom_vjp.fwd"]``; an entry point running inside
    itself (a ``vmap`` of a ``vmap``) is listed once, or once per call with ``repeats``. JAX roots the
    tracebacks of a sub-program's equations at that sub-program (``TracebackScope``), so these are the
    entry points running inside the ``jit``, scan body or branch that holds the equation."""
    table = t["api_markers"]["table"]
    try:
        codes = eqn.source_info.traceback.raw_frames()[0]
    except Exception:  # noqa: BLE001
        return []
    out = []
    for code in reversed(codes):
        marker = table.get(id(code))
        if marker and (repeats or not out or out[-1] != marker):
            out.append(marker)
    return out


def source_line(eqn):
    try:
        for frame in eqn.source_info.traceback.frames:
            if frame.file_name == SOLUTION_FILE:
                return int(frame.line_num)
    except Exception:
        pass
    return None


def attach_lines(structured, text):
    """Best effort: the 1-based line of each equation in JAX's printed text, or None everywhere.

    JAX prints large sub-programs hoisted as ``let NAME = { lambda ... } in`` blocks before the main one
    and refers to them as ``jaxpr=NAME``; small ones inline. Each block's equations start at the block's
    body indentation, in order, so they can be matched one to one and verified by primitive name.
    """
    lines = text.split("\n")
    blocks = {}
    for i, line in enumerate(lines):
        if line.startswith("let ") and "= { lambda" in line:
            blocks[line[4:].split("=", 1)[0].strip()] = i
        elif line.startswith("{ lambda"):
            blocks["__main__"] = i

    def heads(start):
        i = start
        while i < len(lines) and not lines[i].rstrip().endswith("let"):
            i += 1
        i += 1
        out = []
        if i >= len(lines):
            return out
        indent = len(lines[i]) - len(lines[i].lstrip())
        while i < len(lines):
            line = lines[i]
            ind = len(line) - len(line.lstrip())
            s = line.strip()
            if ind < indent and s:
                break
            if ind == indent:
                if s.startswith("in ") or s.startswith("in("):
                    break
                if not s.startswith("]"):
                    out.append(i)
            i += 1
        return out

    def mentions(line, prim):
        prim = prim.split(":", 1)[-1]  # a foreign primitive prints under its own name
        return ("= %s[" % prim) in line or ("= %s " % prim) in line or line.rstrip().endswith("= " + prim) \
            or line.strip().startswith(prim)

    def named_at(h, end, prim):
        """The line of an equation that names its primitive: the head line, or, when a long list of results
        wraps onto the next lines (``_:f32[2] ...`` then ``_:f32[2] = scan[``), the line where they end."""
        for i in range(h, end):
            if mentions(lines[i], prim):
                return i
            if " = " in lines[i] or lines[i].rstrip().endswith("="):
                return None
        return None

    def assign(jaxpr, start, seen):
        hs = heads(start)
        if len(hs) != len(jaxpr["eqns"]):
            return False
        for k, (eqn, h) in enumerate(zip(jaxpr["eqns"], hs)):
            end = hs[k + 1] if k + 1 < len(hs) else len(lines)
            at = named_at(h, end, eqn["primitive"])
            if at is None:
                return False
            eqn["line"] = at + 1
            span = "\n".join(lines[h:end])
            for pname, sub in eqn["subjaxprs"].items():
                base = pname.split("[")[0]
                ref = None
                marker = base + "="
                if marker in span:
                    ref = span.split(marker, 1)[1].split()[0].strip(",()")
                if ref in blocks and ref != "__main__" and (ref, id(sub)) not in seen:
                    seen.add((ref, id(sub)))
                    if not assign(sub, blocks[ref], seen):  # (a Pallas kernel's inline branches, say)
                        clear_lines(sub)
                elif ref is not None and ref.startswith("{"):  # printed inline, inside the equation
                    at = next((i for i in range(h, end) if (base + "={") in lines[i]), None)
                    if at is None:
                        continue
                    if lines[at].rstrip().endswith("let"):
                        if not assign(sub, at, seen):
                            clear_lines(sub)
                    else:  # the whole sub-program on one line
                        set_lines(sub, at + 1)
        return True

    if "__main__" not in blocks:
        return
    if not assign(structured, blocks["__main__"], set()):
        clear_lines(structured)


def set_lines(j, line):
    for e in j["eqns"]:
        e["line"] = line
        for sub in e["subjaxprs"].values():
            set_lines(sub, line)


def clear_lines(j):
    for e in j["eqns"]:
        e["line"] = None
        for sub in e["subjaxprs"].values():
            clear_lines(sub)


# ----------------------------------------------------------------------------------------------------
# Values in and out.

def build_args(t, case_args, specs):
    """The entry function's arguments. Arrays are NumPy's, not JAX's: tracing sees the same inputs, and no
    eager JAX operation runs, each of which would compile a tiny program per shape (about 15 ms). Kinds:
    ``int`` and ``float`` (Python numbers), ``ints`` (a tuple of Python ints), ``array`` (any ``dtype``; ``float32`` is the default and the old
    kind name), ``tree`` (nested dicts and lists of arrays; ``float32_tree`` is a dict of them) and ``key``
    (a PRNG key made from an integer seed)."""
    args = []
    for spec in specs:
        value = case_args[spec["name"]]
        kind = spec["kind"]
        dtype = t["jnp"].dtype(spec.get("dtype") or "float32")
        if is_abstract(value):  # a hidden case's array: its type only (``grader/grading/hidden.py``)
            args.append(abstract_arg(t, value))
        elif kind == "int":
            args.append(int(value))
        elif kind == "ints":  # a tuple of Python ints (hashable, so it can be static)
            args.append(tuple(int(v) for v in value))
        elif kind == "float":
            args.append(float(value))
        elif kind == "key":
            args.append(prng_key(t, int(value)))
        elif kind in ("tree", "float32_tree"):
            args.append(tree_arg(t["np"], value, dtype, t))
        else:
            args.append(t["np"].asarray(value, dtype=dtype))
    return args


def prng_key(t, seed):
    """``jax.random.key(seed)`` without its eager work (two tiny programs compiled in a fresh worker, about
    60 ms of a Run): under the default threefry implementation the key's data is ``[0, seed]`` for a seed in
    int32's non-negative range. Any other seed or implementation goes through ``jax.random.key``."""
    jax, np = t["jax"], t["np"]
    if 0 <= seed < 2 ** 31 and str(jax.config.jax_default_prng_impl) == "threefry2x32":
        return jax.random.wrap_key_data(np.array([0, seed], dtype=np.uint32))
    return jax.random.key(seed)


def is_abstract(value):
    return isinstance(value, dict) and value.get("t") == "abstract" and "v" not in value


def abstract_arg(t, value):
    """``jax.ShapeDtypeStruct`` of an abstract array (``{"t": "abstract", "shape": [...], "dtype": ...}``)."""
    return t["jax"].ShapeDtypeStruct(tuple(int(n) for n in value["shape"]), t["jnp"].dtype(value["dtype"]))


def tree_arg(np, value, dtype, t=None):
    """A pytree argument from JSON: dicts stay dicts; a list is a list of subtrees when tagged
    (``{"t": "list", "v": [...]}``), when it holds dicts or tagged nodes, or when its items are ragged; any
    other nested list of numbers is an array (an abstract one, a hidden case's, is its type only)."""
    if t is not None and is_abstract(value):
        return abstract_arg(t, value)
    if isinstance(value, dict) and value.get("t") in ("list", "tuple") and "v" in value:
        items = [tree_arg(np, v, dtype, t) for v in value["v"]]
        return items if value["t"] == "list" else tuple(items)
    if isinstance(value, dict) and value.get("t") == "array" and "v" in value:
        return np.asarray(value["v"], dtype=value.get("dtype") or dtype)
    if isinstance(value, dict):
        return {k: tree_arg(np, v, dtype, t) for k, v in value.items()}
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return [tree_arg(np, v, dtype, t) for v in value]
    try:
        return np.asarray(value, dtype=dtype)
    except ValueError:  # ragged: a list of arrays of different shapes
        return [tree_arg(np, v, dtype, t) for v in value]


class AnswerTooLarge(Exception):
    """The outputs or the traced programs are larger than the grader reads: Output Limit Exceeded."""


class AnswerBudget:
    """What is left of one answer's bounds (``MAX_OUTPUT_*``, ``MAX_PROGRAM_*``) as cases are encoded."""

    def __init__(self):
        self.elements, self.items, self.equations = MAX_OUTPUT_ELEMENTS, MAX_OUTPUT_ITEMS, MAX_PROGRAM_EQNS

    def take_items(self, n):
        self.items -= n
        if self.items < 0:
            raise AnswerTooLarge("Your function returned more than %d dictionary entries and list items (all cases "
                                 "together), more than the grader reads. Return only what the problem asks for."
                                 % MAX_OUTPUT_ITEMS)

    def take_program(self, t, closed):
        """Count the traced program's equations against the budget before it is printed or serialised."""
        stack = [(closed, 1)]
        while stack:
            j, depth = stack.pop()
            if depth > MAX_PROGRAM_DEPTH:
                raise AnswerTooLarge("Your function traced to programs nested more than %d deep (a scan in a scan in "
                                     "...), deeper than the grader reads." % MAX_PROGRAM_DEPTH)
            if isinstance(j, t["ClosedJaxpr"]):
                j = j.jaxpr
            self.equations -= max(1, len(j.eqns))  # at each use of a shared sub-program (and each use costs)
            if self.equations < 0:
                raise AnswerTooLarge("Your function traced to programs of more than %d equations (all cases together), "
                                     "more than the grader reads. A Python loop over the data unrolls into one copy of "
                                     "its body per step: use `lax.scan` or `lax.fori_loop` instead." % MAX_PROGRAM_EQNS)
            for e in j.eqns:
                for v in e.params.values():
                    subs = v if isinstance(v, (tuple, list)) else (v,)
                    stack.extend((x, depth + 1) for x in subs if isinstance(x, (t["ClosedJaxpr"], t["Jaxpr"])))


def output_key(k):
    text = str(k)
    if len(text) > MAX_KEY_CHARS:
        raise AnswerTooLarge("Your function returned a dictionary key of %d characters; the grader reads keys of up "
                             "to %d." % (len(text), MAX_KEY_CHARS))
    return text


def encode(t, value, budget, depth=0):
    """Plain, tagged JSON data for an output pytree, within ``budget`` (an ``AnswerBudget``): arrays past its
    elements are sent as omitted; past its items, or a key too long, raise ``AnswerTooLarge``."""
    np = t["np"]
    if depth > MAX_DEPTH:
        return {"t": "other", "repr": "<nested too deeply>"}
    if isinstance(value, dict):
        budget.take_items(len(value))
        return {"t": "dict", "v": {output_key(k): encode(t, v, budget, depth + 1) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        budget.take_items(len(value))
        return {"t": "list" if isinstance(value, list) else "tuple",
                "v": [encode(t, v, budget, depth + 1) for v in value]}
    if value is None:
        return {"t": "none"}
    try:
        arr = np.asarray(value)
    except Exception:
        return {"t": "other", "repr": repr(type(value))[:100]}
    out = {"t": "array", "dtype": str(arr.dtype), "shape": list(arr.shape), "v": None}
    low_precision = arr.dtype.kind == "V" and str(arr.dtype) in ("bfloat16", "float16", "float8_e4m3fn",
                                                                  "float8_e5m2")
    if arr.size > budget.elements or (arr.dtype.kind not in "biuf" and not low_precision):
        out["omitted"] = True
        return out
    budget.elements -= arr.size
    # NaN and infinities travel as JSON's NaN/Infinity tokens; bfloat16 and friends as their float32 values
    out["v"] = (arr.astype(np.float32) if low_precision else arr).tolist()
    return out


def describe(exc, limit=300):
    """``Type: message`` of a learner's exception (just ``Type`` when the message is empty), even when its
    ``__str__`` raises."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001
        text = "<the exception's message could not be shown>"
    if "Out-of-bounds" in text or "Revisited block" in text:  # a kernel's fault, as TPU interpret mode says it
        fault = _COMPANIONS["program"].kernel_fault(text)
        if fault:
            return fault
    text = text.strip().split("\n")[0][:limit]
    return "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__


def learner_traceback(exc):
    """The exception with only the submission's frames, plus the line that raised it."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename == SOLUTION_FILE]
    if frames and (not mine or frames[-1] is not mine[-1]):
        mine.append(frames[-1])
    text = "Traceback (most recent call last):\n" if mine else ""
    text += "".join(traceback.format_list(mine))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text[-8000:]


def input_names(args, specs, t=None):
    """The argument path of each top-level input of the traced program, in make_jaxpr's order:
    ``x``, ``params['w1']``, ``state['layers'][0]['w']``."""
    names = []
    for spec, a in zip(specs, args):
        if spec.get("static"):
            continue
        if isinstance(a, (dict, list, tuple)) and t is not None:
            leaves, _ = t["tree_flatten_with_path"](a)
            names.extend(spec["name"] + "".join(_key_text(k) for k in path) for path, _ in leaves)
        elif isinstance(a, dict):
            names.extend("%s['%s']" % (spec["name"], k) for k in sorted(a))
        else:
            names.append(spec["name"])
    return names


def _key_text(key):
    k = getattr(key, "key", getattr(key, "idx", getattr(key, "name", None)))
    return "[%d]" % k if isinstance(k, int) else "['%s']" % k


def output_names(t, out_shape):
    """The path of each output leaf in flattening order: ``loss``, ``grads.w1``, ``[0]``."""
    try:
        leaves, _ = t["tree_flatten_with_path"](out_shape)
    except Exception:  # noqa: BLE001
        return []
    names = []
    for path, _ in leaves:
        name = ""
        for key in path:
            k = getattr(key, "key", getattr(key, "idx", getattr(key, "name", None)))
            name += ("[%d]" % k) if isinstance(k, int) else ((".%s" % k) if name else str(k))
        names.append(name[:200] or "output")
    return names


def arg_summary(args, specs):
    """Each argument's shape, as the checks see them in ``Trace.args`` and as traced programs are told apart: a
    list for an array, a dict or list of those for a tree, a static number's value, ``"int"``/``"float"`` for
    a traced number (its value is an input of the program, not part of it), the list of numbers for
    ``ints``, ``"key"`` for a PRNG key."""
    out = {}
    for spec, a in zip(specs, args):
        if spec["kind"] in ("int", "float"):
            out[spec["name"]] = a if spec.get("static") else spec["kind"]
        elif spec["kind"] == "ints":
            out[spec["name"]] = list(a)
        elif spec["kind"] == "key":
            out[spec["name"]] = "key"
        else:
            out[spec["name"]] = _shapes(a)
    return out


def _shapes(a):
    if isinstance(a, dict):
        return {k: _shapes(v) for k, v in a.items()}
    if isinstance(a, (list, tuple)):
        return [_shapes(v) for v in a]
    return list(a.shape)


# ----------------------------------------------------------------------------------------------------

def influence_blocks(job, args, specs):
    """The number of row blocks for a problem that measures step influence on this case, or 0: the value of
    a static int argument (``{"inputs": [...], "blocks": "<argument>"}``), or the first input's rows divided
    by one (``{"inputs": [...], "block_size": "<argument>"}``, when it divides them)."""
    spec = job.get("step_influence") or {}
    named = {s["name"]: a for s, a in zip(specs, args)}
    blocks = named.get(spec.get("blocks"))
    size = named.get(spec.get("block_size"))
    if isinstance(size, int) and size >= 1:
        first = named.get((spec.get("inputs") or [""])[0])
        rows = first.shape[0] if getattr(first, "shape", ()) else 0
        blocks = rows // size if rows % size == 0 else 0
    return blocks if isinstance(blocks, int) and blocks >= 2 else 0


def measure(t, closed, job, args, specs, dynamic, outputs):
    """``(probes, step_reads)`` of one traced program on one case (``counterfactual.py``): evaluated with
    NumPy when that reproduces the compiled outputs (no compile, milliseconds), else compiled with JAX."""
    cf, is_own = t["counterfactual"], lambda p: id(p) in t["own_primitives"]
    stack = lambda e: name_stack_text(t, getattr(e.source_info, "name_stack", None))  # noqa: E731
    primitives = tuple(job.get("probe_primitives", ()))
    blocks = influence_blocks(job, args, specs)
    names = input_names(args, specs, t)
    leaves = [i for i, n in enumerate(names) if blocks and n.split("[")[0] in job["step_influence"].get("inputs", ())
              and getattr(dynamic[i], "shape", ()) and dynamic[i].shape[0] % blocks == 0]
    try:
        return cf.NumpyProbes(t, closed, is_own, stack, primitives).measure(dynamic, outputs, blocks, leaves)
    except Exception:  # noqa: BLE001 - fall back to compiling the probes
        pass
    try:
        probes = cf.Probes(t, closed, is_own, stack, primitives, cf.top_scans(closed, is_own, blocks) if blocks else ())
        baseline = probes.outputs(dynamic)
        result = probes.measure(dynamic, baseline)
    except Exception as exc:  # noqa: BLE001 - the checks then say the structure could not be confirmed
        return {"error": "the traced program could not be re-evaluated (%s: %s)" % (
            type(exc).__name__, str(exc).split("\n")[0][:160])}, {}
    if not blocks or not probes.carries:
        return result, {}
    try:
        influence = cf.StepInfluence(t, closed, is_own, leaves, blocks, list(probes.carries))
        return result, {"reads": influence.measure(dynamic, probes.carries), "blocks": blocks}
    except Exception as exc:  # noqa: BLE001
        return result, {"error": "%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:160])}


def hand_over(t, trace, closed, out_shape, budget):
    """Add the traced program and its output structure as data (``grader/boundary/program.py``) to ``trace``:
    what the verifier rebuilds and runs. A learner's own pytree class in the outputs is a wrong type here,
    told as such, rather than a call into its ``unflatten`` anywhere. The structure counts against
    ``budget`` as encoded outputs do (entries and items, key lengths), so what the child sends stays as small
    as the outputs the grader reads."""
    program = t["program"]
    treedef = t["tree_structure"](out_shape)
    budget.take_items(treedef.num_nodes - treedef.num_leaves)  # before anything is built from it
    try:
        trace["out_tree"] = program.tree_data(treedef)
    except program.NotPlainTree as exc:
        raise TypeError("your function returned a `%s`; return dicts, lists or tuples (of arrays)" % exc) from None
    except program.TreeTooDeep:
        raise TypeError("your function returned outputs nested more than %d deep; return the structure the "
                        "problem asks for" % program.MAX_TREE_DEPTH) from None
    stack = [trace["out_tree"]]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for kind, body in node.items():
                if kind == "dict":
                    for key, kid in body:
                        output_key(key)
                        stack.append(kid)
                elif kind in ("list", "tuple"):
                    stack.extend(body)
    trace["program"] = program.ProgramEncoder(t["policies"], t["own_primitives"]).program(closed)


def run_job(t, job, guard=None, progress=None):
    """Run one job; ``guard`` (a ``tamper.TamperGuard``) is checked after loading and after each trace, and
    only trusted callers (benchmarks timing the grader itself) leave it out. ``progress(text)``, when given,
    is told which case starts (the parent shows it, and names it in a time-limit verdict)."""
    if job.get("kind") == "cost":  # lower and compile at a realistic size, never run (cost_child.py)
        return t["cost"].run(t, job, guard, globals(), progress)
    code = job["code"]
    linecache.cache[SOLUTION_FILE] = (len(code), None, code.splitlines(True), SOLUTION_FILE)
    try:
        compiled = compile(code, SOLUTION_FILE, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        lineno = getattr(exc, "lineno", None)
        return {"status": "syntax_error", "message": "%s: %s" % (type(exc).__name__, getattr(exc, "msg", exc)),
                "line": lineno, "traceback": "".join(traceback.format_exception_only(type(exc), exc))[-4000:]}

    module = type(sys)("solution")
    module.__file__ = SOLUTION_FILE
    sys.modules["solution"] = module
    try:
        exec(compiled, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - the learner's code may raise anything, SystemExit too
        if isinstance(exc, MemoryError):
            return {"status": "memory_error", "message": "MemoryError", "traceback": learner_traceback(exc)}
        return {"status": "load_error", "message": describe(exc),
                "traceback": learner_traceback(exc)}

    if guard is not None and guard.changed():
        return guard.report()
    fn = module.__dict__.get(job["entry"])
    if not callable(fn):
        return {"status": "missing_entry",
                "message": "Your code must define a function named `%s`." % job["entry"]}

    specs = job["args"]
    static = tuple(i for i, s in enumerate(specs) if s.get("static"))
    verify = bool(job.get("verify"))  # hand over the traced programs as data; the verifier runs them
    probe_cases = set(job.get("probe_cases", [c["name"] for c in job["cases"]]))
    traces, compiled_fns, cases = [], {}, []
    budget = AnswerBudget()
    for k, case in enumerate(job["cases"], 1):
        if progress is not None:
            progress("%s (case %d of %d)" % (case["name"], k, len(job["cases"])))
        entry = {"name": case["name"]}
        abstract = bool(case.get("abstract"))  # a hidden case: types only; never run here
        try:
            args = build_args(t, case["args"], specs)
            key = json.dumps(arg_summary(args, specs), sort_keys=True)
            if key not in compiled_fns:
                closed, out_shape = t["make_jaxpr"](fn, static_argnums=static, return_shape=True)(*args)
                if guard is not None and guard.changed():
                    return guard.report()
                if not isinstance(closed, t["ClosedJaxpr"]):
                    raise TypeError("jax.make_jaxpr was replaced; the grader cannot trace this code.")
                budget.take_program(t, closed)
                structured = JaxprSerializer(t).jaxpr(closed)
                # JAX's printed program and each equation's line in it: the page shows the first program's
                # only (printing every program cost a tenth of a Submit's time here)
                text = str(closed) if not traces else ""
                if text:
                    attach_lines(structured, text)
                traces.append({"key": key, "args": arg_summary(args, specs), "jaxpr": structured,
                               "input_names": input_names(args, specs, t), "case": case["name"],
                               "output_names": output_names(t, out_shape),
                               "text": text if len(traces) == 0 else ""})
                if verify and not t["program"].opaque(closed, t["own_primitives"]):
                    hand_over(t, traces[-1], closed, out_shape, budget)
                    # a program that prints is run here too, for its text only (the verifier prints nothing)
                    printer = (t["jit"](t["jaxpr_as_fun"](t["program"].interpret_pallas(closed)))
                               if t["program"].prints(closed) else None)
                    compiled_fns[key] = (None, closed, printer, len(traces) - 1)
                else:  # (a program the verifier cannot run is run here; its numbers are marked unverified)
                    if verify:
                        hand_over(t, traces[-1], closed, out_shape, budget)
                        traces[-1]["opaque"] = True
                    runnable = t["program"].interpret_pallas(closed)  # Mosaic lowers only for a TPU
                    compiled_fns[key] = (t["jit"](t["jaxpr_as_fun"](runnable)), runnable, t["tree_structure"](out_shape),
                                         len(traces) - 1)
            run, closed, out_tree, trace_index = compiled_fns[key]
            if abstract:  # the verifier computes the outputs and the probes, on values this process never sees
                entry["status"] = "ok"
                entry["trace"] = trace_index
                cases.append(entry)
                continue
            if run is None:  # the verifier computes the outputs and the probes
                printer = out_tree  # (kept in that slot for a program that prints: run here for its text only)
                if printer is not None:
                    printer(*t["tree_leaves"]([a for i, a in enumerate(args) if i not in static]))
                    t["effects_barrier"]()
                entry["status"] = "ok"
                entry["trace"] = trace_index
                cases.append(entry)
                continue
            dynamic = t["tree_leaves"]([a for i, a in enumerate(args) if i not in static])
            out_flat = run(*dynamic)
            out = t["tree_unflatten"](out_tree, list(out_flat))
            trace = traces[trace_index]
            sent = sum(int(getattr(o, "size", 1)) for o in out_flat) <= budget.elements
            if "probes" not in trace and case["name"] in probe_cases and sent:
                # (an answer too large to send is wrong already; probing it would re-make it many times over)
                # whether the structure carries the answer, on the cases the grader chose (one per shape)
                trace["probes"], trace["step_reads"] = measure(t, closed, job, args, specs, dynamic,
                                                               [t["np"].asarray(o) for o in out_flat])
                if guard is not None and guard.changed():
                    return guard.report()
            entry["status"] = "ok"
            entry["trace"] = trace_index
            entry["output"] = encode(t, out, budget)
        except AnswerTooLarge as exc:
            return {"status": "output_limit", "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, MemoryError):
                return {"status": "memory_error", "message": "MemoryError", "traceback": learner_traceback(exc)}
            entry["status"] = "error"
            entry["message"] = describe(exc)
            entry["traceback"] = learner_traceback(exc)
        cases.append(entry)
    answer = {"status": "ok", "cases": cases, "traces": traces}
    if job.get("tpu_compile"):
        answer["tpu_trace"] = tpu_trace(t, fn, job["tpu_compile"], static, budget)
        if guard is not None and guard.changed():
            return guard.report()
    return answer


def tpu_trace(t, fn, spec, static, budget):
    """The program a Pallas problem compiles for a TPU (``grader/verifier/tpu_compile.py``): the function traced
    once more at the realistic size, from shapes alone (``{"args": [{"shape", "dtype"} | {"value"}]}``),
    handed over as data. Nothing runs; ``lines`` are the learner's lines of its ``pallas_call``s (shown, not
    believed). A trace that fails says why."""
    try:
        args = [a["value"] if "value" in a else t["jax"].ShapeDtypeStruct(tuple(a["shape"]), a.get("dtype", "float32"))
                for a in spec["args"]]
        closed = t["make_jaxpr"](fn, static_argnums=static)(*args)
        if not isinstance(closed, t["ClosedJaxpr"]):
            raise TypeError("jax.make_jaxpr was replaced; the grader cannot trace this code.")
        budget.take_program(t, closed)
        lines = [source_line(e) for e in t["program"].all_eqns(closed) if e.primitive.name == "pallas_call"]
        return {"program": t["program"].ProgramEncoder(t["policies"], t["own_primitives"]).program(closed),
                "lines": [n for n in lines if isinstance(n, int)][:8]}
    except AnswerTooLarge:
        raise
    except Exception as exc:  # noqa: BLE001 - the learner's code failed at this size
        return {"error": describe(exc)[:400]}


# ----------------------------------------------------------------------------------------------------
# The sandbox's payload interface (``grader/sandbox/inside/__init__.py``).

WATCHED_MODULES = ("jax", "jaxlib", "numpy", "ml_dtypes")
"""Modules the tamper guard watches (besides ``json``, ``builtins`` and the others every answer needs)."""
WATCHED_CONFIG = ("jax_enable_x64", "jax_disable_jit", "jax_default_matmul_precision", "jax_dynamic_shapes",
                  "jax_numpy_rank_promotion", "jax_default_prng_impl")
TAMPER_MESSAGE = ("Your code replaced or changed part of JAX, NumPy or Python that the grader relies on (%s). "
                  "Solve the problem with ordinary JAX calls instead.")


def watched_settings():
    """The ``jax.config`` options learner code must not change."""
    jax = sys.modules.get("jax")
    out = {}
    for name in WATCHED_CONFIG:
        try:
            out["jax.config." + name] = repr(getattr(jax.config, name))
        except Exception:  # noqa: BLE001 - an option this JAX version lacks
            pass
    return out


# A worker's first job pays for tracing jnp's operators and JAX's own machinery the first time, and for
# copying the fork server's pages it writes to (about 2,500 copy-on-write faults). Tracing needs no backend and
# starts no thread, so the fork server traces a job of its own once, before it forks (``prepare_forks``): a
# scan, a select and the probes' path, as a Run does them, and jnp's scalar arithmetic; every worker starts
# with them traced, a worker started in a rush too. A worker that nobody is waiting for runs the job once
# more after its backend starts (``warm_up``): the pages it writes are copied then, off the learner's clock.
# With the verifier (the default) the job only traces, as a Run's does: the backend's first compile is the
# verifier's, so a worker no longer pays for a compile nobody uses (about 0.2 s of CPU a Run).
WARM_UP_CODE = """
import jax.numpy as jnp
from jax import lax


def warm_up(x, y):
    def step(c, row):
        return c * 0.5 + row, jnp.cos(c)
    c, ys = lax.scan(step, jnp.zeros(x.shape[1:], x.dtype), x)
    return jnp.where(c > 1.0, jnp.sum(ys, axis=0) * y, c + 1.0)
"""
WARM_UP_JOB = {
    "code": WARM_UP_CODE, "entry": "warm_up",
    "args": [{"name": "x", "kind": "float32", "dtype": "float32"}, {"name": "y", "kind": "float32", "dtype": "float32"}],
    "cases": [{"name": "warm-up", "args": {"x": [[1.0, 2.0], [3.0, 4.0]], "y": 2.0}}],
    "probe_primitives": ["select_n", "mul"], "step_influence": None,
    "verify": os.environ.get("JAXPLAY_VERIFIER", "1") != "0",
}


def prepare():
    return import_jax()


def start(t):
    init_backend(t)


WARM_UP_BINARY = ("add", "subtract", "multiply", "true_divide", "less", "greater", "maximum", "minimum")
WARM_UP_UNARY = ("cos", "sin", "exp", "log", "sqrt", "tanh", "abs", "negative")


def prepare_forks(t):
    """Trusted work a fork server does once, before it forks workers: ``warm_up``'s job, traced only (as through
    the verifier, even where it is off: a compile would start the backend's threads in the fork server), and
    its traces, which start no backend and no thread (raises if they did)."""
    warm_up(t, dict(WARM_UP_JOB, verify=True))
    backends = getattr(sys.modules.get("jax._src.xla_bridge"), "_backends", None)
    if backends:
        raise RuntimeError("the fork server's warm-up started a JAX backend")


def warm_up(t, job=WARM_UP_JOB):
    """Run ``job`` (trusted code: ``WARM_UP_JOB``) and forget it; raises if it did not run cleanly. Then trace the
    scalar arithmetic most programs do (jnp's operators are jitted functions, each traced once per kind of
    operands: about 1 ms each the first time, a sixth of the smallest problems' Run)."""
    result = run_job(t, job)
    sys.modules.pop("solution", None)
    linecache.cache.pop(SOLUTION_FILE, None)
    if result.get("status") != "ok" or any(case["status"] != "ok" for case in result["cases"]):
        raise RuntimeError("the warm-up job failed: %s" % json.dumps(result)[:300])
    jnp, make_jaxpr = t["jnp"], t["make_jaxpr"]
    f32, weak_f32, weak_i32 = t["np"].float32(1.5), 1.5, 2  # make_jaxpr makes Python numbers weakly typed
    pairs = ((f32, f32), (f32, weak_f32), (weak_f32, f32), (f32, weak_i32), (weak_i32, f32), (weak_i32, weak_i32))
    for name in WARM_UP_BINARY:
        for a, b in pairs:
            make_jaxpr(getattr(jnp, name))(a, b)
    for name in WARM_UP_UNARY:
        make_jaxpr(getattr(jnp, name))(f32)


def after_fork(t):
    t["np"].random.seed()  # a copy of the fork server's state otherwise, identical in every worker


def run(t, job, guard, progress):
    return run_job(t, job, guard, progress)

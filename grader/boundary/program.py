"""A traced program (a ``ClosedJaxpr``) as plain data that the verifier can rebuild (``grader/verifier/rebuild.py``).

This file is the boundary: both sides import it. The child (``grader/learner/child.py``, which loads it by
path as a companion) writes programs with it where the learner's function was traced, so nothing it writes
is trusted; the verifier (``grader/verifier/rebuild.py``) reads the same format and refuses whatever does not
rebuild. It is self-contained (standard library, NumPy and JAX only) so the sandboxed child can load it. What it writes is JSON-able data only: numbers, strings, lists and dicts, every
non-plain value tagged by what it is (``{"tuple": [...]}``, ``{"dtype": "bfloat16"}``, ``{"array": ...}``).
Nothing is pickled; nothing refers to a Python object by name except JAX's own primitives, enums and
named tuples, which the rebuilder looks up in an allow-list of its own, and a PRNG implementation, written as
its registered name (``{"prng_impl": "threefry2x32"}``) and looked up in the verifier's own JAX registry.

The format::

    program = {"format": 1, "contexts": [CONTEXT...], "subprograms": [SUB...], "consts": [ARRAY...], "jaxpr": JAXPR}
    SUB     = {"closed": {"consts": [ARRAY...], "jaxpr": JAXPR}} | {"open": JAXPR}
              (a parameter holding a sub-program is {"sub": K}; K indexes "subprograms", each only earlier ones)
    CONTEXT = {"compute_type": .., "threefry_partitionable": bool, "mesh": ABSTRACT_MESH, ...}
    JAXPR   = {"constvars": [AVAL...], "invars": [AVAL...], "eqns": [EQN...], "outvars": [ATOM...]}
    EQN     = {"p": "scan", "in": [ATOM...], "out": [AVAL...], "params": {"length": VALUE, ...},
               "ctx": N, "effects": [...], "stack": [["s", "loss"], ["t", "jvp"]]}
              (N indexes "contexts"; effects and the name stack only when there are some)
    ATOM    = {"v": N}  (the N-th variable of this jaxpr: constvars, invars, then each equation's outputs)
              | {"lit": VALUE, "aval": AVAL}
    AVAL    = {"shape": [..], "dtype": DTYPE, "weak": bool, ...}  (plus "sharding", "mat", "drop" when set)

Every jaxpr numbers its own variables (JAX's jaxprs are closed: a sub-program sees only its inputs).
"""
import base64
import enum
import re

FORMAT = 1

# Values a parameter may hold that the rebuilder cannot recreate from data: stand-ins are put back for
# a few (``rebuild.STAND_INS``), and any other is refused there.
CALLABLE = "callable"


HOST_CALLS = frozenset({"pure_callback", "io_callback", "buffer_callback", "callback", "outside_call",
                        "host_callback"})
"""Primitives whose results come from a Python function (the verifier refuses them; ``rebuild.CALLBACKS``)."""


def all_eqns(closed):
    """Every equation of a traced program, nested programs' (scan, cond, jit, checkpoint...) included."""
    stack = [closed.jaxpr]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            yield e
            for v in e.params.values():
                for x in (v if isinstance(v, (tuple, list)) else (v,)):
                    inner = getattr(x, "jaxpr", x)
                    if hasattr(inner, "eqns"):
                        stack.append(inner)


def opaque(closed, own_primitives):
    """Whether the verifier cannot run this program: it calls back into Python for results, or uses a
    primitive that is not JAX's own. Such a program is run where it was traced, as before the verifier, and
    its numbers are marked unverified (the grader then never accepts it)."""
    return any(id(e.primitive) not in own_primitives or e.primitive.name in HOST_CALLS for e in all_eqns(closed))


PRINTS = frozenset({"debug_print", "debug_callback"})
"""``jax.debug.print`` and ``jax.debug.callback``: no results, but text the learner expects to see."""


def prints(closed):
    """Whether the program prints when run (``PRINTS`` anywhere in it): the child runs such a program as well,
    for its text only; the verifier, which leaves these out, computes the numbers."""
    return any(e.primitive.name in PRINTS for e in all_eqns(closed))


REF_EFFECTS = frozenset({"ReadEffect", "WriteEffect", "AccumEffect"})
"""A Pallas kernel's effects on its ``Ref``s (each names the variable it reads or writes)."""

TREE_NODES = frozenset({"tuple", "list", "dict", "None", "NDIndexer", "Slice"})
"""Nodes of the tree structures a program's parameters may hold (``get``/``swap``'s indexers)."""


def enum_name(cls):
    """An enum's name in the data: Pallas' enums by their module too (``pallas.mosaic.core:MemorySpace``:
    JAX has three classes called ``MemorySpace``)."""
    module = str(getattr(cls, "__module__", ""))
    if module.startswith("jax._src.pallas"):
        return module[len("jax._src."):] + ":" + cls.__name__
    return cls.__name__


class NotPlainTree(ValueError):
    """An output structure holds a node that is not a dict, list, tuple or None (the learner's own class)."""


def array(a):
    """An array's exact bytes: ``{"array": {"dtype": "bfloat16", "shape": [2], "b64": "..."}}``. An array that
    NumPy holds broadcast (stride 0 along some axes, as ``jnp.ones_like`` of a constant leaves it) is written
    as its one slice and those axes (``"broadcast": [0, 2]``): JAX lowers such a constant as a broadcast, so
    the rebuilt program is then the same XLA module. An array of PRNG keys is its implementation's name and
    its raw key bits: ``{"array": {"dtype": "key", "impl": "threefry2x32", "shape": [], "data": ARRAY}}``."""
    import numpy as np
    dtype = dtype_data(a.dtype) if hasattr(a, "dtype") else None
    if dtype is not None and dtype["dtype"] == "key":  # a key array: its implementation and its raw bits
        import jax
        return {"array": {**dtype, "shape": [int(n) for n in a.shape], "data": array(jax.random.key_data(a))}}
    arr = np.asarray(a)
    dtype = dtype_data(arr.dtype)
    out = {**dtype, "shape": [int(n) for n in arr.shape]}
    if arr.ndim and arr.size and 0 in arr.strides:
        axes = [i for i, s in enumerate(arr.strides) if s == 0]
        out["broadcast"] = axes
        arr = arr[tuple(0 if i in axes else slice(None) for i in range(arr.ndim))]
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    out["b64"] = base64.b64encode(data).decode()
    return {"array": out}


def dtype_data(dtype):
    """``{"dtype": "float32"}``; a PRNG key's dtype names its implementation: ``{"dtype": "key", "impl": ...}``."""
    impl = getattr(dtype, "_impl", None)
    if impl is not None:
        return {"dtype": "key", "impl": str(impl.name)}
    import numpy as np
    return {"dtype": np.dtype(dtype).name}


class TreeTooDeep(ValueError):
    """An output structure nested deeper than ``MAX_TREE_DEPTH``."""


MAX_TREE_DEPTH = 32
"""How deep an output structure may nest (the child's encoder reads outputs as deep)."""


def tree_data(treedef, depth=0):
    """A tree structure as data without rebuilding it (no learner ``unflatten`` runs): ``"*"`` for a leaf,
    ``{"none": true}``, ``{"dict": [[key, TREE]...]}``, ``{"list": [...]}``, ``{"tuple": [...]}``. Any other
    node raises ``NotPlainTree`` with its type's name; nesting past ``MAX_TREE_DEPTH``, ``TreeTooDeep``."""
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        return "*"
    if depth >= MAX_TREE_DEPTH:
        raise TreeTooDeep(MAX_TREE_DEPTH)
    kind, aux = treedef.node_data()
    kids = [tree_data(c, depth + 1) for c in treedef.children()]
    if kind is type(None):
        return {"none": True}
    if kind is dict:
        keys = list(aux)
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in keys):
            raise NotPlainTree("a dictionary key that is not a string or an integer")
        return {"dict": [[k, c] for k, c in zip(keys, kids)]}
    if kind is list:
        return {"list": kids}
    if kind is tuple:
        return {"tuple": kids}
    raise NotPlainTree(getattr(kind, "__name__", "an object")[:80])


class ProgramEncoder:
    """``ProgramEncoder().program(closed_jaxpr)`` -> the data above. ``policies`` maps ``id(policy)`` to the
    name of a ``jax.checkpoint_policies`` entry (a checkpoint's policy only matters under differentiation,
    which the verifier never does, so any other policy is written as ``"custom"``)."""

    def __init__(self, policies=None, own_primitives=None):
        import jax
        from jax.extend import core as jcore
        self.jax, self.core = jax, jcore
        if policies is None:
            policies = {}
            names = [n for n in dir(jax.checkpoint_policies) if not n.startswith("_")]
            for name in sorted(names, key=lambda n: (n.startswith("checkpoint_"), n)):
                policies.setdefault(id(getattr(jax.checkpoint_policies, name)), name)
        self.policies = policies
        self.own = own_primitives  # ids of JAX's own primitives; others are written as "foreign:NAME"

    # -- programs --
    def program(self, closed):
        """The whole program: its sub-programs, and the table of equation contexts they all index."""
        self.contexts, self.context_index = [], {}
        self.subprograms, self.sub_index = [], {}
        body = self.closed(closed)
        return {"format": FORMAT, "contexts": self.contexts, "subprograms": self.subprograms, **body}

    def sub(self, v):
        """The index of a sub-program in ``self.subprograms``: one used in several places (``jnp.where``'s
        ``jit`` called twice) is written once and rebuilt as one object, as JAX holds it, so XLA sees the
        same module. A sub-program's own sub-programs come before it."""
        key = id(v)
        if key not in self.sub_index:
            entry = {"closed": self.closed(v)} if isinstance(v, self.core.ClosedJaxpr) else {"open": self.jaxpr(v)}
            self.sub_index[key] = len(self.subprograms)
            self.subprograms.append(entry)
        return {"sub": self.sub_index[key]}

    def closed(self, closed):
        return {"consts": [self.const(c) for c in closed.consts], "jaxpr": self.jaxpr(closed.jaxpr)}

    def context(self, ctx):
        """The index of an equation's context (the abstract mesh it was traced under, the PRNG's
        partitionable mode, ...) in ``self.contexts``."""
        key = id(ctx)
        if key not in self.context_index:
            meta = ctx.xla_metadata
            self.context_index[key] = len(self.contexts)
            self.contexts.append({
                "compute_type": ctx.compute_type if isinstance(ctx.compute_type, str) else None,
                "threefry_partitionable": bool(ctx.threefry_partitionable),
                "mesh": self.value(ctx.cur_abstract_mesh),
                "remove_size_one_mesh_axis": bool(ctx.remove_size_one_mesh_axis),
                "xla_metadata": None if meta is None else [[str(k), self.value(v)] for k, v in sorted(dict(meta).items())],
            })
        return self.context_index[key]

    def const(self, c):
        return array(c)

    def jaxpr(self, j):
        names = {}

        def define(v):
            names[id(v)] = len(names)
            return self.aval(v.aval, drop=type(v).__name__ == "DropVar")

        out = {"constvars": [define(v) for v in j.constvars], "invars": [define(v) for v in j.invars], "eqns": []}
        for e in j.eqns:
            ins = [self.atom(v, names) for v in e.invars]
            params = {k: self.param(e.primitive.name, k, v) for k, v in e.params.items()}
            name = str(e.primitive.name)
            if self.own is not None and id(e.primitive) not in self.own:
                name = "foreign:" + name[:80]
            eqn = {"p": name, "in": ins, "params": params, "out": [define(v) for v in e.outvars],
                   "ctx": self.context(e.ctx)}
            stack = self.name_stack(getattr(e.source_info, "name_stack", None))
            if stack:
                eqn["stack"] = stack
            if e.effects:
                eqn["effects"] = sorted((self.effect(x, names) for x in e.effects), key=repr)
            out["eqns"].append(eqn)
        out["outvars"] = [self.atom(v, names) for v in j.outvars]
        return out

    @staticmethod
    def name_stack(ns):
        """``[["s", "loss"], ["t", "jvp"]]``: the equation's scopes and transformations, innermost last."""
        out = []
        for elem in getattr(ns, "stack", ()) or ():
            kind = "t" if type(elem).__name__ == "Transform" else "s"
            out.append([kind, str(getattr(elem, "name", ""))[:200]])
        return out

    def effect(self, x, names=None):
        """``{"kind": "NamedAxisEffect", "name": "i"}``; a Pallas kernel's read or write of a ``Ref``,
        ``{"kind": "ReadEffect", "ref": ATOM}`` (or ``"index": N``, an input's position); an effect's kind
        alone otherwise."""
        out = {"kind": type(x).__name__[:80]}
        if out["kind"] in REF_EFFECTS and hasattr(x, "input"):
            i = x.input
            if isinstance(i, int):
                out["index"] = int(i)
            elif names is not None and id(i) in names:
                out["ref"] = {"v": names[id(i)]}
        elif hasattr(x, "name") and isinstance(x.name, str):
            out["name"] = x.name
        return out

    def atom(self, v, names):
        if isinstance(v, self.core.Literal):
            return {"lit": self.literal(v.val), "aval": self.aval(v.aval)}
        return {"v": names[id(v)]}

    def literal(self, val):
        import numpy as np
        if isinstance(val, bool):
            return {"bool": val}
        if isinstance(val, (int, float)) and hasattr(val, "dtype"):  # TypedInt, TypedFloat
            return {"typed": {"kind": "int" if isinstance(val, int) else "float", "value": self.number(val),
                              **dtype_data(val.dtype)}}
        if isinstance(val, (int, float)):
            return {"number": self.number(val)}
        if isinstance(val, np.ndarray) or hasattr(val, "__array__"):
            return array(val)
        raise ValueError("a literal of type %s" % type(val).__name__)

    @staticmethod
    def number(x):
        if isinstance(x, bool):
            return x
        if isinstance(x, int):
            return int(x)
        x = float(x)
        return x if x == x and abs(x) != float("inf") else {"float": repr(x)}  # nan, inf, -inf

    def aval(self, aval, drop=False):
        if type(aval).__name__ == "AbstractRef":  # a Pallas kernel's block or scratch buffer
            out = {"kind": "AbstractRef", "inner": self.aval(aval.inner_aval),
                   "space": self.value(aval.memory_space)}
            if drop:
                out["drop"] = True
            return out
        out = {"shape": [int(n) for n in aval.shape], **dtype_data(aval.dtype),
               "weak": bool(getattr(aval, "weak_type", False))}
        sharding = getattr(aval, "sharding", None)
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None and not getattr(mesh, "empty", True):
            out["sharding"] = self.value(sharding)
        mat = getattr(aval, "manual_axis_type", None)
        if mat is not None and not getattr(mat, "empty", True):
            out["mat"] = {k: sorted(str(a) for a in getattr(mat, k)) for k in ("varying", "unreduced", "reduced")}
        space = getattr(aval, "memory_space", None)
        if space is not None and getattr(space, "name", "Device") != "Device":
            out["memory_space"] = str(space.name)
        if type(aval).__name__ != "ShapedArray":
            out["kind"] = type(aval).__name__
        if drop:
            out["drop"] = True
        return out

    # -- parameters --
    def param(self, primitive, name, v):
        if name == "policy":
            if v is None:
                return None
            return {"policy": self.policies.get(id(v), "custom")}
        return self.value(v)

    def value(self, v):
        import numpy as np
        core, jax = self.core, self.jax
        if isinstance(v, (core.ClosedJaxpr, core.Jaxpr)):
            return self.sub(v)
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, enum.Enum):  # before int: IntEnum is an int
            return {"enum": enum_name(type(v)), "name": v.name}
        if type(v).__name__ in ("ShapedArray", "AbstractRef"):
            return {"aval": self.aval(v)}
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, np.bool_):
            return self.number(v.item() if isinstance(v, np.generic) else v)
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, np.dtype) or type(v).__name__ == "KeyTy" or (isinstance(v, type) and issubclass(v, np.generic)):
            return dtype_data(v)
        if isinstance(v, jax.sharding.PartitionSpec):
            return {"pspec": [self.value(e) for e in v],
                    "unreduced": sorted(getattr(v, "unreduced", ()) or ()), "reduced": sorted(getattr(v, "reduced", ()) or ())}
        if isinstance(v, core.Primitive):  # select_and_scatter_add's comparison: JAX's primitive by name
            return {"primitive": str(v.name)[:80]}
        if type(v).__name__ == "PRNGImpl" and isinstance(getattr(v, "name", None), str):
            return {"prng_impl": v.name}  # by its registered name: the verifier takes its own registry's entry
        if isinstance(v, tuple) and hasattr(v, "_fields"):  # GatherDimensionNumbers and other named tuples
            return {"struct": type(v).__name__, "fields": {f: self.value(getattr(v, f)) for f in v._fields}}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, list):
            return {"list": [self.value(x) for x in v]}
        if isinstance(v, frozenset):
            return {"frozenset": sorted((self.value(x) for x in v), key=repr)}
        if isinstance(v, jax.sharding.Mesh) and v.empty:
            return {"mesh": {"sizes": [], "names": [], "types": [], "devices": None}}
        if isinstance(v, jax.sharding.Mesh):
            return {"mesh": {"sizes": [int(n) for n in v.axis_sizes], "names": [str(a) for a in v.axis_names],
                             "types": [t.name for t in v.axis_types],
                             "devices": [int(d.id) for d in v.devices.flat]}}
        if isinstance(v, jax.sharding.AbstractMesh):
            device = v.abstract_device
            return {"abstract_mesh": {
                "sizes": [int(n) for n in v.axis_sizes], "names": [str(a) for a in v.axis_names],
                "types": [t.name for t in v.axis_types],
                "device": None if device is None else {"device_kind": str(device.device_kind),
                                                       "num_cores": device.num_cores, "platform": str(device.platform)}}}
        if isinstance(v, jax.sharding.NamedSharding):
            return {"named_sharding": {"mesh": self.value(v.mesh), "spec": self.value(v.spec),
                                       "memory_kind": v.memory_kind}}
        if type(v).__name__ == "UnspecifiedValue":
            return {"unspecified": True}
        if type(v).__name__ == "PyTreeDef":
            try:
                return {"treedef": tree_data(v)}
            except NotPlainTree as exc:
                try:
                    return {"pytree": self.pytree(v)}
                except NotPlainTree:
                    return {"unknown": "a tree structure holding %s" % exc}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"dict": [[k, self.value(x)] for k, x in sorted(v.items())]}
        import dataclasses
        if dataclasses.is_dataclass(v) and not isinstance(v, type) and type(v).__module__.startswith("jax._src.pallas"):
            return {"dc": enum_name(type(v)), "fields": {f.name: self.value(getattr(v, f.name))
                                                       for f in dataclasses.fields(v) if f.init}}
        if callable(v) or type(v).__name__ == "WrappedFun":
            return {CALLABLE: type(v).__name__[:80]}
        return {"unknown": type(v).__name__[:80]}

    def pytree(self, t, depth=0):
        """A tree structure whose nodes may be Pallas' indexers (``x_ref[pl.ds(i, 8), :]`` reads through an
        ``NDIndexer`` of ``Slice``s): ``"*"`` for a leaf, ``{"n": KIND, "aux": VALUE, "kids": [...]}``
        otherwise, KIND one of ``TREE_NODES``. Any other node raises ``NotPlainTree``."""
        if depth >= MAX_TREE_DEPTH:
            raise TreeTooDeep(MAX_TREE_DEPTH)
        data = t.node_data()
        if data is None:
            return "*"
        kind, aux = data
        name = "None" if kind is type(None) else getattr(kind, "__name__", "?")
        if name not in TREE_NODES:
            raise NotPlainTree(name[:80])
        if name == "dict":
            aux = list(aux)
            if not all(isinstance(k, str) for k in aux):
                raise NotPlainTree("a dictionary key that is not a string")
        return {"n": name, "aux": None if aux is None else self.value(aux),
                "kids": [self.pytree(c, depth + 1) for c in t.children()]}


KERNEL_SEED = 0
"""The seed of TPU interpret mode's order over a kernel's ``parallel`` grid axes (fixed: one verdict per
program)."""
_interpret = []
_point = [None]


def _record_point(token, point, core):
    """TPU interpret mode's grid-point recorder: the grid point now running, for a fault's message."""
    _point[0] = tuple(int(i) for i in point)
    return token


def tpu_interpret():
    """How every kernel runs on this CPU, whatever the learner's ``interpret=`` says: JAX's TPU interpret mode
    (``pltpu.InterpretParams``), which simulates VMEM, SMEM and the copies between them and HBM as a TPU makes
    them. A block index or a slice past its array raises (``out_of_bounds_reads="raise"``; generic interpret
    mode clamps it back inside and gives right numbers a chip never gives), a buffer read before it is written
    holds NaN (``uninitialized_memory="nan"``), an output block the grid leaves and comes back to raises (a TPU
    writes it back when its index changes and never reads it in again), and ``parallel`` grid axes are visited
    in a shuffled order (``random_seed``), so a kernel that depends on their order gets wrong numbers, as on a
    chip whose cores split them. One object per process, so that compiled programs are reused."""
    if not _interpret:
        from jax.experimental.pallas import tpu as pltpu
        _interpret.append(pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan",
                                                random_seed=KERNEL_SEED, grid_point_recorder=_record_point))
    return _interpret[0]


def before_kernels():
    """Called before a program with kernels runs: TPU interpret mode keeps a process-wide simulated memory,
    which a kernel that raised leaves behind (JAX: "you must call ``reset_tpu_interpret_mode_state``"). Runs
    here are one at a time, so nothing else is using it."""
    _point[0] = None
    try:
        from jax.experimental.pallas import tpu as pltpu
        pltpu.reset_tpu_interpret_mode_state()
    except Exception:  # noqa: BLE001 - an older JAX without TPU interpret mode's state
        pass


_SLICE = re.compile(r"slice\((-?\d+), (-?\d+), (?:-?\d+|None)\)")


def _ranges(text):
    """``slice(0, 8, 1), slice(48, 56, 1)`` as ``[0:8, 48:56]``, and the widths ``(8, 8)``."""
    found = _SLICE.findall(text)
    return "[%s]" % ", ".join("%s:%s" % (a, b) for a, b in found), tuple(int(b) - int(a) for a, b in found)


def kernel_fault(text, buffers=()):
    """What TPU interpret mode's own error in ``text`` means for the learner's kernel, in a sentence, or None
    when ``text`` holds none. ``buffers``: ``(name, shape)`` of the kernel's blocks and scratch buffers, to
    name the buffer a read past its end was in when only one has that shape."""
    text = str(text)
    m = re.search(r'Out-of-bounds block index \(([^)]*)\) for (input|output) "([^"]*)" in iteration \(([^)]*)\)'
                  r'.*?\[\((.*?)\)\] but (?:input|output) has shape \(([^)]*)\)', text, re.S)
    if m:
        index, kind, name, point, where, shape = m.groups()
        cells, widths = _ranges(where)
        shape = "(%s)" % shape.strip(" ,")
        if not re.match(r"^\w+$", name) or name == "unknown":
            dims = tuple(int(x) for x in re.findall(r"-?\d+", shape))
            named = [b[0] for b in buffers if len(b) > 2 and tuple(b[2]) == dims and tuple(b[1]) == widths
                     and b[0].startswith("outputs") == (kind == "output")]
            name = named[0] if len(set(named)) == 1 else ""
        who = "%s `%s`" % (kind, name) if name else "the %s of shape %s" % (kind, shape)
        return ("A block outside its array: at grid step (%s) the index map of %s (blocks of %s) returns block "
                "(%s), which covers %s of an array of shape %s. On a TPU that %s memory outside the array (a v5e "
                "gives NaN or garbage, or halts); interpret mode with `interpret=True` clamps the block back inside "
                "and hides the bug. The grader runs kernels as a TPU does: fix that `BlockSpec`'s index map."
                % (point, who, widths, index, cells, shape, "reads" if kind == "input" else "writes"))
    m = re.search(r"Out-of-bounds (read|write|swap|masked swap) of \(\d+ \d+ (\w+) \d+\):\s*\w+ \[\((.*?)\)\] "
                  r"but buffer has shape \(([^)]*)\)", text, re.S)
    if m:
        verb, space, where, shape = m.groups()
        cells, _ = _ranges(where)
        dims = tuple(int(x) for x in re.findall(r"-?\d+", shape))
        named = [b[0] for b in buffers if tuple(b[1]) == dims]
        what = ("`%s`'s %s buffer" % (named[0], space.upper()) if len(set(named)) == 1
                else "a %s buffer" % space.upper())
        step = " at grid step %s" % (_point[0],) if _point[0] is not None else ""
        return ("A %s outside a buffer%s: your kernel %s %s of %s of shape %s (a slice or `pl.ds` that runs "
                "past the block). On a TPU that %s whatever lies next to it in VMEM; interpret mode with "
                "`interpret=True` clamps it and hides the bug."
                % ("write" if verb != "read" else "read", step, "writes" if verb != "read" else "reads", cells,
                   what, dims, "touches" if verb != "read" else "reads"))
    m = re.search(r"Revisited block \((.*?)\) of output (\d+) in iteration \(([^)]*)\)\. The block was previously "
                  r"visited in iterations \(([^)]*)\) through \(([^)]*)\)", text, re.S)
    if m:
        where, k, now, first, last = m.groups()
        cells, _ = _ranges(where)
        return ("An output block the grid comes back to: output %s's block %s is written at grid steps (%s) through "
                "(%s), left, and visited again at step (%s). A TPU writes an output block back to HBM when its "
                "index changes and never reads it in again, so the second visit starts from stale data (on a v5e "
                "every entry came out wrong). Order the grid so that each output block's steps come one after "
                "another (the reduction axis last)." % (k, cells, first, last, now))
    return None


MAX_GRID_POINTS = 1 << 16
"""A grid with more points than this is not run point by point (a case's grid has a few, the realistic size's
a few thousand)."""


def grid_points(grid):
    """Every point of ``grid`` in the order a TPU walks it (row-major: the last axis fastest), the order of
    ``run_index_map``'s rows; one point, ``()``, for a grid of no axes."""
    import numpy as np
    return list(np.ndindex(*tuple(grid)))


def run_index_map(index_map, grid):
    """A block's index map (a ``ClosedJaxpr`` of the grid indices) run at every point of ``grid`` in the order a
    TPU walks it (the last axis fastest), all points in one batched evaluation: a list of block indices per
    point, or None where it takes more inputs than the grid's (scalar-prefetch values), does not run on whole
    numbers, or the grid is not a few thousand whole numbers. What reading the map's equations cannot say,
    running it does."""
    import jax
    import numpy as np
    from jax.extend import core as jcore
    grid = tuple(grid)
    if not all(isinstance(n, int) and n >= 0 for n in grid) or len(index_map.jaxpr.invars) != len(grid):
        return None
    count = 1
    for n in grid:
        count *= n
    if not 0 < count <= MAX_GRID_POINTS:
        return None
    coords = np.indices(grid, dtype=np.int32).reshape(len(grid), count)
    try:
        fn = jcore.jaxpr_as_fun(index_map)
        outs = jax.vmap(fn)(*[np.asarray(c) for c in coords]) if grid else fn()
        cols = [np.broadcast_to(np.asarray(o), (count,)) for o in outs]
        if not all(np.issubdtype(c.dtype, np.integer) for c in cols):
            return None
        return [[int(c[k]) for c in cols] for k in range(count)]
    except Exception:  # noqa: BLE001 - a map that does not run on whole numbers: said by whoever asked
        return None


def kernel_buffers(closed):
    """``(name, block shape, array shape)`` of every block, and ``(name, shape)`` of every scratch buffer, of the
    program's ``pallas_call``s (a block's name is where it comes from: ``args[0]``, ``outputs``)."""
    out = []
    for e in all_eqns(closed):
        gm = e.params.get("grid_mapping") if e.primitive.name == "pallas_call" else None
        if gm is None:
            continue
        for bm in gm.block_mappings:
            shape = tuple(getattr(b, "block_size", b) for b in bm.block_shape)
            out.append((str(bm.origin)[:40], tuple(s for s in shape if isinstance(s, int)),
                        tuple(int(n) for n in bm.array_aval.shape)))
        for k, a in enumerate(gm.scratch_avals):
            out.append(("scratch buffer %d" % k, tuple(int(n) for n in a.shape)))
    return out


def interpret_pallas(closed):
    """``closed`` with every ``pallas_call`` set to run in TPU interpret mode (``tpu_interpret``; Mosaic lowers
    only for a TPU): what this CPU runs where the program is not handed to the verifier (a grading without it,
    ``build-cases``). The same object when there is no ``pallas_call``."""
    if not any(e.primitive.name == "pallas_call" for e in all_eqns(closed)):
        return closed
    from jax.extend import core as jcore

    def sub(v):
        if isinstance(v, jcore.ClosedJaxpr):
            return v.replace(jaxpr=jaxpr(v.jaxpr))
        if isinstance(v, jcore.Jaxpr):
            return jaxpr(v)
        if isinstance(v, tuple) and v and all(isinstance(x, (jcore.ClosedJaxpr, jcore.Jaxpr)) for x in v):
            return tuple(sub(x) for x in v)
        return v

    from jax._src.pallas import core as pallas_core
    own = frozenset(pallas_core.get_interpret_effects(tpu_interpret()))

    def jaxpr(j):
        # TPU interpret mode's memory is Python called from the program, in order: the call and every
        # equation and program that holds one state those effects, as JAX's own rules infer them
        eqns, added = [], set()
        for e in j.eqns:
            if e.primitive.name == "pallas_call":
                params, extra = {**e.params, "interpret": tpu_interpret()}, set(own)
            else:
                params, extra = {k: sub(v) for k, v in e.params.items()}, set()
                for v in params.values():
                    for x in (v if isinstance(v, (tuple, list)) else (v,)):
                        if isinstance(x, (jcore.ClosedJaxpr, jcore.Jaxpr)):
                            extra |= {f for f in x.effects if f in own}
            eqns.append(e.replace(params=params, effects=frozenset(e.effects) | extra))
            added |= extra
        return j.replace(eqns=eqns, effects=frozenset(j.effects) | added)

    return closed.replace(jaxpr=jaxpr(closed.jaxpr))

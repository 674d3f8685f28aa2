"""Rebuild a traced program from the data ``grader/boundary/program.py`` wrote, in a process that never ran learner code.

Nothing from the data is unpickled, imported or evaluated: primitives are looked up by name in an
allow-list made from JAX's own modules (``allowed_primitives``), enums and named tuples in a fixed table
of JAX's classes, and every other value is rebuilt from plain numbers, strings and bytes. The rebuilt
program is then type-checked by JAX (``jax.core.check_jaxpr``): data that does not describe a well-typed
program is refused, not run. What cannot be rebuilt (host callbacks, the learner's own primitives, a
value of an unknown kind) raises ``NotRebuildable`` with a sentence a learner can act on.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from grader.boundary.program import CALLABLE, FORMAT, PRINTS, before_kernels, tpu_interpret

DROPPED = PRINTS
"""Primitives left out of the rebuilt program: ``jax.debug.print`` and ``jax.debug.callback`` have no outputs,
and what they printed is the child's text (the verifier prints nothing and calls no learner function)."""

DROPPED_EFFECTS = frozenset({"DebugEffect", "OrderedDebugEffect"})
"""The effects of ``DROPPED`` equations, left out of the equations that hold them too."""

CALLBACKS = frozenset({"pure_callback", "io_callback", "buffer_callback", "callback",
                       "outside_call", "host_callback"})
"""Primitives that call back into Python: their function is the learner's, so the verifier cannot run them."""

NATIVE_CALLS = frozenset({"ffi_call", "cudnn_fusion", "call_exported", "psend", "precv"})
"""Primitives that hand work to native code by name (XLA custom calls, an exported module), or to another
process: refused whatever their parameters say, since a target name is data the learner wrote."""

KERNELS = frozenset({"core_map"})
"""Pallas kernels: their programs work on references (``AbstractRef``) with a grid mapping of their own, which
the rebuild does not describe yet; refused with that reason (``tests/test_rebuild_sweep.py`` pins it)."""

STAND_INS = {
    ("custom_jvp_call", "jvp_jaxpr_fun"), ("custom_vjp_call", "fwd_jaxpr_thunk"), ("custom_vjp_call", "bwd"),
    ("custom_vjp_call", "out_trees"),
}
"""``(primitive, parameter)`` pairs whose value is a function of the learner's that only differentiation
calls: the verifier evaluates custom derivative rules through their primal ``call_jaxpr`` and never
differentiates, so it puts a function that refuses in its place."""

MAX_DEPTH = 64
"""Nesting of values and sub-programs in the data (the child's own bound is 32)."""
MAX_EQUATIONS = 20_000
"""Equations in one program's data, sub-programs included, and equations the program runs, a shared
sub-program counted at each use (the child's own bound is 10,000 for all, counted per use too)."""
MAX_NAME_STACK = 64
"""Scopes and transformations in one equation's name stack."""
MAX_NAME_CHARS = 100
"""Characters kept of each name in a name stack (what the verifier serialises and the server reads)."""


class NotRebuildable(ValueError):
    """The data does not describe a program the verifier can rebuild and run."""

    @classmethod
    def of(cls, exc: BaseException) -> "NotRebuildable":
        """The sentence for data that broke the rebuild in a way no check above foresaw (a frozenset holding
        a list, a dictionary with keys ``1`` and ``"1"``): the learner's data, refused, never the grader's fault."""
        return cls("the traced program's data could not be rebuilt (%s: %s)"
                   % (type(exc).__name__, str(exc).split("\n")[0][:200]))


def _never(*args: Any, **kwargs: Any) -> Any:
    raise NotRebuildable("the verifier evaluates custom derivative rules through their primal program only")


def _never_wrapped() -> Any:
    """``_never`` as JAX's wrapped function (what custom derivative rules are held as)."""
    from jax._src import api_util
    from jax._src import linear_util as lu
    return lu.wrap_init(_never, debug_info=api_util.debug_info("a custom derivative rule", _never, (), {}))


@functools.lru_cache(maxsize=1)
def allowed_primitives() -> dict[str, Any]:
    """``{name: primitive}`` for every primitive defined by JAX's own modules (imported here, in a process
    with no learner code). A name two different primitives share is left out (ambiguous)."""
    import jax  # noqa: F401 - imports JAX's primitive modules
    import jax.experimental.shard_map  # noqa: F401
    import jax.experimental.pallas  # noqa: F401 - pallas_call, program_id, ... (the child imports them too)
    import jax.experimental.pallas.tpu  # noqa: F401
    from jax.extend import core as jcore
    found: dict[str, set] = {}
    objects: dict[int, Any] = {}
    for name, module in list(sys.modules.items()):
        if not (name == "jax" or name.startswith(("jax.", "jaxlib."))) or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, jcore.Primitive):
                found.setdefault(value.name, set()).add(id(value))
                objects[id(value)] = value
    return {name: objects[next(iter(ids))] for name, ids in found.items() if len(ids) == 1}


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, dict[str, Any]]:
    import jax
    from jax import lax
    from jax._src import mesh as mesh_lib
    from jax._src.lib import xla_client
    from jax.extend import core as jcore
    from jax._src.lax.control_flow import solves
    enums = {cls.__name__: cls for cls in (lax.Precision, lax.GatherScatterMode, lax.RoundingMethod,
                                           mesh_lib.AxisType, xla_client.ArrayCopySemantics, lax.FftType,
                                           lax.RandomAlgorithm)}
    for name in ("DotAlgorithmPreset",):
        cls = getattr(lax, name, None)
        if cls is not None:
            enums[name] = cls
    structs = {cls.__name__: cls for cls in (lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers,
                                             lax.ConvDimensionNumbers, solves._LinearSolveTuple)}
    policies = {n: getattr(jax.checkpoint_policies, n) for n in dir(jax.checkpoint_policies) if not n.startswith("_")}
    from grader.boundary.program import enum_name
    from jax._src.pallas import core as pallas_core
    from jax._src.pallas.mosaic import core as mosaic_core
    from jax._src.state import indexing
    for cls in (pallas_core.MemorySpace, mosaic_core.MemorySpace, mosaic_core.GridDimensionSemantics):
        enums[enum_name(cls)] = cls
    dataclasses_ = {enum_name(cls): cls for cls in (
        pallas_core.GridMapping, pallas_core.BlockMapping, pallas_core.Blocked, pallas_core.Element,
        pallas_core.Squeezed, pallas_core.BoundedSlice, pallas_core.Buffered, pallas_core.CostEstimate,
        mosaic_core.CompilerParams)}
    nodes = {"tuple": tuple, "list": list, "dict": dict, "None": type(None), "NDIndexer": indexing.NDIndexer,
             "Slice": indexing.Slice}
    return {"enums": enums, "structs": structs, "policies": policies, "core": jcore, "dataclasses": dataclasses_,
            "nodes": nodes}


class Rebuilder:
    """``Rebuilder().program(data)`` -> a ``ClosedJaxpr`` equal to the traced one, or ``NotRebuildable``."""

    def __init__(self, interpret: bool | None = True) -> None:
        import jax
        from jax._src import core
        self.jax, self.core = jax, core
        self.interpret = interpret
        """A ``pallas_call``'s ``interpret`` flag, whatever the data says: True on this CPU (Mosaic lowers only
        for a TPU, so the kernel runs in JAX's TPU interpret mode, ``program.tpu_interpret``), False for a TPU
        compile (``tpu_compile.py``); None keeps the data's (a plain flag only)."""
        self.primitives = allowed_primitives()
        self.tables = _tables()
        self.devices = {d.id: d for d in jax.devices()}

    def program(self, data: Any) -> Any:
        """The rebuilt and type-checked ``ClosedJaxpr`` of a whole program; any data it cannot take is
        ``NotRebuildable`` with a sentence."""
        try:
            return self._program(data)
        except (NotRebuildable, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. RecursionError, TypeError from a value JAX refuses
            raise NotRebuildable.of(exc) from None

    def _program(self, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise NotRebuildable("the traced program's data is not in the verifier's format")
        self.deepest, self.sub_depths, self.subprograms, self.equations = 0, [], [], 0
        self.uses, self.sub_uses = 0, []
        self.contexts = [self.context(c) for c in _list(data.get("contexts"))]
        self.subprograms: list[Any] = []
        self.sub_depths: list[int] = []
        self.equations = 0
        self.sub_uses = []
        for entry in _list(data.get("subprograms")):  # each refers only to those before it: no cycles
            self.deepest, self.uses = 0, 0
            if isinstance(entry, dict) and isinstance(entry.get("closed"), dict):
                self.subprograms.append(self.closed(entry["closed"], 1))
            elif isinstance(entry, dict) and "open" in entry:
                self.subprograms.append(self.jaxpr(entry["open"], 1))
            else:
                raise NotRebuildable("a sub-program's data is not a program")
            self.sub_depths.append(self.deepest + 1)
            self.sub_uses.append(self.uses)
            if self.sub_depths[-1] > MAX_DEPTH:
                raise NotRebuildable("the traced program is nested too deeply")
        self.uses = 0
        closed = self.closed(data, 0)
        try:
            self.core.check_jaxpr(closed.jaxpr)
        except NotRebuildable:
            raise
        except Exception as exc:  # noqa: BLE001 - JAX's type checker says why the data is inconsistent
            raise NotRebuildable("the traced program's data is not a well-typed program (%s)"
                                 % str(exc).split("\n")[0][:200]) from None
        _remember_source(closed, data)
        return closed

    # -- programs --
    def closed(self, data: dict, depth: int) -> Any:
        consts = [self.array(c) for c in _list(data.get("consts"))]
        jaxpr = self.jaxpr(data.get("jaxpr"), depth)
        if len(consts) != len(jaxpr.constvars):
            raise NotRebuildable("the traced program's constants do not match its constant inputs")
        return self.core.ClosedJaxpr(jaxpr, consts)

    def jaxpr(self, data: Any, depth: int) -> Any:
        core = self.core
        if depth > MAX_DEPTH:
            raise NotRebuildable("the traced program is nested too deeply")
        if not isinstance(data, dict):
            raise NotRebuildable("a sub-program's data is not a program")
        names: list[Any] = []

        def define(aval_data: Any) -> Any:
            aval = self.aval(aval_data)
            v = core.DropVar(aval) if isinstance(aval_data, dict) and aval_data.get("drop") else core.Var(aval)
            names.append(v)
            return v

        constvars = [define(a) for a in _list(data.get("constvars"))]
        invars = [define(a) for a in _list(data.get("invars"))]
        eqns = []
        for e in _list(data.get("eqns")):
            self.equations += 1
            self._use(1)
            if self.equations > MAX_EQUATIONS:
                raise NotRebuildable("the traced program has more than %d equations" % MAX_EQUATIONS)
            if not isinstance(e, dict):
                raise NotRebuildable("an equation's data is not an equation")
            name = e.get("p")
            ins = [self.atom(a, names) for a in _list(e.get("in"))]
            if name in DROPPED:
                if e.get("out"):
                    raise NotRebuildable("`%s` with results" % name)
                continue
            primitive = self.primitive(name)
            raw = e.get("params")
            if not isinstance(raw, dict):
                raise NotRebuildable("an equation's parameters are not a dictionary")
            params = {str(k): self.param(name, str(k), v, depth) for k, v in raw.items()}
            if name == "reduce" and isinstance(params.get("jaxpr"), self.core.ClosedJaxpr):
                params["computation"] = _reducer(self.core, params["jaxpr"])
            outs = [define(a) for a in _list(e.get("out"))]
            effects = self.effects(e.get("effects"), name, names) | self.interpret_effects(name, params)
            ctx = e.get("ctx")
            if not isinstance(ctx, int) or isinstance(ctx, bool) or not 0 <= ctx < len(self.contexts):
                raise NotRebuildable("an equation without its context")
            eqns.append(core.new_jaxpr_eqn(ins, outs, primitive, params, effects, ctx=self.contexts[ctx],
                                           source_info=self.source_info(e.get("stack"))))
        outvars = [self.atom(a, names) for a in _list(data.get("outvars"))]
        effects = core.join_effects(*(e.effects for e in eqns)) if eqns else core.no_effects
        from jax._src import linear_util as lu
        return core.Jaxpr(constvars, invars, outvars, eqns, effects,
                          debug_info=lu.DebugInfo("rebuilt", "<the verifier>", None, None))

    def _use(self, n: int) -> None:
        """Count ``n`` more equations run by the program being rebuilt: a sub-program is counted at each use
        (a ``jit`` shared by 1,500 calls is 1,500 copies to type-check, serialise and read), and the count is
        bounded before JAX's checker walks the uses one by one."""
        self.uses += n
        if self.uses > MAX_EQUATIONS:
            raise NotRebuildable("the traced program runs more than %d equations, counting a shared sub-program at "
                                 "each of its uses" % MAX_EQUATIONS)

    def source_info(self, data: Any) -> Any:
        """Where the equation came from, as far as names go (scopes and autodiff transformations): what the
        checks and probes read to tell a forward pass from a backward one. No traceback: the verifier has
        none of the learner's frames."""
        from jax._src import source_info_util as si
        elems = []
        if len(_list(data)) > MAX_NAME_STACK:
            raise NotRebuildable("an equation's name stack is deeper than %d" % MAX_NAME_STACK)
        for item in _list(data):
            if not (isinstance(item, list) and len(item) == 2 and item[0] in ("s", "t") and isinstance(item[1], str)):
                raise NotRebuildable("an equation's name stack of an unknown kind")
            name = item[1][:MAX_NAME_CHARS]
            elems.append(si.Transform(name) if item[0] == "t" else si.Scope(name))
        return si.SourceInfo(None, si.NameStack(tuple(elems)))

    def context(self, data: Any) -> Any:
        """An equation's context (``JaxprEqnContext``): XLA metadata is refused, the rest rebuilt."""
        core = self.core
        if not isinstance(data, dict) or data.get("xla_metadata") is not None:
            raise NotRebuildable("the traced program carries XLA metadata, which the grader does not rebuild")
        compute_type = data.get("compute_type")
        if compute_type is not None and not isinstance(compute_type, str):
            raise NotRebuildable("an equation context of an unknown kind")
        flags = [data.get(k) for k in ("threefry_partitionable", "remove_size_one_mesh_axis")]
        if not all(isinstance(f, bool) for f in flags):
            raise NotRebuildable("an equation context of an unknown kind")
        mesh = self.value(data.get("mesh"), 0)
        from jax._src import mesh as mesh_lib
        if not isinstance(mesh, mesh_lib.AbstractMesh):
            raise NotRebuildable("an equation context of an unknown kind")
        return core.JaxprEqnContext._create(compute_type, flags[0], mesh, flags[1], None)

    def effects(self, data: Any, primitive: str, names: list | None = None) -> Any:
        """An equation's effects: named axes (a collective inside ``shard_map``, ``vmap`` with a name) are
        rebuilt; ``jax.debug.print``'s are dropped with it; any other is refused (JAX's checker then compares
        them with what its own rules infer)."""
        from jax._src import core
        from jax._src.state import types as state_types
        out = set()
        for x in _list(data):
            kind = x.get("kind") if isinstance(x, dict) else None
            if kind == "NamedAxisEffect" and isinstance(x.get("name"), str):
                out.add(core.NamedAxisEffect(x["name"]))
            elif kind in ("ReadEffect", "WriteEffect", "AccumEffect") and names is not None:
                # a Pallas kernel's read or write of a Ref: the variable it names (JAX's checker compares
                # these with what its own rules infer)
                if "ref" in x:
                    ref = self.atom(x["ref"], names)
                    if not isinstance(ref, core.Var):
                        raise NotRebuildable("an effect on a value that is not a variable")
                else:
                    ref = _int(x.get("index"))
                out.add(getattr(state_types, kind)(ref))
            elif kind not in DROPPED_EFFECTS:
                raise NotRebuildable("the traced program's `%s` has an effect the grader cannot reproduce (`%s`)"
                                     % (primitive, str(kind)[:60]))
        return frozenset(out) if out else core.no_effects

    def interpret_effects(self, primitive: str, params: dict) -> Any:
        """The effects TPU interpret mode gives a ``pallas_call`` (its simulated memory is Python called from
        the program, in order), and every equation that holds one: JAX's own rules infer them once the
        ``interpret`` parameter is set here, so the rebuilt program states them too."""
        if self.interpret is not True:
            return frozenset()
        from jax._src.pallas import core as pallas_core
        own = frozenset(pallas_core.get_interpret_effects(tpu_interpret()))
        if primitive == "pallas_call":
            return own
        out: set = set()
        for v in params.values():
            for x in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(x, (self.core.ClosedJaxpr, self.core.Jaxpr)):
                    out |= {e for e in x.effects if e in own}
        return frozenset(out)

    def primitive(self, name: Any) -> Any:
        if not isinstance(name, str):
            raise NotRebuildable("an equation without a primitive's name")
        if name in KERNELS:
            raise NotRebuildable("the traced program calls a Pallas kernel through `%s`, which the grader does not "
                                 "rebuild; write it with `pl.pallas_call`" % name)
        if name.startswith("foreign:") or name not in self.primitives:
            shown = name.split(":", 1)[-1][:80]
            raise NotRebuildable("the traced program uses the primitive `%s`, which is not one of JAX's own; the "
                                 "grader runs only programs made of JAX's primitives" % shown)
        if name in NATIVE_CALLS or name.startswith("dot_product_attention"):
            raise NotRebuildable("the traced program calls native code by name (`%s`), which the grader does not run"
                                 % name)
        if name in CALLBACKS:
            raise NotRebuildable("the traced program calls back into Python (`%s`), which the grader cannot run "
                                 "outside your code's process; compute with JAX operations instead" % name)
        return self.primitives[name]

    def atom(self, data: Any, names: list) -> Any:
        if isinstance(data, dict) and "v" in data:
            n = data["v"]
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < len(names):
                raise NotRebuildable("an equation reads a variable that is not defined before it")
            return names[n]
        if isinstance(data, dict) and "lit" in data:
            aval = self.aval(data.get("aval"))
            return self.core.Literal(self.literal(data["lit"], aval), aval)
        raise NotRebuildable("an equation's input is neither a variable nor a literal")

    def literal(self, data: Any, aval: Any) -> Any:
        from jax._src import literals
        if isinstance(data, dict) and "bool" in data and isinstance(data["bool"], bool):
            return data["bool"]
        if isinstance(data, dict) and "typed" in data and isinstance(data["typed"], dict):
            t = data["typed"]
            dtype = self.dtype(t)
            if t.get("kind") == "int":
                return literals.TypedInt(_int(t.get("value")), dtype)
            return literals.TypedFloat(_float(t.get("value")), dtype)
        if isinstance(data, dict) and "number" in data:
            v = data["number"]
            return _int(v) if isinstance(v, int) else _float(v)
        if isinstance(data, dict) and "array" in data:
            arr = self.array(data)
            if not isinstance(arr, np.ndarray):
                raise NotRebuildable("a literal of PRNG keys")
            return literals.TypedNdArray(arr, aval)
        raise NotRebuildable("a literal of an unknown kind")

    # -- values --
    def array(self, data: Any) -> np.ndarray:
        a = data.get("array") if isinstance(data, dict) else None
        if not isinstance(a, dict):
            raise NotRebuildable("an array's data is not an array")
        dtype = self.dtype(a)
        if not isinstance(dtype, np.dtype):
            return self.key_array(a, dtype)
        shape = tuple(_int(n) for n in _list(a.get("shape")))
        if any(n < 0 for n in shape):
            raise NotRebuildable("an array of negative size")
        try:
            raw = base64.b64decode(a.get("b64", ""), validate=True)
        except Exception:  # noqa: BLE001
            raise NotRebuildable("an array's bytes are not base64") from None
        axes = [_int(i) for i in _list(a.get("broadcast"))]
        if sorted(set(axes)) != axes or not all(0 <= i < len(shape) for i in axes) or (axes and 0 in shape):
            raise NotRebuildable("an array broadcast along axes it does not have")
        stored = tuple(n for i, n in enumerate(shape) if i not in axes)
        if len(raw) != int(np.prod(stored, dtype=np.int64)) * dtype.itemsize:
            raise NotRebuildable("an array's bytes do not match its shape and dtype")
        values = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(stored)
        if not axes:
            return values
        # the same strides NumPy had: 0 along the broadcast axes (JAX lowers such a constant as a broadcast)
        strides, k = [], 0
        for i in range(len(shape)):
            if i in axes:
                strides.append(0)
            else:
                strides.append(values.strides[k])
                k += 1
        return np.lib.stride_tricks.as_strided(values, shape=shape, strides=strides, writeable=False)

    def key_array(self, a: dict, dtype: Any) -> Any:
        """An array of PRNG keys (a constant the learner's function closed over): its raw bits, wrapped by the
        verifier's own implementation of that name."""
        bits = self.array(a.get("data")) if isinstance(a.get("data"), dict) else None
        shape = tuple(_int(n) for n in _list(a.get("shape")))
        impl = dtype._impl
        if bits is None or bits.dtype != np.uint32 or bits.shape != shape + tuple(impl.key_shape):
            raise NotRebuildable("an array of PRNG keys whose bits do not match its implementation")
        return self.jax.random.wrap_key_data(bits, impl=impl.name)

    def prng_impl(self, name: Any) -> Any:
        """A PRNG implementation by its registered name, from JAX's own registry in this process (never
        the learner's: a name the verifier's JAX does not register is refused)."""
        from jax._src.random import prng
        impl = prng.prngs.get(name) if isinstance(name, str) else None
        if impl is None:
            raise NotRebuildable("a PRNG of an unknown implementation (`%s`)" % str(name)[:40])
        return impl

    def dtype(self, data: Any) -> Any:
        name = data.get("dtype") if isinstance(data, dict) else None
        if name == "key":
            from jax._src.random import prng
            return prng.KeyTy(self.prng_impl(data.get("impl")))
        if not isinstance(name, str) or not name.isidentifier():
            raise NotRebuildable("a dtype that is not named")
        try:
            return np.dtype(self.jax.numpy.dtype(name))
        except Exception:  # noqa: BLE001
            raise NotRebuildable("the dtype `%s` is not one JAX knows" % name[:40]) from None

    def aval(self, data: Any) -> Any:
        core = self.core
        if isinstance(data, dict) and data.get("kind") == "AbstractRef":  # a Pallas kernel's block or scratch
            from jax._src.state.types import AbstractRef
            inner = self.aval(data.get("inner"))
            space = self.value(data.get("space"), 1)
            if not (space is None or isinstance(space, tuple(self.tables["enums"][k] for k in self.tables["enums"]
                                                              if k.endswith(":MemorySpace")))):
                raise NotRebuildable("a Ref in a memory space of an unknown kind")
            return AbstractRef(inner, space)
        if not isinstance(data, dict) or data.get("kind") not in (None, "ShapedArray"):
            raise NotRebuildable("a value that is not an array (%s)" % str(data.get("kind") if isinstance(data, dict) else "")[:60])
        shape = tuple(_int(n) for n in _list(data.get("shape")))
        dtype = self.dtype(data)
        weak = data.get("weak")
        if not isinstance(weak, bool):
            raise NotRebuildable("an array type without its weak-type flag")
        if "sharding" not in data and "mat" not in data and "memory_space" not in data:
            return core.ShapedArray(shape, dtype, weak)
        sharding = self.value(data["sharding"], 0) if "sharding" in data else core._empty_sharding(len(shape))
        mat = core.empty_mat
        if "mat" in data:
            m = data["mat"] if isinstance(data["mat"], dict) else {}
            mat = core.ManualAxisType(**{k: frozenset(str(a) for a in _list(m.get(k))) for k in ("varying", "unreduced", "reduced")})
        space = core.MemorySpace.Device
        if "memory_space" in data:
            space = self._member(core.MemorySpace, data["memory_space"])
        return core.ShapedArray._create(shape, dtype, weak, sharding, mat, space)

    def param(self, primitive: str, name: str, data: Any, depth: int) -> Any:
        if name == "policy":
            if data is None:
                return None
            policy = data.get("policy") if isinstance(data, dict) else None
            if policy == "custom":
                return _never
            if policy not in self.tables["policies"]:
                raise NotRebuildable("a checkpoint policy of an unknown kind")
            return self.tables["policies"][policy]
        if primitive == "pallas_call" and name == "interpret":
            if self.interpret is True:
                return tpu_interpret()
            if self.interpret is not None:
                return self.interpret
            if not isinstance(data, bool):
                raise NotRebuildable("a pallas_call's interpret parameter of an unknown kind")
            return data
        if primitive == "pallas_call" and name in ("mesh", "metadata") and data is not None:
            raise NotRebuildable("a pallas_call with a `%s`, which the grader does not rebuild" % name)
        if isinstance(data, dict) and CALLABLE in data:
            if (primitive, name) == ("reduce", "computation"):
                return None  # made from the reducer's own ``jaxpr`` (``_reducer``), never the learner's function
            if (primitive, name) in STAND_INS:
                return _never if name == "out_trees" else _never_wrapped()
            raise NotRebuildable("the traced program's `%s` holds a Python function (`%s`), which the grader cannot "
                                 "run outside your code's process" % (primitive, name))
        return self.value(data, depth)

    def value(self, data: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise NotRebuildable("a parameter nested too deeply")
        if data is None or isinstance(data, (bool, str, int)):
            return data
        if isinstance(data, float):
            return data
        if isinstance(data, list) or not isinstance(data, dict) or len(data) == 0:
            raise NotRebuildable("a parameter of an unknown kind")
        tag = next(iter(data))
        body = data[tag]
        jax = self.jax
        if tag == "float":
            return _float(data)
        if tag == "sub":
            if not isinstance(body, int) or isinstance(body, bool) or not 0 <= body < len(self.subprograms):
                raise NotRebuildable("a parameter refers to a sub-program that is not defined before it")
            self.deepest = max(self.deepest, self.sub_depths[body])
            self._use(max(1, self.sub_uses[body]))
            return self.subprograms[body]
        if tag == "tuple":
            return tuple(self.value(x, depth + 1) for x in _list(body))
        if tag == "list":
            return [self.value(x, depth + 1) for x in _list(body)]
        if tag == "frozenset":
            return frozenset(self.value(x, depth + 1) for x in _list(body))
        if tag == "dtype":
            return self.dtype(data)
        if tag == "enum":
            cls = self.tables["enums"].get(body)
            if cls is None:
                raise NotRebuildable("a parameter of an unknown kind (`%s`)" % str(body)[:60])
            return self._member(cls, data.get("name"))
        if tag == "primitive":  # a comparison a windowed reduction selects with: from the allow-list
            return self.primitive(body)
        if tag == "prng_impl":
            return self.prng_impl(body)
        if tag == "struct":
            cls = self.tables["structs"].get(body)
            fields = data.get("fields")
            if cls is None or not isinstance(fields, dict) or set(fields) != set(cls._fields):
                raise NotRebuildable("a parameter of an unknown kind (`%s`)" % str(body)[:60])
            return cls(**{f: self.value(fields[f], depth + 1) for f in cls._fields})
        if tag == "pspec":
            entries = [self.value(x, depth + 1) for x in _list(body)]
            kwargs = {}
            for k in ("unreduced", "reduced"):
                if data.get(k):
                    kwargs[k] = frozenset(str(a) for a in _list(data[k]))
            return jax.sharding.PartitionSpec(*entries, **kwargs)
        if tag == "mesh":
            return self.mesh(body)
        if tag == "abstract_mesh":
            return self.abstract_mesh(body)
        if tag == "named_sharding":
            if not isinstance(body, dict):
                raise NotRebuildable("a sharding of an unknown kind")
            mesh = self.value(body.get("mesh"), depth + 1)
            spec = self.value(body.get("spec"), depth + 1)
            kind = body.get("memory_kind")
            return jax.sharding.NamedSharding(mesh, spec, memory_kind=kind if isinstance(kind, str) else None)
        if tag == "unspecified":
            from jax._src.sharding_impls import UNSPECIFIED
            return UNSPECIFIED
        if tag == "treedef":
            return self.jax.tree_util.tree_structure(_tree(body, 0))
        if tag == "aval":
            return self.aval(body)
        if tag == "dict":
            pairs = _list(body)
            if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
                raise NotRebuildable("a parameter of an unknown kind")
            return {k: self.value(v, depth + 1) for k, v in pairs}
        if tag == "dc":  # a Pallas dataclass from the allow-list (grid mapping, block mapping, ...)
            cls = self.tables["dataclasses"].get(body) if isinstance(body, str) else None
            fields = data.get("fields")
            import dataclasses
            names = {f.name for f in dataclasses.fields(cls) if f.init} if cls is not None else set()
            if cls is None or not isinstance(fields, dict) or set(fields) != names:
                raise NotRebuildable("a parameter of an unknown kind (`%s`)" % str(body)[:60])
            try:
                return cls(**{f: self.value(fields[f], depth + 1) for f in sorted(names)})
            except NotRebuildable:
                raise
            except Exception as exc:  # noqa: BLE001 - JAX's own constructor refuses the values
                raise NotRebuildable("a `%s` JAX does not accept (%s)" % (str(body)[:60], str(exc)[:120])) from None
        if tag == "pytree":
            return self.pytree(body, depth + 1)
        if tag == "unknown":
            raise NotRebuildable("the traced program holds a value the grader cannot rebuild (`%s`)" % str(body)[:80])
        raise NotRebuildable("a parameter of an unknown kind")

    def pytree(self, data: Any, depth: int) -> Any:
        """A tree structure with Pallas' indexers as nodes (``program.ProgramEncoder.pytree``), made from its
        nodes' data with JAX's registry: nothing is unflattened."""
        from jax import tree_util
        if depth > MAX_DEPTH:
            raise NotRebuildable("a tree structure nested too deeply")
        if data == "*":
            return tree_util.tree_structure(0)
        if not isinstance(data, dict) or set(data) != {"n", "aux", "kids"}:
            raise NotRebuildable("a tree structure of an unknown kind")
        kind = self.tables["nodes"].get(data["n"]) if isinstance(data["n"], str) else None
        if kind is None:
            raise NotRebuildable("a tree structure of an unknown kind")
        aux = self.value(data["aux"], depth + 1)
        if kind is dict:
            aux = list(aux) if isinstance(aux, list) else None
        kids = [self.pytree(k, depth + 1) for k in _list(data["kids"])]
        try:
            return tree_util.PyTreeDef.from_node_data_and_children(tree_util.default_registry, (kind, aux), kids)
        except Exception as exc:  # noqa: BLE001
            raise NotRebuildable("a tree structure JAX does not accept (%s)" % str(exc)[:120]) from None

    def _member(self, cls: Any, name: Any) -> Any:
        member = cls.__members__.get(name) if isinstance(name, str) else None
        if member is None:
            raise NotRebuildable("`%s` is not a %s" % (str(name)[:40], cls.__name__))
        return member

    def _axes(self, body: Any) -> tuple:
        if not isinstance(body, dict):
            raise NotRebuildable("a mesh of an unknown kind")
        from jax._src import mesh as mesh_lib
        sizes = tuple(_int(n) for n in _list(body.get("sizes")))
        names = tuple(str(n) for n in _list(body.get("names")))
        types = tuple(self._member(mesh_lib.AxisType, t) for t in _list(body.get("types")))
        if not (len(sizes) == len(names) == len(types)):
            raise NotRebuildable("a mesh whose axes do not match")
        return sizes, names, types

    def mesh(self, body: Any) -> Any:
        sizes, names, types = self._axes(body)
        if not sizes and body.get("devices") is None:
            from jax._src import mesh as mesh_lib
            return mesh_lib.empty_concrete_mesh
        ids = [_int(i) for i in _list(body.get("devices"))]
        if len(ids) != int(np.prod(sizes, dtype=np.int64)) or len(set(ids)) != len(ids) or not all(i in self.devices for i in ids):
            raise NotRebuildable("a mesh over devices the grader does not have")
        devices = np.array([self.devices[i] for i in ids], dtype=object).reshape(sizes)
        return self.jax.sharding.Mesh(devices, names, axis_types=types)

    def abstract_mesh(self, body: Any) -> Any:
        from jax._src import mesh as mesh_lib
        sizes, names, types = self._axes(body)
        device = body.get("device")
        abstract_device = None
        if isinstance(device, dict):
            cores = device.get("num_cores")
            abstract_device = mesh_lib.AbstractDevice(str(device.get("device_kind")),
                                                      cores if isinstance(cores, int) else None,
                                                      str(device.get("platform")))
        return mesh_lib.AbstractMesh(sizes, names, axis_types=types, abstract_device=abstract_device)


def _reducer(core: Any, jaxpr: Any) -> Any:
    """``lax.reduce``'s ``computation`` as the function its (rebuilt) ``jaxpr`` computes: the learner's Python
    function is never needed, since the jaxpr is what JAX traced from it."""
    fun = core.jaxpr_as_fun(jaxpr)

    def computation(*args: Any) -> Any:
        out = fun(*args)
        return tuple(out) if len(out) != 1 else out[0]
    return computation


def _tree(data: Any, depth: int) -> Any:
    """An example object with the structure ``data`` describes (leaves are ``0``)."""
    if depth > MAX_DEPTH:
        raise NotRebuildable("a tree structure nested too deeply")
    if data == "*":
        return 0
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "none":
            return None
        if tag == "list":
            return [_tree(x, depth + 1) for x in _list(body)]
        if tag == "tuple":
            return tuple(_tree(x, depth + 1) for x in _list(body))
        if tag == "dict":
            pairs = [p for p in _list(body) if isinstance(p, list) and len(p) == 2 and isinstance(p[0], (str, int))]
            if len(pairs) != len(body):
                raise NotRebuildable("a dictionary in a tree structure of an unknown kind")
            return {k: _tree(v, depth + 1) for k, v in pairs}
    raise NotRebuildable("a tree structure of an unknown kind")


def _list(x: Any) -> list:
    if x is None:
        return []
    if not isinstance(x, list):
        raise NotRebuildable("the traced program's data holds a value where a list belongs")
    return x


def _int(x: Any) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise NotRebuildable("the traced program's data holds a value where a whole number belongs")
    return x


def _float(x: Any) -> float:
    if isinstance(x, dict) and x.get("float") in ("nan", "inf", "-inf"):
        return float(x["float"])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise NotRebuildable("the traced program's data holds a value where a number belongs")


def rebuild(data: Any) -> Any:
    """The ``ClosedJaxpr`` the data describes (``NotRebuildable`` when it describes none the grader runs)."""
    return Rebuilder().program(data)


COMPILED_KEPT = 64
"""Compiled programs a verifier keeps (least recently used dropped first). A class's Runs are often the same
program: the same solution typed by several learners, or one learner's Run, then Submit, then Run again."""
_compiled: OrderedDict[tuple, Any] = OrderedDict()
_compiled_lock = threading.Lock()
_sources: dict[int, tuple[Any, str]] = {}
"""id(closed) -> (a weak reference to it, the digest of the data it was rebuilt from)."""


def _remember_source(closed: Any, data: dict) -> None:
    """Note which data ``closed`` was rebuilt from: the rebuild is a function of the data alone, so two
    programs rebuilt from equal data are the same program, and can share one compile."""
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    key = id(closed)
    _sources[key] = (weakref.ref(closed, lambda _ref: _sources.pop(key, None)), digest)


def program_digest(closed: Any) -> str | None:
    """The digest of the data ``closed`` was rebuilt from (equal for two programs rebuilt from equal data: the
    same program), or None for a program this process did not rebuild."""
    entry = _sources.get(id(closed))
    return entry[1] if entry is not None and entry[0]() is closed else None


def _compile_key(closed: Any, flat_inputs: list) -> tuple | None:
    digest = program_digest(closed)
    if digest is None:
        return None
    types = tuple((tuple(np.shape(a)), str(getattr(a, "dtype", type(a).__name__)), bool(getattr(a, "weak_type", False)))
                  for a in flat_inputs)
    return digest, types


class KernelRefused(Exception):
    """A kernel that cannot run as a TPU runs it (TPU interpret mode refuses it as Mosaic would): the
    learner's fault, with a sentence, never "not rebuildable"."""


def kernel_refusal(closed: Any) -> str | None:
    """Why a program's ``pallas_call`` cannot run as a TPU runs it, when the reason is in its parameters, or None."""
    from grader.boundary.program import all_eqns
    for e in all_eqns(closed):
        if e.primitive.name != "pallas_call":
            continue
        grid = tuple(getattr(e.params.get("grid_mapping"), "grid", ()) or ())
        sem = getattr(e.params.get("compiler_params"), "dimension_semantics", None)
        if sem is not None and len(tuple(sem)) != len(grid):
            return ("Your `pallas_call` gives %d dimension semantics for a grid of %d axes: give one per grid axis "
                    "(`dimension_semantics=(\"parallel\", ..., \"arbitrary\")`). A TPU cannot lower the call as "
                    "written (interpret mode with `interpret=True` ignores them)." % (len(tuple(sem)), len(grid)))
    return None


def compile_program(closed: Any, flat_inputs: list) -> Any:
    """The rebuilt program lowered and compiled by XLA for the types of ``flat_inputs``: parameters that
    JAX's type rules accept but its lowering does not (data no trace of JAX's would hold) are
    ``NotRebuildable`` here, not an error of the learner's code later. A program rebuilt from the same data
    as one compiled before, for the same input types, reuses that compile (``COMPILED_KEPT``)."""
    import jax
    from jax.extend import core as jcore
    key = _compile_key(closed, flat_inputs)
    if key is not None:
        with _compiled_lock:
            if key in _compiled:
                _compiled.move_to_end(key)
                return _compiled[key]
    try:
        compiled = jax.jit(jcore.jaxpr_as_fun(closed)).lower(*flat_inputs).compile()
    except Exception as exc:  # noqa: BLE001 - the data's parameters do not lower
        refused = kernel_refusal(closed)
        if refused:
            raise KernelRefused(refused) from None
        raise NotRebuildable("the traced program could not be compiled (%s: %s)"
                             % (type(exc).__name__, str(exc).split("\n")[0][:200])) from None
    if key is not None:
        with _compiled_lock:
            _compiled[key] = compiled
            while len(_compiled) > COMPILED_KEPT:
                _compiled.popitem(last=False)
    return compiled


def run_program(closed: Any, flat_inputs: list, compiled: Any = None) -> list[np.ndarray]:
    """The rebuilt program's outputs on ``flat_inputs``, as NumPy arrays (``compiled``: from
    ``compile_program``, reused across cases of one shape)."""
    compiled = compiled if compiled is not None else compile_program(closed, flat_inputs)
    before_kernels()
    return [np.asarray(o) for o in compiled(*flat_inputs)]

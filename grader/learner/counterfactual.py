"""Counterfactual probes, run in the child: does a piece of the traced program carry the answer?

A requirement such as "accumulate the gradients with one ``lax.scan``" is only met when the scan computes
what the function returns. Presence is not proof: a scan whose result is discarded, multiplied by zero,
hidden behind ``jnp.where(False, ...)`` or added and subtracted again is present and decorative. So the
child re-evaluates the traced program with the outputs of one equation (or of a group of equations)
replaced by other values, and reports for every output of the function how far it moved. If nothing moves
under any of the perturbations tried (``VARIANTS``: one move can be absorbed by a comparison, a count or a
clip in a right structure), the structure's results do not reach the output on these inputs, whatever the
program looks like; ``grader/toolkit/carries.py`` then asks the data flow whether it is decorative.

How: ``Interpreter`` walks the ``ClosedJaxpr`` the checks read, binding each equation's primitive again, and
after any equation that is a probe target it may replace the outputs by perturbed ones. It descends into
the sub-programs of ``jit``, ``closed_call``, ``checkpoint``/``remat``, ``custom_jvp_call``,
``custom_vjp_call`` (their forward computation), ``scan``, ``cond`` and ``shard_map`` (rebuilt with
``lax.scan``, ``lax.switch`` and ``jax.shard_map`` around interpreted bodies), so targets inside a scan body
are perturbed at every step, and those inside a ``shard_map`` on every device. Other
higher-order primitives are bound as they are (opaque, but they can be targets themselves). The probe
index is a traced argument, so one compiled program serves the baseline and every probe: one compile per
traced shape, then a few microseconds per probe.

Each target's result also says ``own_scale`` (NumPy evaluation only): the largest magnitude among the
target's own results in the unperturbed run. A structure of a backward pass whose incoming cotangent is
zero (its forward value multiplied by zero, selected away, or cancelled) still moves the outputs when its
results are replaced, since they are added into the gradients; its own results being all zero shows that it
contributed nothing.

Targets: every higher-order equation the interpreter reaches, every equation whose primitive the problem
asks for (``probe_primitives``), and for every sub-program the group of equations that autodiff made with
the same transformation chain (``transpose>jvp`` is a backward pass, ``jvp`` a forward-mode pass,
``jvp>transpose>jvp`` forward-over-reverse). A group is perturbed all at once.

Paths name equations as ``grader/toolkit/jaxpr_tools.py`` does: ``"3"``, ``"3/jaxpr/5"``, ``"2/branches[1]/0"``.
Standard library, NumPy and JAX only (the child loads this file by path).
"""
import re
import time

MAX_PROBES = 48
"""Probe targets per traced program; past this the rest are reported as not probed."""

VARIANTS = 3
"""Perturbations tried per target. The first moves every result up by about half its size; when it leaves some
output where it was, the others are tried before that output is reported still: a downward move, and a mirror
(each value negated and moved by alternating signs) for floats; for booleans, only the even-numbered elements
flipped, then only the first; for integers, minus one, then plus one on the first element only. One move can
be invisible in a right structure: a count of flipped booleans can come out the same (half of them were true),
a raise above a ``jnp.minimum(1, .)`` or a comparison already true is absorbed, a shift of values near -1e9 that
``top_k`` never picks changes nothing the output shows. A decorative structure stays invisible under all three.
A value that a later variant turns NaN or infinite is not counted as a move (a result multiplied by zero is
still decorative when ``0 * nan`` appears): those variants count finite changes only."""

MOVED_ATOL, MOVED_RTOL = 1e-6, 1e-5
"""An output moved when its largest change exceeds ``MOVED_ATOL + MOVED_RTOL * its largest magnitude`` (the same
rule as ``grader/toolkit/carries.py``): decides whether the other variants are tried."""

NUMPY_BUDGET_S = 3.0
"""Seconds the NumPy evaluation of one traced program's probes may take before they are compiled instead."""

# Sub-programs the interpreter evaluates itself, by primitive name *and* identity (see ``own_primitives``).
INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
          "remat2": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr"}

_CHAIN = re.compile(r"(?<![A-Za-z0-9_])(jvp|transpose)\(")


def own_primitives(sys_modules, primitive_type):
    """``{id: primitive}`` of every primitive object defined by JAX's own modules, taken before learner
    code runs. A primitive a submission registers itself (``Primitive("scan")``) is not among them, however
    it is named."""
    found = {}
    for name, module in list(sys_modules.items()):
        if module is None or not name.startswith(("jax", "jaxlib")):
            continue
        try:
            items = list(vars(module).values())
        except TypeError:
            continue
        for value in items:
            if isinstance(value, primitive_type):
                found[id(value)] = value
    return found


def chain_of(name_stack):
    """The autodiff transformations of a printed name stack, outermost first: ``transpose>jvp``."""
    return ">".join(_CHAIN.findall(name_stack or ""))


class Target:
    """One probe: an equation, or a group of equations perturbed together."""

    def __init__(self, key, kind, paths, label):
        self.key, self.kind, self.paths, self.label = key, kind, paths, label


STRUCTURAL = {"scan", "while", "cond", "remat2", "checkpoint", "custom_vjp_call", "custom_jvp_call",
              "custom_vjp_call_jaxpr", "shard_map", "xla_pmap"}
"""Higher-order primitives probed one by one (``jit`` wrappers, which ``jnp`` adds everywhere, are only
walked through)."""


def select_targets(closed, is_own, name_stack_text, probe_primitives=()):
    """The probe targets of a traced program, in a stable order: groups, then structural equations
    (shallowest first), then equations of the requested primitives; at most ``MAX_PROBES``.

    A group's paths are its frontier: the equations of the group whose results are used outside it (or
    returned by its sub-program). Perturbing those replaces what the group hands to the rest of the program."""
    groups, higher, wanted = {}, [], []

    def walk(jaxpr, prefix, depth):
        chains = {}
        for i, eqn in enumerate(jaxpr.eqns):
            path = "%s%d" % (prefix, i)
            name = eqn.primitive.name
            own = is_own(eqn.primitive)
            chain = chain_of(name_stack_text(eqn))
            if chain:
                chains[i] = chain
            if _sub_programs(eqn) and (name in STRUCTURAL or not own):
                higher.append((depth, path, name))
            if own and name in probe_primitives:
                wanted.append((depth, path, name))
            if own:
                for param, sub in _descend(eqn):
                    walk(sub.jaxpr if hasattr(sub, "jaxpr") else sub, "%s/%s/" % (path, param), depth + 1)
        for chain in sorted(set(chains.values())):
            members = {i for i, c in chains.items() if c == chain}
            frontier = _frontier(jaxpr, members)
            if frontier:
                groups[(prefix, chain)] = ["%s%d" % (prefix, i) for i in frontier]

    walk(closed.jaxpr, "", 0)
    targets = [Target("group:%s#%s" % (prefix, chain), "group", paths, "%s at %s" % (chain, prefix or "top"))
               for (prefix, chain), paths in groups.items()]
    targets += [Target("eqn:" + path, "eqn", [path], name) for _, path, name in sorted(higher)]
    targets += [Target("eqn:" + path, "eqn", [path], name) for _, path, name in sorted(wanted)
                if "eqn:" + path not in {t.key for t in targets}]
    return targets[:MAX_PROBES], targets[MAX_PROBES:]


def _frontier(jaxpr, members):
    """Indices of the equations in ``members`` whose results are read by an equation outside ``members``
    or returned by ``jaxpr``."""
    made = {}
    for i in members:
        for v in jaxpr.eqns[i].outvars:
            made[id(v)] = i
    used = set()
    for j, eqn in enumerate(jaxpr.eqns):
        if j in members:
            continue
        for v in eqn.invars:
            if id(v) in made:
                used.add(made[id(v)])
    for v in jaxpr.outvars:
        if id(v) in made:
            used.add(made[id(v)])
    return sorted(used)


def _sub_programs(eqn):
    out = []
    for k, v in eqn.params.items():
        if hasattr(v, "eqns") or hasattr(v, "jaxpr"):
            out.append(k)
        elif isinstance(v, (tuple, list)) and v and all(hasattr(x, "eqns") or hasattr(x, "jaxpr") for x in v):
            out.append(k)
    return out


def _descend(eqn):
    """``(param name as the serialiser prints it, sub-program)`` the interpreter evaluates itself."""
    name = eqn.primitive.name
    if name in INLINE and INLINE[name] in eqn.params:
        return [(INLINE[name], eqn.params[INLINE[name]])]
    if name == "scan":
        return [("jaxpr", eqn.params["jaxpr"])]
    if name == "cond":
        return [("branches[%d]" % i, b) for i, b in enumerate(eqn.params["branches"])]
    if name == "shard_map":
        return [("jaxpr", eqn.params["jaxpr"])]
    return []  # while loops stay opaque: a perturbed loop condition could loop for ever


class Interpreter:
    """Evaluates a ``ClosedJaxpr`` with JAX, perturbing the outputs of the equations at ``paths`` when
    the traced ``which`` equals their probe index."""

    def __init__(self, t, is_own, targets, record=()):
        self.t, self.is_own = t, is_own
        self.by_path, self.count = {}, max(len(targets), 1)
        for k, target in enumerate(targets):
            for path in target.paths:
                self.by_path.setdefault(path, []).append(k)
        self.record, self.carries = set(record), {}
        """Scans (by path) whose carry before every step is kept in ``carries`` (see ``StepInfluence``)."""

    def run(self, closed, which, args):
        return self.eval(closed.jaxpr, closed.consts, args, "", which)

    def eval(self, jaxpr, consts, args, prefix, which):
        env = {}
        literal = self.t["Literal"]

        def read(v):
            return v.val if isinstance(v, literal) else env[v]

        for var, val in zip(jaxpr.constvars, consts):
            env[var] = val
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        for i, eqn in enumerate(jaxpr.eqns):
            path = "%s%d" % (prefix, i)
            outs = self.apply(eqn, [read(v) for v in eqn.invars], path, which)
            for k in self.by_path.get(path, ()):
                outs = [self.perturb(o, self.picks(which, k), k, self.variant(which)) for o in outs]
            for var, val in zip(eqn.outvars, outs):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]

    def apply(self, eqn, invals, path, which):
        prim, params, name = eqn.primitive, eqn.params, eqn.primitive.name
        if self.is_own(prim):
            if name in INLINE and INLINE[name] in params:
                sub = params[INLINE[name]]
                inner = sub.jaxpr if hasattr(sub, "jaxpr") else sub
                if len(inner.invars) == len(invals):
                    consts = sub.consts if hasattr(sub, "consts") else ()
                    return self.eval(inner, consts, invals, "%s/%s/" % (path, INLINE[name]), which)
            elif name == "scan":
                return self.scan(params, invals, path, which)
            elif name == "cond":
                return self.cond(params, invals, path, which)
            elif name == "shard_map":
                return self.shard_map(params, invals, path, which)
        bind_params, subfuns = prim.get_bind_params(params), ()
        if isinstance(bind_params, tuple):  # older JAX: (sub-functions, params)
            subfuns, bind_params = bind_params
        ctx = getattr(eqn, "ctx", None)
        manager = getattr(ctx, "manager", None)
        if manager is not None:
            with manager:
                out = prim.bind(*subfuns, *invals, **bind_params)
        else:
            out = prim.bind(*subfuns, *invals, **bind_params)
        return list(out) if prim.multiple_results else [out]

    def scan(self, params, invals, path, which):
        body = params["jaxpr"]
        nc, ncarry = params["num_consts"], params["num_carry"]
        consts, init, xs = invals[:nc], invals[nc:nc + ncarry], invals[nc + ncarry:]
        prefix = path + "/jaxpr/"

        keep = path in self.record

        def step(carry, x):
            outs = self.eval(body.jaxpr, body.consts, list(consts) + list(carry) + list(x), prefix, which)
            return outs[:ncarry], ((outs[ncarry:], list(carry)) if keep else outs[ncarry:])

        carry, ys = self.t["lax"].scan(step, list(init), list(xs), length=params["length"],
                                       reverse=params["reverse"], unroll=params.get("unroll", 1))
        if keep:
            ys, self.carries[path] = ys
        return list(carry) + list(ys)

    def cond(self, params, invals, path, which):
        index, ops = invals[0], invals[1:]

        def branch(i, b):
            return lambda *o: self.eval(b.jaxpr, b.consts, list(o), "%s/branches[%d]/" % (path, i), which)

        return list(self.t["lax"].switch(index, [branch(i, b) for i, b in enumerate(params["branches"])], *ops))

    def shard_map(self, params, invals, path, which):
        """The ``shard_map`` rebuilt around an interpreted body (with the traced program's ``check_vma``, which
        its collectives were bound under), so targets inside it are perturbed on every device."""
        body = params["jaxpr"]
        inner = body.jaxpr if hasattr(body, "jaxpr") else body
        consts = body.consts if hasattr(body, "consts") else ()

        def per_device(*args):
            return tuple(self.eval(inner, consts, list(args), path + "/jaxpr/", which))

        mapped = self.t["jax"].shard_map(per_device, mesh=params["mesh"], in_specs=tuple(params["in_specs"]),
                                         out_specs=tuple(params["out_specs"]),
                                         check_vma=bool(params.get("check_vma", False)))
        return list(mapped(*invals))

    def picks(self, which, k):
        """Whether the traced probe index ``which`` (``k + count * variant``, -1 for none) perturbs target ``k``."""
        lax, np = self.t["lax"], self.t["np"]
        which = lax.convert_element_type(which, np.int32)
        return lax.bitwise_and(lax.ge(which, np.int32(0)), lax.eq(lax.rem(which, np.int32(self.count)), np.int32(k)))

    def variant(self, which):
        lax, np = self.t["lax"], self.t["np"]
        which = lax.max(lax.convert_element_type(which, np.int32), np.int32(0))
        return lax.div(which, np.int32(self.count))

    def perturb(self, value, on, k, variant=0):
        """``value`` moved to other values of the same shape and dtype when ``on``, by probe variant ``variant``
        (a traced int, see ``VARIANTS`` and ``perturb_numpy``, which computes the same values): variant 0 by a
        positive amount that varies from element to element and grows with the value's size, so neither a shift,
        a scale, a sum nor a maximum of it stays the same. Integers move by one, booleans flip; others stay. Plain
        ``lax`` operations and NumPy constants keep the compiled program small."""
        np, lax = self.t["np"], self.t["lax"]
        dtype = getattr(value, "dtype", None)
        shape = getattr(value, "shape", None)
        if dtype is None or shape is None:
            return value
        jnp = self.t["jnp"]
        kind = ("f" if jnp.issubdtype(dtype, jnp.floating) else "b" if jnp.issubdtype(dtype, jnp.bool_) else
                "i" if jnp.issubdtype(dtype, jnp.integer) else "")
        shape = tuple(shape)
        flag = lax.broadcast(on, shape) if shape else on

        def pick(options):  # the variant's option, chosen in the program (options: one array per variant)
            out = options[-1]
            for v in range(len(options) - 2, -1, -1):
                cond = lax.eq(variant, np.int32(v))
                out = lax.select(lax.broadcast(cond, shape) if shape else cond, options[v], out)
            return out

        if kind == "f":
            signs = [np.asarray(a, dtype) for a in _signs(np, shape, k)]
            amount = lax.mul(lax.add(lax.mul(lax.abs(value), np.asarray(0.25, dtype)), np.asarray(0.5, dtype)),
                             wiggle(np, shape, dtype, k))
            mirrored = lax.neg(value)
            base = pick([value, value, mirrored])
            return lax.select(flag, lax.add(base, lax.mul(amount, pick(signs))), value)
        if kind == "b":
            return lax.select(lax.bitwise_and(flag, pick([np.asarray(m) for m in _flips(np, shape)])),
                              lax.bitwise_not(value), value)
        if kind in "iu":
            return lax.select(flag, lax.add(value, pick([np.asarray(d, dtype) for d in _steps(np, shape, dtype)])),
                              value)
        return value


def _signs(np, shape, k):
    """The direction of each element's move, per float variant: up, down, alternating (after the mirror)."""
    def make():
        size = int(np.prod(shape)) if shape else 1
        alternating = np.where(np.arange(size) % 2 == 0, 1.0, -1.0).reshape(shape)
        return [np.ones(shape), -np.ones(shape), alternating]
    return _made("signs", np, shape, "float64", 0, make)


def _flips(np, shape):
    """Which booleans flip, per variant: all, the even-numbered ones, the first."""
    def make():
        size = int(np.prod(shape)) if shape else 1
        index = np.arange(size).reshape(shape)
        return [np.ones(shape, bool), index % 2 == 0, index == 0]
    return _made("flips", np, shape, "bool", 0, make)


def _steps(np, shape, dtype):
    """How integers move, per variant: all up one, all down one, the first up one."""
    def make():
        size = int(np.prod(shape)) if shape else 1
        first = (np.arange(size) == 0).reshape(shape)
        return [np.ones(shape, dtype), (-np.ones(shape, np.int64)).astype(dtype), first.astype(dtype)]
    return _made("steps", np, shape, dtype, 0, make)


class Probes:
    """One traced program compiled once with its probe targets: ``outputs`` evaluates it as traced,
    ``measure`` evaluates it once per target with that target's results replaced."""

    def __init__(self, t, closed, is_own, name_stack_text, probe_primitives=(), record=()):
        self.t = t
        self.targets, self.skipped = select_targets(closed, is_own, name_stack_text, probe_primitives)
        interp = Interpreter(t, is_own, self.targets, record)

        def program(which, *args):
            outs = interp.run(closed, which, args)
            return outs, dict(interp.carries)

        self.fn = t["jit"](program)
        self.carries = {}
        """The recorded scans' carries before every step, from the last ``outputs`` call."""

    def outputs(self, args):
        """The program's outputs (no target perturbed)."""
        outs, self.carries = self.fn(self.t["np"].int32(-1), *args)
        return outs

    def measure(self, args, baseline):
        """``{"targets": [...], "skipped": n}``: for each target, how far each output moved (``change``,
        the largest absolute difference over the ``variants`` perturbations tried, see ``VARIANTS``) and how large
        it was (``scale``)."""
        np = self.t["np"]
        baseline = [np.asarray(b) for b in baseline]
        results = []
        for k, target in enumerate(self.targets):
            entry = {"key": target.key, "kind": target.kind, "paths": target.paths, "label": target.label}
            scale, change, tried = [_scale(np, b) for b in baseline], None, 0
            try:
                for variant in range(VARIANTS):
                    outs = [np.asarray(o) for o in self.fn(np.int32(k + len(self.targets) * variant), *args)[0]]
                    change = _merge(change, [_change(np, o, b, finite_only=variant > 0) for o, b in zip(outs, baseline)])
                    tried += 1
                    if all(_moved(np, c, sc) for c, sc in zip(change, scale)):
                        break
            except Exception as exc:  # noqa: BLE001 - reported per target; the checks treat it as unknown
                if change is None:
                    entry["error"] = "%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:120])
            if change is not None:
                entry["change"], entry["scale"], entry["variants"] = change, scale, tried
            results.append(entry)
        return {"targets": results, "skipped": len(self.skipped)}


def _change(np, a, b, finite_only=False):
    """The largest absolute difference between two outputs; a value that became or stopped being NaN or
    infinite counts as an infinite change, unless ``finite_only`` (then only elements finite in both count)."""
    if a.shape != b.shape or a.dtype.kind not in "fciub":
        return 0.0
    a, b = a.astype(np.float64), b.astype(np.float64)
    if a.size == 0:
        return 0.0
    finite = np.isfinite(a) & np.isfinite(b)
    if not finite_only and np.any(~finite & ~((np.isnan(a) & np.isnan(b)) | (a == b))):
        return float("inf")
    return float(np.max(np.abs(a[finite] - b[finite]))) if finite.any() else 0.0


def _merge(change, more):
    """Per output, the larger change of two variants."""
    return list(more) if change is None else [max(a, b) for a, b in zip(change, more)]


def _scale(np, b):
    if b.dtype.kind not in "fciub" or b.size == 0:
        return 0.0
    b = b.astype(np.float64)
    finite = b[np.isfinite(b)]
    return float(np.max(np.abs(finite))) if finite.size else 0.0


class _FixedCarry(Interpreter):
    """Evaluates each target scan's steps from recorded carries, so that a step's results depend only on
    what that step reads, and keeps every step's results."""

    def __init__(self, t, is_own, carries):
        super().__init__(t, is_own, [])
        self.recorded, self.steps = carries, {}

    def scan(self, params, invals, path, which):
        if path not in self.recorded:
            return super().scan(params, invals, path, which)
        body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
        consts, xs = invals[:nc], invals[nc + ncarry:]

        def step(_, inputs):
            x, carry = inputs
            return 0, self.eval(body.jaxpr, body.consts, list(consts) + list(carry) + list(x), path + "/jaxpr/", which)

        _, outs = self.t["lax"].scan(step, 0, (list(xs), list(self.recorded[path])), length=params["length"],
                                     reverse=params["reverse"])
        self.steps[path] = outs
        last = 0 if params["reverse"] else -1
        return [o[last] for o in outs[:ncarry]] + list(outs[ncarry:])


def top_scans(closed, is_own, length):
    """Paths of JAX's own scans of ``length`` steps that the interpreter reaches without entering another
    loop or branch (through ``jit``, checkpoints and custom-derivative calls)."""
    found = []

    def walk(jaxpr, prefix):
        for i, eqn in enumerate(jaxpr.eqns):
            path, name = "%s%d" % (prefix, i), eqn.primitive.name
            if not is_own(eqn.primitive):
                continue
            if name == "scan" and eqn.params.get("length") == length:
                found.append(path)
            elif name in INLINE and INLINE[name] in eqn.params:
                sub = eqn.params[INLINE[name]]
                walk(sub.jaxpr if hasattr(sub, "jaxpr") else sub, "%s/%s/" % (path, INLINE[name]))

    walk(closed.jaxpr, "")
    return found


class StepInfluence:
    """Which blocks of rows of the inputs each step of a scan reads.

    The leading axis of each chosen input (length B) is cut into ``blocks`` equal blocks of consecutive rows.
    For every block, the rows of that block alone are moved, and every step of the scan is re-run from the
    carry it had in the unperturbed run (recorded by ``Probes`` with ``record``): the steps whose results
    change are the steps that read that block. A scan over microbatches j = 0..n-1 made of rows jS..(j+1)S-1
    reads exactly one block per step; a strided split (rows j, j+n, ...) or a step that reads the whole batch
    reads every block in every step."""

    def __init__(self, t, closed, is_own, leaf_index, blocks, paths):
        self.t, self.blocks, self.paths = t, blocks, list(paths)
        lax, np = t["lax"], t["np"]
        leaf_index = list(leaf_index)

        def program(block, carries, *args):
            moved = list(args)
            for i in leaf_index:
                a = args[i]
                ids = lax.broadcasted_iota(np.int32, a.shape, 0) // (a.shape[0] // blocks)
                amount = lax.add(lax.mul(lax.abs(a), np.asarray(0.25, a.dtype)), np.asarray(0.5, a.dtype))
                moved[i] = lax.select(ids == block, lax.add(a, amount), a)
            fixed = _FixedCarry(t, is_own, carries)
            fixed.run(closed, -1, moved)
            return {p: fixed.steps[p] for p in carries if p in fixed.steps}

        self.fn = t["jit"](program)

    def measure(self, args, carries):
        """``{scan path: [[does step j read block b] for each step j] for each block b]}``."""
        np = self.t["np"]
        carries = {p: c for p, c in carries.items() if p in self.paths}
        if not carries:
            return {}
        base = {p: [np.asarray(o) for o in outs] for p, outs in self.fn(np.int32(-1), carries, *args).items()}
        reads = {p: [] for p in base}
        for b in range(self.blocks):
            got = self.fn(np.int32(b), carries, *args)
            for p, outs in base.items():
                reads[p].append([any(_change(np, np.asarray(g)[j], o[j]) > 1e-6 + 1e-5 * _scale(np, o[j])
                                     for g, o in zip(got[p], outs)) for j in range(self.blocks)])
        return reads


_MADE = {}
"""Perturbation factors already made, by what decides them (``_made``): a program's probes ask for the same
few shapes again and again. Read-only once made (every caller computes a new array from them)."""


def _made(kind, np, shape, dtype, k, make):
    key = (kind, id(np), tuple(shape), str(dtype), k)
    out = _MADE.get(key)
    if out is None:
        if len(_MADE) > 4096:
            _MADE.clear()
        out = _MADE[key] = make()
        for a in out if isinstance(out, list) else [out]:
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
    return out


def wiggle(np, shape, dtype, k):
    """The element-by-element factor of probe ``k``'s perturbation (see ``Interpreter.perturb``)."""
    size = int(np.prod(shape)) if shape else 1
    return _made("wiggle", np, shape, dtype, k, lambda: np.asarray(
        (1.0 + 0.5 * np.cos(np.arange(size, dtype=np.float64) * 1.7 + 0.3 + k)).reshape(shape), dtype=dtype))


def perturb_numpy(np, value, k, variant=0):
    """Probe ``k``'s replacement for ``value`` in variant ``variant`` (see ``VARIANTS``), as
    ``Interpreter.perturb`` computes it under ``jit``."""
    kind = value.dtype.kind if isinstance(value, np.ndarray) else ""
    if kind in "fV":
        try:
            amount = (np.abs(value) * np.asarray(0.25, value.dtype) + np.asarray(0.5, value.dtype))
            amount = amount * wiggle(np, value.shape, value.dtype, k)
            base = -value if variant == 2 else value
            return base + amount * np.asarray(_signs(np, value.shape, k)[variant], value.dtype)
        except TypeError:
            return value
    if kind == "b":
        return np.where(_flips(np, value.shape)[variant], np.logical_not(value), value)
    if kind in "iu":
        return value + _steps(np, value.shape, value.dtype)[variant]
    return value


def _moved(np, change, scale):
    return change > MOVED_ATOL + MOVED_RTOL * scale


class NumpyProbes:
    """The probes of ``Probes`` and ``StepInfluence``, evaluated with NumPy (``jaxpr_numpy.py``): no compile,
    about a millisecond per probe on this playground's programs. Raises when it cannot reproduce the compiled
    program's outputs, and the caller then compiles the probes instead."""

    def __init__(self, t, closed, is_own, name_stack_text, probe_primitives=()):
        self.t, self.closed, self.is_own = t, closed, is_own
        self.targets, self.skipped = select_targets(closed, is_own, name_stack_text, probe_primitives)
        self.evaluator_module = t["jaxpr_numpy"]
        self.memo = self.evaluator_module.Memo()
        """The unperturbed evaluation, recorded by the first ``_run``: each probe computes again only what its
        perturbation reaches (``jaxpr_numpy.Memo``)."""

    def _run(self, args, which=-1, scan_hook=None, sizes=None, variant=0, memo=True):
        """The program's outputs with target ``which`` perturbed (none when -1). ``sizes``, when given, gets
        for every target path the largest magnitude among its results, over every evaluation (every scan
        step). The first run with ``memo`` records every result; later ones replay what their perturbation
        does not reach."""
        np = self.t["np"]
        by_path = {}
        for k, target in enumerate(self.targets):
            for path in target.paths:
                by_path.setdefault(path, []).append(k)

        def after(path, outs):
            if which >= 0 and which in by_path.get(path, ()):
                return [perturb_numpy(np, o, which, variant) for o in outs]
            if sizes is not None and path in by_path:
                for o in outs:
                    o = np.asarray(o)
                    if o.dtype.kind == "f" and o.size:
                        sizes[path] = max(sizes.get(path, 0.0), float(np.max(np.abs(o))))
            return outs

        shared = self.memo if memo else None
        perturbed = self.targets[which].paths if which >= 0 else ()
        evaluator = self.evaluator_module.NumpyEvaluator(self.t, self.is_own, after, scan_hook, shared, perturbed)
        try:
            return evaluator.run(self.closed, args)
        finally:
            if shared is not None:
                shared.recording = False

    def measure(self, args, expected, blocks=0, leaf_index=()):
        """``(probes, step_reads)`` as ``Probes.measure`` and ``StepInfluence.measure`` give them."""
        np = self.t["np"]
        carries, scans = {}, set(top_scans(self.closed, self.is_own, blocks)) if blocks else set()

        def record(path, evaluator, params, invals):
            if path not in scans:
                return None
            body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
            consts, carry, xs = invals[:nc], list(invals[nc:nc + ncarry]), invals[nc + ncarry:]
            length = params["length"]
            order = range(length - 1, -1, -1) if params["reverse"] else range(length)
            ys = [None] * length
            befores = [None] * length
            slices = evaluator.step_slices(path, xs, length)
            for j in order:
                befores[j] = carry
                outs = evaluator.eval(body.jaxpr, body.consts, list(consts) + carry + slices[j], path + "/jaxpr/")
                carry, ys[j] = outs[:ncarry], outs[ncarry:]
            carries[path] = befores
            return carry + [np.stack([y[k] for y in ys]) for k in range(len(body.jaxpr.outvars) - ncarry)]

        sizes = {}
        baseline = self._run(list(args), scan_hook=record if scans else None, sizes=sizes)
        for got, want in zip(baseline, expected):
            if not _close(np, np.asarray(got), np.asarray(want)):
                raise ValueError("NumPy evaluation differs from the compiled program")
        results = []
        started = time.monotonic()
        for k, target in enumerate(self.targets):
            if time.monotonic() - started > NUMPY_BUDGET_S:
                raise TimeoutError("NumPy probes over budget")  # the caller compiles them instead
            entry = {"key": target.key, "kind": target.kind, "paths": target.paths, "label": target.label}
            entry["own_scale"] = max((sizes.get(p, 0.0) for p in target.paths), default=0.0)
            entry["scale"] = scale = [_scale(np, np.asarray(b)) for b in baseline]
            change, tried = None, 0
            for variant in range(VARIANTS):
                outs = self._run(list(args), which=k, variant=variant)
                change = _merge(change, [_change(np, np.asarray(o), np.asarray(b), finite_only=variant > 0)
                                         for o, b in zip(outs, baseline)])
                tried += 1
                if all(_moved(np, c, sc) for c, sc in zip(change, scale)):
                    break
            entry["change"], entry["variants"] = change, tried
            results.append(entry)
        probes = {"targets": results, "skipped": len(self.skipped)}
        if not carries:
            return probes, {}
        return probes, {"reads": self._reads(args, carries, blocks, leaf_index), "blocks": blocks}

    def _reads(self, args, carries, blocks, leaf_index):
        np = self.t["np"]

        def fixed(steps):
            def hook(path, evaluator, params, invals):
                if path not in carries:
                    return None
                body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
                consts, xs = invals[:nc], invals[nc + ncarry:]
                outs = [evaluator.eval(body.jaxpr, body.consts, list(consts) + carries[path][j] + [x[j] for x in xs],
                                       path + "/jaxpr/") for j in range(params["length"])]
                steps[path] = outs
                last = outs[0 if params["reverse"] else -1]
                return last[:ncarry] + [np.stack([o[k] for o in outs]) for k in range(ncarry, len(last))]
            return hook

        base = {}
        self._run(list(args), scan_hook=fixed(base), memo=False)
        reads = {p: [] for p in base}
        for b in range(blocks):
            moved = list(args)
            for i in leaf_index:
                a = np.asarray(args[i])
                rows = a.shape[0] // blocks
                shifted = np.array(a, copy=True)
                part = shifted[b * rows:(b + 1) * rows]
                shifted[b * rows:(b + 1) * rows] = part + (np.abs(part) * np.asarray(0.25, a.dtype)
                                                           + np.asarray(0.5, a.dtype))
                moved[i] = shifted
            got = {}
            self._run(moved, scan_hook=fixed(got), memo=False)
            for p, outs in base.items():
                reads[p].append([any(_change(np, np.asarray(g), np.asarray(o)) > 1e-6 + 1e-5 * _scale(np, np.asarray(o))
                                     for g, o in zip(got[p][j], outs[j])) for j in range(len(outs))])
        return reads


def _close(np, a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fciub" or b.dtype.kind not in "fciub":
        return True
    a, b = a.astype(np.float64), b.astype(np.float64)
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-5, equal_nan=True))

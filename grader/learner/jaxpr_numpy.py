"""Evaluate a traced program with NumPy, one equation at a time, without compiling anything (child side).

The counterfactual probes (``counterfactual.py``) re-run a traced program dozens of times with one piece
of it replaced. Compiling those variants with XLA costs about as much as the run itself; evaluating the
small programs of this playground with NumPy costs milliseconds. This evaluator knows the primitives such
programs use; a primitive it does not know is bound eagerly with JAX instead (exact, a few milliseconds
each), and ``scan``, ``while``, ``cond``, ``jit``, checkpoints and custom-derivative calls are walked
through. Every result is cast to the dtype and checked against the shape the traced program declares, so a
mistake here shows up as an error or a mismatch with the compiled program's outputs, which the caller
checks before trusting any probe. Standard library, NumPy and JAX only (the child loads this file by path).
"""
import math
import time

MAX_WHILE_STEPS = 20_000
"""A ``while`` loop that has not finished after this many steps stops the evaluation (it raises)."""

BUDGET_S = 2.0
"""Seconds one evaluation may take; past it the evaluation stops (it raises) and the caller compiles the
probes instead, which run a long loop far faster than this interpreter."""


class Unsupported(Exception):
    """The evaluator cannot run this program faithfully; the caller falls back to compiling it."""


_OPS = {}


def _np_ops(np):
    """``{primitive name: fn(params, *operands)}`` for the primitives evaluated with NumPy (made once)."""
    ops = _OPS.get(id(np))
    if ops is None or ops[0] is not np:
        ops = _OPS[id(np)] = (np, _make_np_ops(np))
    return ops[1]


def _make_np_ops(np):

    def reduce_precision(p, x):
        """Rounding to the operand's own precision (what ``jax.checkpoint``'s policies and mixed precision
        leave in a program) is the identity; any other rounding is left to JAX."""
        own = {"float32": (8, 23), "float64": (11, 52), "float16": (5, 10), "bfloat16": (8, 7)}
        if own.get(str(x.dtype)) != (int(p["exponent_bits"]), int(p["mantissa_bits"])):
            raise Unsupported("reduce_precision to another precision")
        return x

    def unary(f):
        return lambda p, x: f(x)

    def binary(f):
        return lambda p, x, y: f(x, y)

    def round_(p, x):
        if p.get("rounding_method") in (0, "0") or "AWAY" in str(p.get("rounding_method")):
            return np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))
        return np.round(x)

    def div(p, x, y):
        if np.issubdtype(x.dtype, np.integer):
            q = np.abs(x) // np.where(y == 0, 1, np.abs(y))
            return np.where(y == 0, 0, np.sign(x) * np.sign(y) * q)
        return x / y

    def integer_pow(p, x):
        y = p["y"]
        return np.power(x, y) if y >= 0 else np.asarray(1, x.dtype) / np.power(x, -y)

    def logistic(p, x):
        return np.asarray(1, x.dtype) / (np.asarray(1, x.dtype) + np.exp(-x))

    def convert(p, x):
        return x.astype(np.dtype(p["new_dtype"]))

    def broadcast_in_dim(p, x, *dyn):
        if dyn:
            raise Unsupported("dynamic shapes")
        shape, dims = tuple(p["shape"]), tuple(p["broadcast_dimensions"])
        expanded = [1] * len(shape)
        for src, dst in enumerate(dims):
            expanded[dst] = x.shape[src]
        return np.broadcast_to(x.reshape(expanded), shape)

    def reshape(p, x, *dyn):
        if dyn or p.get("dimensions"):
            raise Unsupported("reshape with dimensions")
        return x.reshape(tuple(p["new_sizes"]))

    def reduce(f):
        return lambda p, x: f(x, axis=tuple(p["axes"]))

    def argminmax(f):
        def run(p, x):
            axis = tuple(p["axes"])[0]
            return f(x, axis=axis).astype(np.dtype(p["index_dtype"]))
        return run

    def select_n(p, which, *cases):
        if which.dtype == np.bool_:
            return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
        return np.choose(which.astype(np.int64), np.broadcast_arrays(*cases))

    def clamp(p, lo, x, hi):
        return np.minimum(np.maximum(x, lo), hi)

    def iota(p):
        shape, dim = tuple(p["shape"]), p["dimension"]
        ramp = np.arange(shape[dim], dtype=np.dtype(p["dtype"]))
        view = [1] * len(shape)
        view[dim] = shape[dim]
        return np.broadcast_to(ramp.reshape(view), shape)

    def slice_(p, x):
        strides = p.get("strides") or (1,) * x.ndim
        return x[tuple(slice(a, b, s) for a, b, s in zip(p["start_indices"], p["limit_indices"], strides))]

    def starts(x, sizes, idx):
        return [min(max(int(i), 0), d - s) for i, d, s in zip(idx, x.shape, sizes)]

    def dynamic_slice(p, x, *idx):
        sizes = tuple(p["slice_sizes"])
        at = starts(x, sizes, idx)
        return x[tuple(slice(a, a + s) for a, s in zip(at, sizes))]

    def dynamic_update_slice(p, x, update, *idx):
        at = starts(x, update.shape, idx)
        out = np.array(x, copy=True)
        out[tuple(slice(a, a + s) for a, s in zip(at, update.shape))] = update
        return out

    def pad(p, x, value):
        """``lax.pad``: interior padding spreads the entries apart, then each end grows (``lo``, ``hi`` > 0) or
        is cut (< 0), as a transposed strided slice pads and cuts (scan bodies' gradients)."""
        out = np.asarray(x)
        for axis, (lo, hi, interior) in enumerate(p["padding_config"]):
            if interior:
                n = out.shape[axis]
                shape = list(out.shape)
                shape[axis] = n + max(n - 1, 0) * interior
                spread = np.full(shape, value, dtype=out.dtype)
                spread[(slice(None),) * axis + (slice(None, None, interior + 1),)] = out
                out = spread
            out = np.pad(out, [(0, 0)] * axis + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (out.ndim - axis - 1),
                         constant_values=value)
            stop = out.shape[axis] - max(-hi, 0)
            if stop < max(-lo, 0):
                raise Unsupported("padding that cuts more than the array holds")
            out = out[(slice(None),) * axis + (slice(max(-lo, 0), stop),)]
        return out

    def dot_general(p, x, y):
        (lc, rc), (lb, rb) = p["dimension_numbers"]
        preferred = p.get("preferred_element_type")
        out_dtype = np.dtype(preferred) if preferred is not None else np.result_type(x, y)
        if np.issubdtype(out_dtype, np.integer):
            x, y = x.astype(out_dtype), y.astype(out_dtype)
        elif x.dtype.kind == "V" or y.dtype.kind == "V" or out_dtype.kind == "V":
            x, y = x.astype(np.float32), y.astype(np.float32)  # bfloat16 and other ml_dtypes: NumPy's einsum refuses them
        letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        xs = [next(letters) for _ in range(x.ndim)]
        ys = [None] * y.ndim
        for a, b in zip(lc, rc):
            ys[b] = xs[a]
        for a, b in zip(lb, rb):
            ys[b] = xs[a]
        ys = [c if c is not None else next(letters) for c in ys]
        batch = [xs[a] for a in lb]
        free_x = [c for i, c in enumerate(xs) if i not in lc and i not in lb]
        free_y = [c for i, c in enumerate(ys) if i not in rc and i not in rb]
        spec = "%s,%s->%s" % ("".join(xs), "".join(ys), "".join(batch + free_x + free_y))
        return np.einsum(spec, x, y).astype(out_dtype)

    def cumulative(f):
        def run(p, x):
            axis = p["axis"]
            if p.get("reverse"):
                return np.flip(f(np.flip(x, axis), axis=axis), axis)
            return f(x, axis=axis)
        return run

    def split(p, x):
        cuts = list(np.cumsum(p["sizes"])[:-1])
        return np.split(x, cuts, axis=p["axis"])

    def top_k(p, x):
        """``lax.top_k``: the k largest along ``axis`` (the last by default), in XLA's total order (-NaN < -inf
        < ... < -0.0 < 0.0 < ... < inf < NaN), the smaller index first among equal values."""
        axis = p.get("axis")
        axis = x.ndim - 1 if axis is None else int(axis) % x.ndim
        if x.dtype == np.float32:
            bits = x.view(np.int32).astype(np.int64)
            key = np.where(bits < 0, ~(bits & 0x7FFFFFFF), bits)
        elif x.dtype.kind in "iub":
            key = x.astype(np.int64)
        else:
            raise Unsupported("top_k of %s" % x.dtype)
        order = np.argsort(-key, axis=axis, kind="stable")
        order = np.take(order, np.arange(int(p["k"])), axis=axis)
        return [np.take_along_axis(x, order, axis=axis), order.astype(np.int32)]

    def gather(p, operand, indices):
        """``lax.gather`` with the last axis of ``indices`` as the index vector, as JAX always emits it;
        start indices are clamped so each slice fits (XLA's semantics for the clip and promise-in-bounds
        modes), and out-of-bounds slices are replaced by ``fill_value`` in the fill-or-drop mode."""
        dn = p["dimension_numbers"]
        batched = tuple(zip(getattr(dn, "operand_batching_dims", ()), getattr(dn, "start_indices_batching_dims", ())))
        sizes = tuple(int(s) for s in p["slice_sizes"])
        mode = str(p.get("mode"))
        fill = "FILL_OR_DROP" in mode
        if fill and p.get("fill_value") is None:
            raise Unsupported("fill-or-drop gather without a fill value")
        batch = indices.shape[:-1]
        collapsed = tuple(dn.collapsed_slice_dims) + tuple(d for d, _ in batched)
        offset_shape = tuple(s for d, s in enumerate(sizes) if d not in collapsed)
        stacked = np.empty(batch + offset_shape, dtype=operand.dtype)
        for b in np.ndindex(*batch):
            vec = indices[b]
            start = [0] * operand.ndim
            inside = True
            for k, d in enumerate(dn.start_index_map):
                want = int(vec[k])
                inside &= 0 <= want <= operand.shape[d] - sizes[d]
                start[d] = min(max(want, 0), operand.shape[d] - sizes[d])
            for d, i in batched:  # a batching dimension of the operand follows the indices' own batch position
                start[d] = b[i]
            piece = operand[tuple(slice(a, a + s) for a, s in zip(start, sizes))]
            piece = piece.reshape(offset_shape)
            stacked[b] = piece if inside or not fill else np.asarray(p["fill_value"], operand.dtype)
        offset_dims = tuple(dn.offset_dims)
        return np.moveaxis(stacked, list(range(len(batch), len(batch) + len(offset_dims))), list(offset_dims))

    def bitcast(p, x):
        new = np.dtype(p["new_dtype"])
        if new.itemsize != x.dtype.itemsize:
            raise Unsupported("bitcast between widths")
        return np.array(x, copy=True, order="C").view(new)

    def unsigned(x):
        return x.view(np.dtype("u%d" % x.dtype.itemsize)) if x.dtype.kind == "i" else x

    def shift(kind):
        def run(p, x, y):
            x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
            bits = x.dtype.itemsize * 8
            count = unsigned(np.array(y, copy=True, order="C")).astype(np.uint64)
            big = count >= bits
            count = np.minimum(count, bits - 1).astype(x.dtype)
            if kind == "left":
                out = np.where(big, 0, np.left_shift(unsigned(x), unsigned(count))).astype(unsigned(x).dtype)
            elif kind == "logical":
                out = np.where(big, 0, np.right_shift(unsigned(x), unsigned(count))).astype(unsigned(x).dtype)
            else:
                out = np.right_shift(x, count)  # arithmetic: shifting by bits - 1 already fills with the sign
                return out
            return np.array(out, copy=True, order="C").view(x.dtype)
        return run

    def erf(x):
        return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x

    ops = {
        "neg": unary(np.negative), "sign": unary(np.sign), "floor": unary(np.floor), "ceil": unary(np.ceil),
        "round": round_, "is_finite": unary(np.isfinite), "exp": unary(np.exp), "exp2": unary(np.exp2),
        "log": unary(np.log), "log1p": unary(np.log1p), "expm1": unary(np.expm1), "tanh": unary(np.tanh),
        "logistic": logistic, "sin": unary(np.sin), "cos": unary(np.cos), "tan": unary(np.tan),
        "asin": unary(np.arcsin), "acos": unary(np.arccos), "atan": unary(np.arctan), "sinh": unary(np.sinh),
        "cosh": unary(np.cosh), "asinh": unary(np.arcsinh), "acosh": unary(np.arccosh),
        "atanh": unary(np.arctanh), "sqrt": unary(np.sqrt), "rsqrt": unary(lambda x: 1 / np.sqrt(x)),
        "cbrt": unary(np.cbrt), "abs": unary(np.abs), "square": unary(np.square), "erf": unary(erf),
        "not": unary(lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)),
        "integer_pow": integer_pow,
        "add": binary(np.add), "add_any": binary(np.add), "sub": binary(np.subtract),
        "mul": binary(np.multiply), "div": div, "rem": binary(np.fmod), "pow": binary(np.power),
        "max": binary(np.maximum), "min": binary(np.minimum), "atan2": binary(np.arctan2),
        "nextafter": binary(np.nextafter),
        "and": binary(lambda x, y: np.logical_and(x, y) if x.dtype == np.bool_ else np.bitwise_and(x, y)),
        "or": binary(lambda x, y: np.logical_or(x, y) if x.dtype == np.bool_ else np.bitwise_or(x, y)),
        "xor": binary(lambda x, y: np.logical_xor(x, y) if x.dtype == np.bool_ else np.bitwise_xor(x, y)),
        "eq": binary(np.equal), "ne": binary(np.not_equal), "lt": binary(np.less),
        "le": binary(np.less_equal), "gt": binary(np.greater), "ge": binary(np.greater_equal),
        "convert_element_type": convert, "broadcast_in_dim": broadcast_in_dim, "reshape": reshape,
        "transpose": lambda p, x: np.transpose(x, tuple(p["permutation"])),
        "squeeze": lambda p, x: np.squeeze(x, axis=tuple(p["dimensions"])),
        "expand_dims": lambda p, x: np.expand_dims(x, tuple(p["dimensions"])),
        "rev": lambda p, x: np.flip(x, axis=tuple(p["dimensions"])),
        "concatenate": lambda p, *xs: np.concatenate(xs, axis=p["dimension"]),
        "stack": lambda p, *xs: np.stack(xs, axis=p["axis"]),
        "reduce_precision": reduce_precision,
        "pad": pad, "slice": slice_, "dynamic_slice": dynamic_slice,
        "dynamic_update_slice": dynamic_update_slice, "iota": iota, "select_n": select_n, "clamp": clamp,
        "copy": lambda p, x: np.array(x, copy=True), "copy_p": lambda p, x: np.array(x, copy=True),
        "stop_gradient": lambda p, x: x, "optimization_barrier": lambda p, *xs: list(xs),
        "reduce_sum": reduce(np.sum), "reduce_max": reduce(np.max), "reduce_min": reduce(np.min),
        "reduce_prod": reduce(np.prod), "reduce_and": reduce(np.all), "reduce_or": reduce(np.any),
        "argmax": argminmax(np.argmax), "argmin": argminmax(np.argmin),
        "cumsum": cumulative(np.cumsum), "cumprod": cumulative(np.cumprod),
        "cummax": cumulative(np.maximum.accumulate), "cummin": cumulative(np.minimum.accumulate),
        "dot_general": dot_general, "split": split, "top_k": top_k, "gather": gather,
        "tile": lambda p, x: np.tile(x, tuple(p["reps"])),
        "threefry2x32": lambda p, k1, k2, x1, x2: list(threefry2x32(np, *np.broadcast_arrays(k1, k2, x1, x2))),
        "bitcast_convert_type": bitcast, "shift_left": shift("left"), "shift_right_logical": shift("logical"),
        "shift_right_arithmetic": shift("arithmetic"),
    }
    return ops


def threefry2x32(np, k1, k2, x1, x2):
    """The Threefry-2x32 hash (20 rounds), in uint32 arithmetic that wraps, as ``jax.random`` computes it."""
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    with np.errstate(over="ignore"):
        ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
        x = [x1 + ks[0], x2 + ks[1]]
        for i in range(5):
            for r in rotations[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = (x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r))
                x[1] = x[0] ^ x[1]
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0], x[1]


INLINE = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
          "remat2": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr"}


def _holds_program(params):
    """Whether an equation's parameters hold a sub-program (a jaxpr, closed or not)."""
    for v in params.values():
        if hasattr(v, "eqns") or hasattr(v, "jaxpr"):
            return True
        if isinstance(v, (tuple, list)) and any(hasattr(x, "eqns") or hasattr(x, "jaxpr") for x in v):
            return True
    return False


class Memo:
    """What one evaluation of a program computed, equation by equation, so that later evaluations of the
    same program with one piece perturbed (the probes) compute again only what the perturbation reaches.

    The first evaluation with the memo *records*: for every equation it evaluates (each occurrence apart:
    a scan body's equation once per step, in evaluation order) the operands it read and the results it made.
    A later evaluation *replays*: an equation whose operands are the very objects recorded (identity, not
    equality: nothing is compared by value) gives the recorded results again without computing them. A
    perturbed result is a new object, so everything it reaches is computed again; an equation holding a
    sub-program is replayed only when no perturbed equation is inside it. Literals and a program's constants
    are the same in every evaluation and are not compared. Recording stops past ``MEMO_ENTRIES`` entries
    (the rest is simply computed again)."""

    def __init__(self):
        self.recording = True
        self.entries = {}
        self.consts = {}
        """id(constant) -> (constant, its NumPy value): one object per constant across evaluations."""
        self.slices = {}
        """(scan path, occurrence) -> (the xs it sliced, every step's slices)."""
        self.eager = {}
        """id(equation) -> (equation, a compiled function binding it): a higher-order primitive bound eagerly
        (``pallas_call``) compiles once per equation, not once per evaluation."""

    def full(self):
        return len(self.entries) >= MEMO_ENTRIES


MEMO_ENTRIES = 200_000
"""Equation results one memo keeps at most (a long loop's steps each count)."""


class NumpyEvaluator:
    """Evaluates a ``ClosedJaxpr`` with NumPy. ``after(path, outputs)`` may replace an equation's outputs
    (the probes' hook); ``scan_hook(path, evaluator, params, operands)`` may take over a scan. With a
    ``memo`` (``Memo``) the evaluation records, or replays what an earlier one recorded; ``perturbed`` is
    the paths whose results ``after`` may replace in this evaluation (an equation around one of them is
    never replayed whole)."""

    def __init__(self, t, is_own, after=None, scan_hook=None, memo=None, perturbed=()):
        self.t, self.np, self.is_own = t, t["np"], is_own
        self.ops = _np_ops(self.np)
        self.after, self.scan_hook = after, scan_hook
        self.deadline = time.monotonic() + BUDGET_S
        self.memo, self.perturbed = memo, tuple(perturbed)
        self.seen = {}
        """path -> how many times this evaluation has reached it (a scan body's equation, once per step)."""

    def run(self, closed, args):
        np = self.np
        with np.errstate(all="ignore"):
            return self.eval(closed.jaxpr, closed.consts, [self.value(a) for a in args], "")

    def value(self, x):
        """A NumPy array where possible; JAX-only values (PRNG keys) stay as they are."""
        np = self.np
        try:
            if hasattr(x, "dtype") and np.dtype(x.dtype).kind in "biufc":
                return np.asarray(x)
        except TypeError:
            pass
        return x if hasattr(x, "dtype") else np.asarray(x)

    def eval(self, jaxpr, consts, args, prefix):
        env = {}
        literal = self.t["Literal"]
        memo = self.memo

        def read(v):
            if isinstance(v, literal):
                return self.cast(v.val, v.aval)
            return env[v]

        for var, val in zip(jaxpr.constvars, consts):
            env[var] = self.const(val)
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        if time.monotonic() > self.deadline:
            raise Unsupported("the evaluation took longer than %g s" % BUDGET_S)
        for i, eqn in enumerate(jaxpr.eqns):
            path = "%s%d" % (prefix, i)
            invals = [read(v) for v in eqn.invars]
            outs = None
            if memo is not None:
                occurrence = self.seen.get(path, 0)
                self.seen[path] = occurrence + 1
                key = (path, occurrence)
                operands = [val for v, val in zip(eqn.invars, invals) if not isinstance(v, literal)]
                if not memo.recording:
                    kept = memo.entries.get(key)
                    if (kept is not None and len(kept[0]) == len(operands)
                            and all(a is b for a, b in zip(kept[0], operands)) and self.replayable(path)):
                        outs = list(kept[1])
            if outs is None:
                outs = self.apply(eqn, invals, path)
                outs = [self.cast(o, v.aval) for o, v in zip(outs, eqn.outvars)]
                if memo is not None and memo.recording and not memo.full():
                    memo.entries[key] = (operands, list(outs))
            if self.after is not None:
                outs = self.after(path, outs)
            for var, val in zip(eqn.outvars, outs):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]

    def replayable(self, path):
        """Whether the equation at ``path`` may give its recorded results: nothing perturbed is inside it."""
        inner = path + "/"
        return not any(p.startswith(inner) for p in self.perturbed)

    def const(self, val):
        """A program constant as NumPy, the same object in every evaluation sharing the memo."""
        memo = self.memo
        if memo is None:
            return self.value(val)
        kept = memo.consts.get(id(val))
        if kept is None or kept[0] is not val:
            kept = memo.consts[id(val)] = (val, self.value(val))
        return kept[1]

    def cast(self, value, aval):
        """``value`` as the traced program declares it (dtype, shape), or ``Unsupported``."""
        np = self.np
        dtype, shape = getattr(aval, "dtype", None), tuple(getattr(aval, "shape", ()))
        try:
            kind = np.dtype(dtype).kind
        except TypeError:
            return value  # a JAX-only type (PRNG key): kept as JAX made it
        out = np.asarray(value, dtype=dtype) if kind in "biufcV" else value
        if getattr(out, "shape", shape) != shape:
            raise Unsupported("shape %s where %s was traced" % (getattr(out, "shape", None), shape))
        return out

    def apply(self, eqn, invals, path):
        prim, params, name = eqn.primitive, eqn.params, eqn.primitive.name
        own = self.is_own(prim)
        if own and name in INLINE and INLINE[name] in params:
            sub = params[INLINE[name]]
            inner = sub.jaxpr if hasattr(sub, "jaxpr") else sub
            if len(inner.invars) == len(invals):
                return self.eval(inner, getattr(sub, "consts", ()), invals, "%s/%s/" % (path, INLINE[name]))
        if own and name == "scan":
            if self.scan_hook is not None:
                out = self.scan_hook(path, self, params, invals)
                if out is not None:
                    return out
            return self.scan(params, invals, path)
        if own and name == "while":
            return self.while_(params, invals, path)
        if own and name == "cond":
            index = int(self.np.asarray(invals[0]))
            branches = params["branches"]
            branch = branches[min(max(index, 0), len(branches) - 1)]
            return self.eval(branch.jaxpr, branch.consts, invals[1:], "%s/branches[%d]/" % (path, index))
        if own and name == "shard_map":
            return self.shard_map(params, invals, path)
        if own and name == "random_bits":
            try:
                return [self.random_bits(params, invals[0])]
            except Unsupported:
                return self.eager(eqn, invals)
        op = self.ops.get(name) if own else None
        if op is not None and all(isinstance(v, self.np.ndarray) or self.np.isscalar(v) for v in invals):
            try:
                out = op(params, *invals)
            except Unsupported:
                return self.eager(eqn, invals)
            return list(out) if prim.multiple_results else [out]
        return self.eager(eqn, invals)

    def random_bits(self, params, key):
        """``random_bits`` of one threefry key, as JAX computes it with ``jax_threefry_partitionable`` on (its
        default): the Threefry-2x32 hash of the key and a 64-bit counter over the output's flat index, the two
        words xor-ed. Anything else (another PRNG, a batch of keys, the older layout) raises ``Unsupported``."""
        np, jax = self.np, self.t["jax"]
        impl = getattr(getattr(key, "_impl", None), "name", None)
        data = getattr(key, "_base_array", None)
        if impl != "threefry2x32" or data is None or getattr(key, "shape", None) != () \
                or not jax.config.jax_threefry_partitionable:
            raise Unsupported("random_bits of this key")
        width, shape = int(params["bit_width"]), tuple(params["shape"])
        k1, k2 = (np.uint32(w) for w in np.asarray(data, dtype=np.uint32).reshape(2))
        count = np.arange(int(np.prod(shape)) if shape else 1, dtype=np.uint64)
        hi, lo = threefry2x32(np, k1, k2, (count >> np.uint64(32)).astype(np.uint32),
                              (count & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        if width == 64:
            bits = (hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)
        else:
            bits = (hi ^ lo).astype(np.dtype("uint%d" % width))
        return bits.reshape(shape)

    # ------------------------------------------------------------------------------------------------
    # shard_map: every device's program, evaluated in lockstep

    def shard_map(self, params, invals, path):
        """A ``shard_map`` over a mesh whose axes are all manual: the inputs cut into each device's blocks,
        the body run for every device in lockstep (collectives exchange the devices' values), the blocks
        put together as ``out_specs`` says."""
        np = self.np
        mesh = params["mesh"]
        names = tuple(mesh.axis_names)
        sizes = dict(mesh.shape)
        manual = params.get("newly_manual_axes", params.get("manual_axes", frozenset(names)))
        if set(manual) != set(names):
            raise Unsupported("shard_map with automatic mesh axes")
        count = int(np.prod([sizes[a] for a in names]))
        coords = [dict(zip(names, (int(c) for c in np.unravel_index(d, [sizes[a] for a in names]))))
                  for d in range(count)]
        spmd = {"names": names, "sizes": sizes, "coords": coords}
        args = [self.split(x, spec, spmd) for x, spec in zip(invals, params["in_specs"])]
        body = params["jaxpr"]
        inner = body.jaxpr if hasattr(body, "jaxpr") else body
        outs = self.spmd_eval(inner, getattr(body, "consts", ()), args, path + "/jaxpr/", spmd)
        return [self.join(o, spec, spmd) for o, spec in zip(outs, params["out_specs"])]

    @staticmethod
    def _spec_axes(entry):
        return () if entry is None else tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)

    @staticmethod
    def _linear(coords, axes, sizes):
        """A device's index along ``axes`` taken together (row-major, as JAX numbers them)."""
        index = 0
        for a in axes:
            index = index * sizes[a] + coords[a]
        return index

    def split(self, x, spec, spmd):
        """Each device's block of ``x`` under the partition ``spec``."""
        x = self.np.asarray(x)
        out = []
        for c in spmd["coords"]:
            index = []
            for dim in range(x.ndim):
                axes = self._spec_axes(spec[dim] if dim < len(spec) else None)
                if not axes:
                    index.append(slice(None))
                    continue
                blocks = int(self.np.prod([spmd["sizes"][a] for a in axes]))
                size = x.shape[dim] // blocks
                at = self._linear(c, axes, spmd["sizes"])
                index.append(slice(at * size, (at + 1) * size))
            out.append(x[tuple(index)])
        return out

    def join(self, blocks, spec, spmd):
        """The global array from every device's block: blocks along the axes ``spec`` names, device 0's
        copy along the others."""
        np = self.np
        named = {a for entry in spec for a in self._spec_axes(entry)}
        first = np.asarray(blocks[0])
        shape = list(first.shape)
        for dim in range(first.ndim):
            axes = self._spec_axes(spec[dim] if dim < len(spec) else None)
            shape[dim] *= int(np.prod([spmd["sizes"][a] for a in axes])) if axes else 1
        out = np.empty(shape, dtype=first.dtype)
        for c, block in zip(spmd["coords"], blocks):
            if any(c[a] != 0 for a in spmd["names"] if a not in named):
                continue
            index = []
            for dim in range(first.ndim):
                axes = self._spec_axes(spec[dim] if dim < len(spec) else None)
                at = self._linear(c, axes, spmd["sizes"]) if axes else 0
                index.append(slice(at * first.shape[dim], (at + 1) * first.shape[dim]))
            out[tuple(index)] = block
        return out

    def spmd_eval(self, jaxpr, consts, args, prefix, spmd):
        """``eval`` for every device at once: each variable holds one value per device."""
        env = {}
        literal = self.t["Literal"]
        count = len(spmd["coords"])

        def read(v):
            if isinstance(v, literal):
                return [self.cast(v.val, v.aval)] * count
            return env[v]

        for var, val in zip(jaxpr.constvars, consts):
            env[var] = [self.value(val)] * count
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        if time.monotonic() > self.deadline:
            raise Unsupported("the evaluation took longer than %g s" % BUDGET_S)
        for i, eqn in enumerate(jaxpr.eqns):
            path = "%s%d" % (prefix, i)
            outs = self.spmd_apply(eqn, [read(v) for v in eqn.invars], path, spmd)
            per_device = []
            for d in range(count):
                got = [self.cast(o[d], v.aval) for o, v in zip(outs, eqn.outvars)]
                per_device.append(self.after(path, got) if self.after is not None else got)
            for k, var in enumerate(eqn.outvars):
                env[var] = [per_device[d][k] for d in range(count)]
        return [read(v) for v in jaxpr.outvars]

    def spmd_apply(self, eqn, invals, path, spmd):
        """One equation on every device: a list (one per result) of lists (one per device)."""
        prim, params, name = eqn.primitive, eqn.params, eqn.primitive.name
        own = self.is_own(prim)
        count = len(spmd["coords"])
        if own and name in COLLECTIVES:
            outs = COLLECTIVES[name](self, params, invals, spmd)
            return outs if prim.multiple_results else [outs]
        if own and any(isinstance(a, str) for key in ("axis_name", "axes")
                       for a in (params.get(key) if isinstance(params.get(key), (tuple, list)) else [params.get(key)])):
            raise Unsupported("collective %s" % name)
        if own and name in INLINE and INLINE[name] in params:
            sub = params[INLINE[name]]
            inner = sub.jaxpr if hasattr(sub, "jaxpr") else sub
            if len(inner.invars) == len(invals):
                return self.spmd_eval(inner, getattr(sub, "consts", ()), invals, "%s/%s/" % (path, INLINE[name]), spmd)
        if own and name == "scan":
            return self.spmd_scan(params, invals, path, spmd)
        if own and name == "while":
            return self.spmd_while(params, invals, path, spmd)
        if own and name == "cond":
            index = {int(self.np.asarray(i)) for i in invals[0]}
            if len(index) != 1:
                raise Unsupported("a cond whose branch differs between devices")
            branches = params["branches"]
            k = min(max(index.pop(), 0), len(branches) - 1)
            return self.spmd_eval(branches[k].jaxpr, branches[k].consts, invals[1:],
                                  "%s/branches[%d]/" % (path, k), spmd)
        if name == "shard_map":
            raise Unsupported("a shard_map inside a shard_map")
        results = [self.apply(eqn, [v[d] for v in invals], path) for d in range(count)]
        return [[results[d][k] for d in range(count)] for k in range(len(eqn.outvars))]

    def spmd_scan(self, params, invals, path, spmd):
        np = self.np
        body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
        consts, carry, xs = invals[:nc], list(invals[nc:nc + ncarry]), invals[nc + ncarry:]
        length, count = params["length"], len(spmd["coords"])
        steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
        ys = [None] * length
        for j in steps:
            step_xs = [[x[d][j] for d in range(count)] for x in xs]
            outs = self.spmd_eval(body.jaxpr, body.consts, list(consts) + carry + step_xs, path + "/jaxpr/", spmd)
            carry, ys[j] = outs[:ncarry], outs[ncarry:]
        stacked = []
        for k, v in enumerate(body.jaxpr.outvars[ncarry:]):
            stacked.append([np.stack([ys[j][k][d] for j in range(length)]) if length else
                            np.zeros((0,) + tuple(v.aval.shape), v.aval.dtype) for d in range(count)])
        return carry + stacked

    def spmd_while(self, params, invals, path, spmd):
        cond, body = params["cond_jaxpr"], params["body_jaxpr"]
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        cconsts, bconsts, carry = invals[:cn], invals[cn:cn + bn], list(invals[cn + bn:])
        for _ in range(MAX_WHILE_STEPS):
            go = {bool(g) for g in self.spmd_eval(cond.jaxpr, cond.consts, list(cconsts) + carry,
                                                   path + "/cond_jaxpr/", spmd)[0]}
            if len(go) != 1:
                raise Unsupported("a while loop whose trip count differs between devices")
            if not go.pop():
                return carry
            carry = self.spmd_eval(body.jaxpr, body.consts, list(bconsts) + carry, path + "/body_jaxpr/", spmd)
        raise Unsupported("a while loop ran more than %d steps" % MAX_WHILE_STEPS)

    def step_slices(self, path, xs, length):
        """Every step's slices of the scanned operands ``xs``: with a memo, the same objects in every
        evaluation that scans the same ``xs`` (so a step's equations can be replayed)."""
        memo = self.memo
        key = ("slices", path, self.seen.get(path, 0))
        if memo is not None:
            kept = memo.slices.get(key)
            if kept is not None and len(kept[0]) == len(xs) and all(a is b for a, b in zip(kept[0], xs)):
                return kept[1]
        slices = [[x[j] for x in xs] for j in range(length)]
        if memo is not None and memo.recording and not memo.full():
            memo.slices[key] = (list(xs), slices)
        return slices

    def scan(self, params, invals, path):
        body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
        consts, carry, xs = invals[:nc], list(invals[nc:nc + ncarry]), invals[nc + ncarry:]
        length = params["length"]
        steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
        ys = [None] * length
        slices = self.step_slices(path, xs, length)
        for j in steps:
            outs = self.eval(body.jaxpr, body.consts, list(consts) + carry + slices[j], path + "/jaxpr/")
            carry, ys[j] = outs[:ncarry], outs[ncarry:]
        stacked = []
        for k, v in enumerate(body.jaxpr.outvars[ncarry:]):
            stacked.append(self.np.stack([y[k] for y in ys]) if length else
                           self.np.zeros((0,) + tuple(v.aval.shape), v.aval.dtype))
        return carry + stacked

    def while_(self, params, invals, path):
        cond, body = params["cond_jaxpr"], params["body_jaxpr"]
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        cconsts, bconsts, carry = invals[:cn], invals[cn:cn + bn], list(invals[cn + bn:])
        for _ in range(MAX_WHILE_STEPS):
            if not bool(self.eval(cond.jaxpr, cond.consts, list(cconsts) + carry, path + "/cond_jaxpr/")[0]):
                return carry
            carry = self.eval(body.jaxpr, body.consts, list(bconsts) + carry, path + "/body_jaxpr/")
        raise Unsupported("a while loop ran more than %d steps" % MAX_WHILE_STEPS)

    def eager(self, eqn, invals):
        """Bind the primitive with JAX, eagerly (what ``jax.core.eval_jaxpr`` does). A primitive holding a
        sub-program (``pallas_call``: JAX compiles a fresh program at every eager bind) is compiled once per
        equation when a memo is shared across evaluations."""
        prim = eqn.primitive
        bind_params = prim.get_bind_params(eqn.params)
        subfuns = ()
        if isinstance(bind_params, tuple):
            subfuns, bind_params = bind_params
        manager = getattr(getattr(eqn, "ctx", None), "manager", None)

        def bind(*operands):
            if manager is not None:
                with manager:
                    return prim.bind(*subfuns, *operands, **bind_params)
            return prim.bind(*subfuns, *operands, **bind_params)

        if self.memo is not None and _holds_program(eqn.params):
            kept = self.memo.eager.get(id(eqn))
            if kept is None or kept[0] is not eqn:
                kept = self.memo.eager[id(eqn)] = (eqn, self.t["jax"].jit(bind))
            out = kept[1](*invals)
        else:
            out = bind(*invals)
        out = list(out) if prim.multiple_results else [out]
        return [self.value(o) for o in out]


# ----------------------------------------------------------------------------------------------------
# Collectives inside a shard_map, across the devices' values (``NumpyEvaluator.spmd_apply``)

def _axes(value):
    axes = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not all(isinstance(a, str) for a in axes):
        raise Unsupported("a collective over positional axes")
    return axes


def _groups(ev, axes, spmd):
    """For each device: (its group, the devices of that group by index along ``axes``, its own index)."""
    coords, sizes = spmd["coords"], spmd["sizes"]
    others = [a for a in spmd["names"] if a not in axes]
    members = {}
    for d, c in enumerate(coords):
        members.setdefault(tuple(c[a] for a in others), {})[ev._linear(c, axes, sizes)] = d
    out = []
    for d, c in enumerate(coords):
        group = members[tuple(c[a] for a in others)]
        out.append(([group[i] for i in range(len(group))], ev._linear(c, axes, sizes)))
    return out


def _no_index_groups(params):
    if params.get("axis_index_groups") is not None:
        raise Unsupported("axis_index_groups")


def _axis_index(ev, params, invals, spmd):
    axes = _axes(params["axis_name"])
    return [ev.np.int32(index) for _, index in _groups(ev, axes, spmd)]


def _ppermute(ev, params, invals, spmd):
    (x,) = invals
    np = ev.np
    pairs = [(int(a), int(b)) for a, b in params["perm"]]
    out = []
    for d, (group, index) in enumerate(_groups(ev, _axes(params["axis_name"]), spmd)):
        source = [a for a, b in pairs if b == index]
        out.append(np.array(x[group[source[0]]], copy=True) if source else np.zeros_like(x[d]))
    return out


def _reduce(kind):
    def run(ev, params, invals, spmd):
        _no_index_groups(params)
        combine = {"sum": ev.np.add, "max": ev.np.maximum, "min": ev.np.minimum}[kind]
        groups = _groups(ev, _axes(params["axes"]), spmd)
        results = []
        for x in invals:
            per_device = []
            for group, _ in groups:
                total = x[group[0]]
                for m in group[1:]:
                    total = combine(total, x[m])
                per_device.append(total)
            results.append(per_device)
        return results if len(invals) > 1 else results[0]
    return run


def _all_gather(ev, params, invals, spmd):
    _no_index_groups(params)
    (x,) = invals
    np = ev.np
    dim = int(params["all_gather_dimension"])
    out = []
    for group, _ in _groups(ev, _axes(params["axis_name"]), spmd):
        parts = [x[m] for m in group]
        out.append(np.concatenate(parts, axis=dim) if params.get("tiled") else np.stack(parts, axis=dim))
    return out


def _reduce_scatter(ev, params, invals, spmd):
    _no_index_groups(params)
    (x,) = invals
    np = ev.np
    dim = int(params["scatter_dimension"])
    out = []
    for group, index in _groups(ev, _axes(params["axis_name"]), spmd):
        total = x[group[0]]
        for m in group[1:]:
            total = np.add(total, x[m])
        if params.get("tiled"):
            out.append(np.split(total, len(group), axis=dim)[index])
        else:
            out.append(np.take(total, index, axis=dim))
    return out


def _pbroadcast(ev, params, invals, spmd):
    (x,) = invals
    source = int(params["source"])
    return [ev.np.array(x[group[source]], copy=True) for group, _ in _groups(ev, _axes(params["axis_name"]), spmd)]


def _identity(ev, params, invals, spmd):
    return list(invals) if len(invals) > 1 else invals[0]


COLLECTIVES = {
    "axis_index": _axis_index, "ppermute": _ppermute,
    "psum": _reduce("sum"), "psum_invariant": _reduce("sum"), "pmax": _reduce("max"), "pmin": _reduce("min"),
    "all_gather": _all_gather, "all_gather_invariant": _all_gather, "reduce_scatter": _reduce_scatter,
    "pbroadcast": _pbroadcast, "pvary": _identity,
}
"""Collectives the lockstep evaluator knows, with JAX's semantics (``jax/_src/lax/parallel.py``): a device
that ``ppermute`` sends nothing to gets zeros; ``psum``/``pmax``/``pmin`` reduce over the named axes;
``all_gather`` stacks (or, tiled, concatenates) the group's blocks in index order; ``reduce_scatter`` sums
and hands each device its piece; ``pvary`` only changes a type."""

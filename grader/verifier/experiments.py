"""Experiments: what a rebuilt program computes, measured on the trusted side.

A requirement such as "each scan step runs the forward and backward pass of one microbatch" is a claim about
values: what the loop's body computes at step j, on inputs the learner's process never saw. A problem states
such claims as experiments (``problems/<slug>/experiments.py``: ``EXPERIMENTS = {name: fn(program) ->
dict}``), which the verifier runs on the program it rebuilt, for one case of each traced shape; the results
travel with the traced program (``Trace.experiments``) and the problem's checks read them. An experiment may
compute with JAX itself what a value should be (the gradient of one microbatch's loss) and look for it among
the values the program holds (``find_scaled``): the program is judged by what it computes, however it was
spelled and whatever its equations are labelled.

Runs in the verifier's process (``service.py``), which never imports learner code: everything here is the
grader's, and so is everything an experiment imports.
"""
from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"
_modules: dict[str, Any] = {}
_modules_lock = threading.Lock()


def experiments_of(slug: Any) -> dict[str, Callable] | None:
    """The problem's ``EXPERIMENTS`` (None when it declares none). ``slug`` comes from the grader's own job."""
    if not isinstance(slug, str) or not slug or "/" in slug or slug.startswith((".", "_")):
        return None
    with _modules_lock:
        if slug not in _modules:
            path = PROBLEMS / slug / "experiments.py"
            module = None
            if path.is_file():
                spec = importlib.util.spec_from_file_location(f"jaxplay_experiments_{slug.replace('-', '_')}", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            _modules[slug] = module
        module = _modules[slug]
    return getattr(module, "EXPERIMENTS", None) if module is not None else None


@dataclass(frozen=True)
class Loop:
    """A ``scan`` or ``while`` of the program, reached without entering another loop or a branch."""

    path: str
    """Its equation's path (``"3"``, ``"2/jaxpr/0"``), as the checks name equations."""
    primitive: str
    length: int | None
    """A scan's number of steps (None for a ``while``)."""
    reverse: bool
    num_consts: int
    num_carry: int


@dataclass
class Step:
    """What a loop's body computed at one step (in the loop's own order: a reversed scan's first step is
    its last index)."""

    index: int
    inputs: list[Any]
    """The body's inputs: its constants, the carry it received, and this step's slices."""
    outputs: list[Any]
    """The body's results: the carry it hands on, then this step's per-step outputs."""
    values: dict[str, list[Any]]
    """Every equation's results in the body, by path *relative to the body* (``"4"``, ``"2/jaxpr/1"``); an
    equation evaluated several times within one step (in a loop nested inside) keeps its last results."""


class Program:
    """One rebuilt program and one case, as an experiment sees it.

    ``args`` are the case's inputs by argument name (what the grader holds, hidden cases included), ``jax`` and
    ``jnp`` JAX itself for computing what the values should be."""

    def __init__(self, t: dict, closed: Any, args: list, specs: list[dict], dynamic: list, output_names: list[str]):
        self.t, self.closed, self.specs = t, closed, specs
        self.jax, self.jnp = t["jax"], t["jnp"]
        self.args = {s["name"]: a for s, a in zip(specs, args)}
        self._static = {s["name"] for s in specs if s.get("static")}
        self.output_names = list(output_names)
        self._dynamic = list(dynamic)
        self._is_own = lambda p: id(p) in t["own_primitives"]

    # ---- inputs -------------------------------------------------------------------------------------

    def flat(self, **replace: Any) -> list:
        """The program's inputs in its own order, with the named arguments replaced (same structure)."""
        if not replace:
            return list(self._dynamic)
        bad = set(replace) & self._static
        if bad:
            raise ValueError("static arguments are part of the traced program: %s" % sorted(bad))
        values = [replace.get(s["name"], self.args[s["name"]]) for s in self.specs if not s.get("static")]
        flat = self.t["tree_leaves"](values)
        if len(flat) != len(self._dynamic):
            raise ValueError("the replaced arguments do not flatten like the case's")
        return [np.asarray(v, dtype=np.asarray(o).dtype) if hasattr(o, "dtype") and np.asarray(o).dtype.kind in "biuf"
                else v for v, o in zip(flat, self._dynamic)]

    def randomized(self, seed: int, scale: float = 1.0, only: tuple[str, ...] = ()) -> dict[str, Any]:
        """New values for the float arrays of the named arguments (all traced ones by default): standard normal
        times ``scale``, the same shapes and dtypes; drawn here, never seen by the learner's process."""
        rng = np.random.default_rng(seed)
        names = only or tuple(s["name"] for s in self.specs if not s.get("static"))

        def fresh(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: fresh(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return type(v)(fresh(x) for x in v)
            a = np.asarray(v) if hasattr(v, "shape") else None
            if a is not None and a.dtype.kind == "f":
                return (rng.standard_normal(a.shape) * scale).astype(a.dtype)
            return v

        return {n: fresh(self.args[n]) for n in names}

    # ---- running --------------------------------------------------------------------------------------

    def run(self, **replace: Any) -> dict[str, np.ndarray]:
        """The program's outputs by name, compiled and run with XLA."""
        from grader.verifier.rebuild import run_program
        outs = run_program(self.closed, self.flat(**replace))
        return dict(zip(self.output_names, outs))

    def loops(self) -> list[Loop]:
        """Every ``scan`` and ``while`` of JAX's own reached through ``jit``, checkpoints and custom-derivative
        calls (not inside another loop or a branch), outermost first."""
        inline = self.t["jaxpr_numpy"].INLINE
        found: list[Loop] = []

        def walk(jaxpr: Any, prefix: str) -> None:
            for i, eqn in enumerate(jaxpr.eqns):
                path, name = f"{prefix}{i}", eqn.primitive.name
                if not self._is_own(eqn.primitive):
                    continue
                if name == "scan":
                    found.append(Loop(path, "scan", int(eqn.params["length"]), bool(eqn.params["reverse"]),
                                      int(eqn.params["num_consts"]), int(eqn.params["num_carry"])))
                elif name == "while":
                    found.append(Loop(path, "while", None, False, int(eqn.params["body_nconsts"]),
                                      len(eqn.outvars)))
                elif name in inline and inline[name] in eqn.params:
                    sub = eqn.params[inline[name]]
                    walk(sub.jaxpr if hasattr(sub, "jaxpr") else sub, f"{path}/{inline[name]}/")

        walk(self.closed.jaxpr, "")
        return found

    def equation(self, path: str) -> Any:
        """The equation at ``path`` (as the checks name them: ``"3"``, ``"3/jaxpr/5"``, ``"2/branches[1]/0"``),
        or None."""
        parts = path.split("/")
        jaxpr, eqn = self.closed.jaxpr, None
        for i in range(0, len(parts), 2):
            try:
                eqn = jaxpr.eqns[int(parts[i])]
            except (ValueError, IndexError):
                return None
            if i + 1 < len(parts):
                name = parts[i + 1]
                key, _, index = name.partition("[")
                sub = eqn.params.get(key)
                if index:
                    try:
                        sub = sub[int(index.rstrip("]"))]
                    except (TypeError, ValueError, IndexError):
                        return None
                if sub is None:
                    return None
                jaxpr = sub.jaxpr if hasattr(sub, "jaxpr") else sub
        return eqn

    def steps(self, loop: Loop | str, **replace: Any) -> list[Step]:
        """Evaluate the program (with NumPy, equation by equation) and keep what the loop's body computed at
        every step."""
        path = loop.path if isinstance(loop, Loop) else loop
        recorder = _Recorder(self.t, self._is_own, path)
        recorder.run(self.closed, self.flat(**replace))
        return recorder.steps

    def values(self, outside_loops: bool = False, **replace: Any) -> dict[str, list[Any]]:
        """Every equation's results (by path) in one evaluation of the program; an equation inside a loop keeps
        its last step's, or is left out with ``outside_loops`` (a value a loop computes one step at a time is
        then not counted as computed at once)."""
        recorder = _Recorder(self.t, self._is_own, None)
        recorder.outside_loops = outside_loops
        recorder.run(self.closed, self.flat(**replace))
        return recorder.everything


def _recorder_class(t: dict) -> type:
    base = t["jaxpr_numpy"].NumpyEvaluator

    class Recorder(base):
        def __init__(self, t: dict, is_own: Callable, loop_path: str | None):
            super().__init__(t, is_own, after=self._after)
            self.loop_path, self.steps, self.everything = loop_path, [], {}
            self._current: Step | None = None
            self.outside_loops, self._loop_depth = False, 0

        def _after(self, path: str, outs: list) -> list:
            if not (self.outside_loops and self._loop_depth):
                self.everything[path] = list(outs)
            if self._current is not None and self.loop_path is not None and path.startswith(self._inner):
                self._current.values[path[len(self._inner):]] = list(outs)
            return outs

        @property
        def _inner(self) -> str:
            return self.loop_path + ("/jaxpr/" if self._kind == "scan" else "/body_jaxpr/")

        def scan(self, params: dict, invals: list, path: str) -> list:
            if path != self.loop_path:
                self._loop_depth += 1
                try:
                    return super().scan(params, invals, path)
                finally:
                    self._loop_depth -= 1
            self._kind = "scan"
            body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
            consts, carry, xs = invals[:nc], list(invals[nc:nc + ncarry]), invals[nc + ncarry:]
            length = params["length"]
            order = range(length - 1, -1, -1) if params["reverse"] else range(length)
            ys: list = [None] * length
            for j in order:
                inputs = list(consts) + carry + [x[j] for x in xs]
                self._current = Step(j, inputs, [], {})
                outs = self.eval(body.jaxpr, body.consts, inputs, path + "/jaxpr/")
                self._current.outputs = list(outs)
                self.steps.append(self._current)
                self._current = None
                carry, ys[j] = outs[:ncarry], outs[ncarry:]
            stacked = []
            for k, v in enumerate(body.jaxpr.outvars[ncarry:]):
                stacked.append(self.np.stack([y[k] for y in ys]) if length else
                               self.np.zeros((0,) + tuple(v.aval.shape), v.aval.dtype))
            return carry + stacked

        def while_(self, params: dict, invals: list, path: str) -> list:
            if path != self.loop_path:
                self._loop_depth += 1
                try:
                    return super().while_(params, invals, path)
                finally:
                    self._loop_depth -= 1
            self._kind = "while"
            cond, body = params["cond_jaxpr"], params["body_jaxpr"]
            cn, bn = params["cond_nconsts"], params["body_nconsts"]
            cconsts, bconsts, carry = invals[:cn], invals[cn:cn + bn], list(invals[cn + bn:])
            limit = self.t["jaxpr_numpy"].MAX_WHILE_STEPS
            for j in range(limit):
                if not bool(self.eval(cond.jaxpr, cond.consts, list(cconsts) + carry, path + "/cond_jaxpr/")[0]):
                    return carry
                inputs = list(bconsts) + carry
                self._current = Step(j, inputs, [], {})
                carry = self.eval(body.jaxpr, body.consts, inputs, path + "/body_jaxpr/")
                self._current.outputs = list(carry)
                self.steps.append(self._current)
                self._current = None
            raise self.t["jaxpr_numpy"].Unsupported("a while loop ran more than %d steps" % limit)

    return Recorder


_recorders: dict[int, type] = {}


def _Recorder(t: dict, is_own: Callable, loop_path: str | None) -> Any:
    cls = _recorders.get(id(t["jaxpr_numpy"]))
    if cls is None:
        cls = _recorders[id(t["jaxpr_numpy"])] = _recorder_class(t)
    return cls(t, is_own, loop_path)


# ----------------------------------------------------------------------------------------------------
# Finding a value among those a program holds

def find_scaled(candidates: list[dict[str, list[Any]]], targets: list[Any], rtol: float = 2e-3,
                atol: float = 1e-6, scale_free: bool = True) -> list[tuple[str, int, float]]:
    """Where the program holds ``targets``: ``(path, k, c)`` for every equation result (``path``'s ``k``-th)
    that equals ``c * targets[j]`` in ``candidates[j]`` for every j (one per step, or one evaluation), with one
    constant ``c != 0`` for all j (``c == 1`` unless ``scale_free``). Shapes may differ by axes of length one (a
    ``(1, H)`` result holds an ``(H,)`` target). Each target must move (a target that is zero everywhere
    matches nothing: any zero would hold it)."""
    if not candidates or len(candidates) != len(targets):
        return []
    want = [np.asarray(t, dtype=np.float64) for t in targets]
    top = max((float(np.max(np.abs(w))) for w in want if w.size), default=0.0)
    norm = sum(float(np.sum(w * w)) for w in want)
    if not np.isfinite(norm) or norm <= 0:
        return []
    found = []
    for path, outs in candidates[0].items():
        for k in range(len(outs)):
            got = []
            for j, values in enumerate(candidates):
                o = values.get(path)
                a = _float(o[k]) if o is not None and k < len(o) else None
                if a is None or a.size != want[j].size:
                    break
                got.append(a.reshape(want[j].shape))
            else:
                c = 1.0
                if scale_free:
                    c = sum(float(np.sum(g * w)) for g, w in zip(got, want)) / norm
                    if not np.isfinite(c) or abs(c) < 1e-12:
                        continue
                if all(_close(g, c * w, rtol, atol, c, top) for g, w in zip(got, want)):
                    found.append((path, k, c))
    return found


def find_per_step(steps: list[Step], oracles: list[Any], rtol: float = 2e-3, atol: float = 1e-6,
                  scale_free: bool = True) -> list[dict[str, Any]]:
    """Where a loop's body holds, at each step, one of ``oracles`` (say the gradient of each microbatch), up
    to one constant factor: ``{"path", "k", "c", "order"}`` for each body result (``path``'s ``k``-th, relative
    to the body) that equals ``c * oracles[m_j]`` at every step j, where ``order = [m_0, m_1, ...]`` lists the
    oracle each step holds. The caller decides what order it asks for (every oracle once, in any order; or
    step j holding oracle j). Vectorised over the oracles: each body result costs a few array operations."""
    if not steps or not oracles:
        return []
    want = np.stack([np.asarray(o, dtype=np.float64).reshape(-1) for o in oracles])  # (M, size)
    size = want.shape[1]
    # rounding is relative to the values being summed, not to one result: a share whose gradient is near zero
    # while the others' are not is compared at the others' scale
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    norms = np.sum(want * want, axis=1)
    usable = np.isfinite(norms) & (norms > 0)
    found = []
    for path, k in _candidates(steps, size):
        rows = _stacked(steps, path, k)  # (steps, size)
        if rows is None:
            continue
        first = rows[0]
        with np.errstate(all="ignore"):
            if scale_free:
                cs = np.where(usable, want @ first / np.where(usable, norms, 1.0), np.nan)
            else:
                cs = np.where(usable, 1.0, np.nan)
            bounds = atol * np.maximum(1.0, np.abs(cs)) + rtol * np.abs(cs) * scale
            err0 = np.max(np.abs(first[None, :] - cs[:, None] * want), axis=1)
            ok = np.isfinite(cs) & (np.abs(cs) >= 1e-12) & (err0 <= bounds)
            starts = np.flatnonzero(ok)  # each oracle step 0 could hold, in order
            if not starts.size:
                continue
            c = cs[starts]
            diffs = np.max(np.abs(rows[None, 1:, None, :] - c[:, None, None, None] * want[None, None, :, :]),
                           axis=3)  # (starts, steps - 1, oracles)
        diffs = np.where(np.isfinite(diffs), diffs, np.inf)
        nearest = np.argmin(diffs, axis=2)
        held = np.take_along_axis(diffs, nearest[:, :, None], axis=2)[:, :, 0] <= bounds[starts][:, None]
        for i in np.flatnonzero(np.all(held, axis=1))[:1]:
            found.append({"path": path, "k": k, "c": float(c[i]),
                          "order": [int(starts[i])] + [int(m) for m in nearest[i]]})
    return found


def _candidates(steps: list[Step], size: int) -> list[tuple[str, int]]:
    return [(path, k) for path, outs in steps[0].values.items() for k, o in enumerate(outs)
            if int(getattr(o, "size", np.size(o))) == size]


def _stacked(steps: list[Step], path: str, k: int) -> np.ndarray | None:
    """The body result ``path``'s ``k``-th at every step, as float64 rows (None when a step lacks it or it is
    not numeric); converted once per step and kept on the step (``find_per_step`` is asked many times)."""
    rows = []
    for step in steps:
        cache = step.__dict__.setdefault("_floats", {})
        key = (path, k)
        if key not in cache:
            outs = step.values.get(path)
            a = _float(outs[k]) if outs is not None and k < len(outs) else None
            cache[key] = None if a is None else a.reshape(-1)
        a = cache[key]
        if a is None:
            return None
        rows.append(a)
    if len({a.size for a in rows}) != 1:
        return None
    return np.stack(rows)


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, c: float,
           scale: float | None = None) -> bool:
    """Equal within ``rtol`` of the targets' largest magnitude (``scale``, times ``c``; by default this target's)
    and ``atol``: two float32 computations of one gradient differ by rounding relative to its large entries,
    not to each entry (a near-zero entry of a gradient whose others are large carries their rounding)."""
    if got.shape != want.shape:
        return False
    top = abs(c) * scale if scale is not None else (float(np.max(np.abs(want))) if want.size else 0.0)
    diff = float(np.max(np.abs(got - want))) if want.size else 0.0
    return bool(np.isfinite(diff) and diff <= atol * max(1.0, abs(c)) + rtol * top)


def find_batched(values: dict[str, list[Any]], oracle: Any, rtol: float = 2e-3, atol: float = 1e-6,
                 scale_free: bool = True) -> list[dict[str, Any]]:
    """Where the program holds all of ``oracle`` at once (say every example's gradient: shape ``(B,) + leaf``):
    ``{"path", "k", "axis", "c"}`` for each result with an axis of length B such that, with that axis first and
    the rest read in order, it equals ``c * oracle``."""
    want = np.asarray(oracle, dtype=np.float64)
    if want.ndim == 0 or not want.size:
        return []
    b = want.shape[0]
    norm = float(np.sum(want * want))
    if not np.isfinite(norm) or norm <= 0:
        return []
    top = float(np.max(np.abs(want)))
    found = []
    for path, outs in values.items():
        for k, value in enumerate(outs):
            a = _float(value)
            if a is None or a.size != want.size or a.ndim == 0:
                continue
            for axis in [i for i, n in enumerate(a.shape) if n == b]:
                g = np.moveaxis(a, axis, 0).reshape(want.shape)
                c = float(np.sum(g * want)) / norm if scale_free else 1.0
                if np.isfinite(c) and abs(c) >= 1e-12 and _close(g, c * want, rtol, atol, c, top):
                    found.append({"path": path, "k": k, "axis": axis, "c": c})
                    break
    return found


def _float(value: Any) -> np.ndarray | None:
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001 - a JAX-only value (a PRNG key): not a number
        return None
    return a.astype(np.float64) if a.dtype.kind in "fiub" else None


def run_experiments(t: dict, slug: Any, program: Program) -> dict[str, Any]:
    """Every experiment of the problem on ``program``: ``{name: result}``, or ``{name: {"error": why}}`` for an
    experiment that could not run (the check then says the property could not be established: never passed)."""
    table = experiments_of(slug) or {}
    out: dict[str, Any] = {}
    for name, fn in table.items():
        try:
            out[name] = fn(program)
        except Exception as exc:  # noqa: BLE001 - reported to the check, which fails closed
            out[name] = {"error": "%s: %s" % (type(exc).__name__, str(exc).split("\n")[0][:200])}
    return out

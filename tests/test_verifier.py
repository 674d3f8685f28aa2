"""The verifier's rebuild of a traced program (``grader/verifier/``, issue 23).

For every problem's reference, baseline and every file of its gallery: trace the entry function here on
the first visible example, write the program as data (through JSON, as it would travel), rebuild it from
the data alone, and check that the rebuilt program is the traced one: the same XLA module (so XLA computes
the same bits), and, for the references and baselines on every visible example and for every gallery file
of the problems in low precision (float16, bfloat16), the same output bytes when both are compiled and
run. A program with a primitive that is not JAX's own, or a host callback, must be refused with its
reason. Then the refusals of forged data, one by one.

Gallery files are trusted here (the repository's own), so they are traced in this process; in grading,
the child traces and the verifier rebuilds.
"""
from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import asdict
from typing import Any

import numpy as np
import pytest

import problems
from grader.learner import child
from grader.boundary.program import NotPlainTree, ProgramEncoder, interpret_pallas, tree_data
from grader.verifier.rebuild import CALLBACKS, DROPPED, NotRebuildable, allowed_primitives, rebuild, run_program

jax = pytest.importorskip("jax")
from jax.extend import core as jcore  # noqa: E402

PROBLEMS = list(problems.registry().values())
LOW_PRECISION = ("float16", "bfloat16")


@pytest.fixture(scope="module")
def t() -> dict[str, Any]:
    return child.import_jax()


def _low_precision(problem: problems.Problem) -> bool:
    text = (problem.folder / "problem.toml").read_text() + problem.reference
    return any(d in text for d in LOW_PRECISION)


def _trace(t: dict, problem: problems.Problem, code: str, inputs: dict) -> tuple[Any, list] | None:
    """The traced program and its flat inputs, or None when the code does not trace (a gallery file whose
    verdict is a runtime error)."""
    specs = [asdict(a) for a in problem.args]
    static = tuple(i for i, s in enumerate(specs) if s.get("static"))
    module = type(sys)("solution")
    module.__file__ = child.SOLUTION_FILE
    try:
        exec(compile(code, child.SOLUTION_FILE, "exec"), module.__dict__)
        args = child.build_args(t, inputs, specs)
        closed = jax.make_jaxpr(module.__dict__[problem.entry], static_argnums=static)(*args)
    except Exception:  # noqa: BLE001
        return None
    return closed, jax.tree_util.tree_leaves([a for i, a in enumerate(args) if i not in static])


def _primitives(closed: Any) -> list:
    out, stack = [], [closed.jaxpr]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            out.append(e.primitive)
            for v in e.params.values():
                for x in (v if isinstance(v, (tuple, list)) else (v,)):
                    if isinstance(x, jcore.ClosedJaxpr):
                        stack.append(x.jaxpr)
                    elif isinstance(x, jcore.Jaxpr):
                        stack.append(x)
    return out


def _travel(closed: Any) -> dict:
    """The program as the child would send it: written, then through JSON."""
    own = {id(p) for p in allowed_primitives().values()}
    return json.loads(json.dumps(ProgramEncoder(own_primitives=own).program(closed)))


def _module_text(closed: Any, flat: list) -> str:
    text = jax.jit(jcore.jaxpr_as_fun(closed)).lower(*flat).as_text()
    return re.sub(r"^module @\S+", "module", text)


def _run(closed: Any, flat: list) -> list[np.ndarray]:
    return [np.asarray(o) for o in jax.jit(jcore.jaxpr_as_fun(closed))(*flat)]


def _same_bytes(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
                                    for x, y in zip(a, b))


@pytest.mark.slow
@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.slug for p in PROBLEMS])
def test_every_program_rebuilds_exactly_or_is_refused(problem, t):
    own = {id(p) for p in allowed_primitives().values()}
    files = [("reference", problem.reference, True)]
    if (problem.folder / "baseline.py").exists():
        files.append(("baseline", (problem.folder / "baseline.py").read_text(), True))
    files += [(str(s.path.relative_to(problem.folder)), s.path.read_text(), _low_precision(problem))
              for s in problem.gallery()]
    rebuilt_count = ran = 0
    for name, code, run in files:
        examples = problem.examples if name in ("reference", "baseline") else problem.examples[:1]
        for example in examples:
            traced = _trace(t, problem, code, example.inputs)
            if traced is None:
                assert name not in ("reference", "baseline"), f"{name} does not trace"
                continue
            traced_closed, flat = traced
            closed = interpret_pallas(traced_closed)  # as the traced program runs on a CPU (the rebuild's mode)
            prims = _primitives(closed)
            foreign = [p.name for p in prims if id(p) not in own]
            callbacks = [p.name for p in prims if p.name in CALLBACKS]
            data = _travel(traced_closed)  # what the child sends: the program as traced
            if foreign or callbacks:
                with pytest.raises(NotRebuildable) as refused:
                    rebuild(data)
                assert ("not one of JAX's own" if foreign else "calls back into Python") in str(refused.value), name
                continue
            rebuilt = rebuild(data)
            rebuilt_count += 1
            if "expect: runtime_error" in code and problem.tpu_compile:
                # a kernel TPU interpret mode may stop (a block outside its array, on this case or another):
                # both sides stop, or both give the same bytes
                outs = []
                for fn, prog in ((run_program, rebuilt), (_run, closed)):
                    try:
                        outs.append(fn(prog, flat))
                    except Exception as exc:  # noqa: BLE001 - the fault is the outcome compared
                        outs.append(type(exc))
                stopped = [isinstance(o, type) for o in outs]
                assert stopped[0] == stopped[1] and (stopped[0] or _same_bytes(*outs)), f"{name}: {outs}"
                continue
            if DROPPED & {p.name for p in prims}:
                run = True  # left out of the rebuilt module (the child's printed text is the output)
            else:
                assert _module_text(rebuilt, flat) == _module_text(closed, flat), f"{name}: a different XLA module"
            if run:
                assert _same_bytes(run_program(rebuilt, flat), _run(closed, flat)), f"{name}: different output bytes"
                ran += 1
    assert rebuilt_count >= 2 and ran >= len(problem.examples)


def _printed(closed: Any) -> str:
    text, before = str(closed), None
    while text != before:  # innermost first: `<function f.<locals>.g at 0x...>`
        text, before = re.sub(r"<[^<>]*>", "", text), text
    # what only names a function (a custom rule is a stand-in in the rebuilt program, a sub-program's debug
    # name is the verifier's), and NumPy scalars the data writes as plain numbers: none reaches XLA
    text = re.sub(r"\b(name|jvp|fwd|bwd|jvp_jaxpr_fun|fwd_jaxpr_thunk|out_trees)=\S+", r"\1=", text)
    text = re.sub(r"np\.(?:u?int\d+|float\d+|bool_?)\(([^()]*)\)", r"\1", text)
    # and where the printer broke a line: it breaks an equation's parameters by the printed width, which the
    # NumPy scalars above lengthen (`broadcast_dimensions=(np.int64(1), np.int64(2))` wraps, `(1, 2)` does not)
    return re.sub(r"\[ ", "[", re.sub(r" \]", "]", re.sub(r"\s+", " ", text)))


@pytest.mark.slow
@pytest.mark.parametrize("problem", PROBLEMS, ids=[p.slug for p in PROBLEMS])
def test_every_mutant_of_the_reference_rebuilds(problem, t):
    """Every mutant of the reference (``grader/mutation``: what a learner's slip makes of a right answer) that
    JAX traces is rebuilt, as the same program, unless it calls back into Python or uses a primitive of its own:
    a program the verifier cannot take is the grader's gap, found here before a learner meets it. (Traced on
    the first visible example and compared as printed; the gallery test above compares XLA modules.)"""
    from grader.mutation.mutate import mutants
    own = {id(p) for p in allowed_primitives().values()}
    example = problem.examples[0]
    rebuilt_count = 0
    for mutant in mutants(problem.reference):
        traced = _trace(t, problem, mutant.source, example.inputs)
        if traced is None:
            continue
        traced_closed, _ = traced
        closed = interpret_pallas(traced_closed)  # as the traced program runs on a CPU (the rebuild's mode)
        prims = _primitives(closed)
        if any(id(p) not in own or p.name in CALLBACKS for p in prims):
            continue
        try:
            rebuilt = rebuild(_travel(traced_closed))  # what the child sends: the program as traced
        except NotRebuildable as exc:
            raise AssertionError(f"{mutant.id} ({mutant.description}) cannot be rebuilt: {exc}") from None
        if not DROPPED & {p.name for p in prims}:
            assert _printed(rebuilt) == _printed(closed), f"{mutant.id} ({mutant.description}): a different program"
        rebuilt_count += 1
    assert rebuilt_count >= 1


# ----------------------------------------------------------------------------------------------------
# Output structures as data: plain containers only.

def test_plain_output_structures_are_data():
    value = {"loss": 1.0, "grads": [(2.0, None), {7: 3.0}], "empty": ()}
    data = tree_data(jax.tree_util.tree_structure(value))
    assert json.loads(json.dumps(data)) == data
    assert data == {"dict": [["empty", {"tuple": []}],
                             ["grads", {"list": [{"tuple": ["*", {"none": True}]}, {"dict": [[7, "*"]]}]}],
                             ["loss", "*"]]}


class _Box:
    def __init__(self, value):
        self.value = value


def test_a_learner_pytree_class_is_named_without_running_its_unflatten():
    calls = []
    jax.tree_util.register_pytree_node(
        _Box, lambda b: ((b.value,), None), lambda aux, kids: calls.append(kids) or _Box(kids[0]))
    with pytest.raises(NotPlainTree, match="_Box"):
        tree_data(jax.tree_util.tree_structure({"out": _Box(1.0)}))
    from collections import namedtuple
    with pytest.raises(NotPlainTree, match="Pair"):
        tree_data(jax.tree_util.tree_structure(namedtuple("Pair", "a b")(1.0, 2.0)))
    assert calls == []


# ----------------------------------------------------------------------------------------------------
# Forged data is refused, never run.

def _scan_program() -> tuple[Any, dict, np.ndarray]:
    def f(x):
        def step(c, row):
            return c * 0.5 + row, jnp.cos(c)
        c, ys = jax.lax.scan(step, jnp.zeros(x.shape[1:], x.dtype), x)
        return c, ys.sum()
    import jax.numpy as jnp
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    closed = jax.make_jaxpr(f)(x)
    return closed, _travel(closed), x


def test_a_scan_round_trips_to_the_same_numbers():
    closed, data, x = _scan_program()
    assert _same_bytes(run_program(rebuild(data), [x]), _run(closed, [x]))


def _eqns(data: dict) -> list:
    return data["jaxpr"]["eqns"]


@pytest.mark.parametrize("forge, reason", [
    (lambda d: _eqns(d)[0].update(p="foreign:scan"), "not one of JAX's own"),
    (lambda d: _eqns(d)[0].update(p="pure_callback"), "calls back into Python"),
    (lambda d: _eqns(d)[0].update(p="no_such_primitive"), "not one of JAX's own"),
    (lambda d: _eqns(d)[0].update(p="ffi_call"), "native code"),
    (lambda d: _eqns(d)[-1]["in"].__setitem__(0, {"v": 999}), "not defined before"),
    (lambda d: _eqns(d)[-1]["out"][0].update(shape=[5]), "not a well-typed program"),
    (lambda d: _eqns(d)[-1]["out"][0].update(dtype="int32"), "not a well-typed program"),
    (lambda d: _eqns(d)[0]["params"].update(length=7), "not a well-typed program"),
    (lambda d: _eqns(d)[0]["params"].update(jaxpr={"unknown": "function"}), "cannot rebuild"),
    (lambda d: _eqns(d)[0]["params"].update(length={"pickle": "cos\nsystem\n(S'true'\ntR."}), "unknown kind"),
    (lambda d: _eqns(d)[0]["params"].update(unroll={"callable": "function"}), "Python function"),
    (lambda d: d["jaxpr"]["invars"][0].update(dtype="__import__('os')"), "not named"),
    (lambda d: d.update(format=0), "format"),
    (lambda d: d["contexts"][0].update(xla_metadata=[["a", "b"]]), "XLA metadata"),
])
def test_forged_data_is_refused(forge, reason):
    _, data, _ = _scan_program()
    forged = copy.deepcopy(data)
    forge(forged)
    with pytest.raises(NotRebuildable, match=re.escape(reason)):
        rebuild(forged)


def test_forged_constant_bytes_are_refused():
    import jax.numpy as jnp
    closed = jax.make_jaxpr(lambda x: x + jnp.asarray(np.arange(3, dtype=np.float32)) * 2)(np.ones(3, np.float32))
    data = _travel(closed)
    const = next(c for c in _walk_arrays(data))
    const["b64"] = const["b64"][:-4]
    with pytest.raises(NotRebuildable, match="bytes"):
        rebuild(data)


def _walk_arrays(x: Any):
    if isinstance(x, dict):
        if "array" in x and isinstance(x["array"], dict):
            yield x["array"]
        for v in x.values():
            yield from _walk_arrays(v)
    elif isinstance(x, list):
        for v in x:
            yield from _walk_arrays(v)


def test_a_learner_primitive_under_jax_s_name_runs_jax_s_primitive():
    """The child's data is the learner's: a primitive of its own sent under JAX's name ``sin`` is rebuilt as
    JAX's ``sin``, never as the learner's rule; with parameters JAX's ``sin`` does not take, it is refused."""
    import jax.numpy as jnp
    fake = jcore.Primitive("sin")
    fake.def_impl(lambda x, **params: x * 0 + 42.0)
    fake.def_abstract_eval(lambda x, **params: x)
    x = np.linspace(0, 1, 4, dtype=np.float32)
    for params, refused in (({"accuracy": None}, False), ({}, True), ({"accuracy": None, "total": 3}, True)):
        closed = jax.make_jaxpr(lambda v: fake.bind(v, **params))(x)
        data = json.loads(json.dumps(ProgramEncoder().program(closed)))  # written without the foreign marker
        if refused:
            with pytest.raises(NotRebuildable):
                run_program(rebuild(data), [x])
        else:
            assert np.array_equal(run_program(rebuild(data), [x])[0], np.asarray(jax.jit(jnp.sin)(x)))

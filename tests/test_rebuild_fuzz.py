"""Property-based fuzzing of the verifier's rebuild (issue 29): whatever program data the learner's process
sends, the rebuild ends cleanly (a program, or ``NotRebuildable`` with a sentence) and quickly, never with
another exception (which the server would report as its own failure) and never in exponential time.

Two generators: program data drawn from the format's own grammar (``grader/boundary/program.py``'s
docstring: PROGRAM, SUB, JAXPR, EQN, ATOM, AVAL and the tagged parameter values), and real traced programs
(the references of two problems, written by the child's encoder) with one part replaced by drawn data.
A few examples each keep the suite's cost to seconds (``max_examples``); a failing example is shrunk and
printed by Hypothesis.
"""
from __future__ import annotations

import copy
import json
import sys
import time
from dataclasses import asdict
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import problems  # noqa: E402
from grader.boundary.program import FORMAT, ProgramEncoder  # noqa: E402
from grader.learner import child  # noqa: E402
from grader.verifier.rebuild import NotRebuildable, Rebuilder, _tree, compile_program  # noqa: E402

jax = pytest.importorskip("jax")

BOUND_S = 5.0
"""The most one rebuild (and compile, when it rebuilt) may take: a loaded CI machine's margin over the
milliseconds it takes."""
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

DTYPES = ["float32", "int32", "bool", "bfloat16", "uint8", "key", "float64", "not_a_dtype", "", 3]
PRIMITIVES = ["add", "mul", "sin", "neg", "reduce_sum", "broadcast_in_dim", "scan", "jit", "pjit", "cond",
              "while", "convert_element_type", "dot_general", "pure_callback", "debug_print", "foreign:mine",
              "ffi_call", "custom_jvp_call", "nonexistent", 7, None]
ENUMS = ["Precision", "GatherScatterMode", "AxisType", "RoundingMethod", "Nope"]

json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 70), 2 ** 70), st.floats(allow_nan=False),
                        st.text(max_size=12))


def _values(depth: int = 3) -> st.SearchStrategy:
    """Parameter VALUEs: plain JSON and every tag of the format, nested."""
    leaf = st.one_of(
        json_scalar,
        st.fixed_dictionaries({"float": st.sampled_from(["nan", "inf", "-inf", "1e999", "x"])}),
        st.fixed_dictionaries({"dtype": st.sampled_from(DTYPES)}),
        st.fixed_dictionaries({"enum": st.sampled_from(ENUMS), "name": st.sampled_from(["DEFAULT", "HIGHEST", "x"])}),
        st.fixed_dictionaries({"sub": st.integers(-2, 4)}),
        st.fixed_dictionaries({"unknown": st.text(max_size=8)}),
        st.fixed_dictionaries({"callable": st.text(max_size=8)}),
        st.fixed_dictionaries({"unspecified": st.just(True)}),
        st.fixed_dictionaries({"policy": st.sampled_from(["custom", "nothing_saveable", "x"])}),
    )
    if depth == 0:
        return leaf
    inner = _values(depth - 1)
    return st.one_of(
        leaf,
        st.fixed_dictionaries({"tuple": st.lists(inner, max_size=4)}),
        st.fixed_dictionaries({"list": st.lists(inner, max_size=4)}),
        st.fixed_dictionaries({"frozenset": st.lists(inner, max_size=4)}),
        st.fixed_dictionaries({"treedef": _trees(3)}),
        st.fixed_dictionaries({"pspec": st.lists(inner, max_size=3)}),
        st.fixed_dictionaries({"struct": st.sampled_from(["GatherDimensionNumbers", "Nope"]),
                               "fields": st.dictionaries(st.text(max_size=6), inner, max_size=3)}),
        st.fixed_dictionaries({"abstract_mesh": st.fixed_dictionaries({
            "sizes": st.lists(st.integers(-1, 3), max_size=2), "names": st.lists(st.text(max_size=2), max_size=2),
            "types": st.lists(st.sampled_from(["Auto", "Explicit", "x"]), max_size=2)})}),
        st.lists(inner, max_size=3),
    )


def _trees(depth: int) -> st.SearchStrategy:
    """TREE: ``"*"``, ``{"none": true}``, ``{"dict": [[key, TREE]...]}``, ``{"list": [...]}``, ``{"tuple": [...]}``."""
    leaf = st.one_of(st.just("*"), st.just({"none": True}), json_scalar)
    if depth == 0:
        return leaf
    inner = _trees(depth - 1)
    return st.one_of(leaf,
                     st.fixed_dictionaries({"dict": st.lists(st.tuples(st.one_of(st.integers(0, 2), st.sampled_from(["1", "a"])),
                                                                       inner).map(list), max_size=3)}),
                     st.fixed_dictionaries({"list": st.lists(inner, max_size=3)}),
                     st.fixed_dictionaries({"tuple": st.lists(inner, max_size=3)}))


avals = st.fixed_dictionaries({"shape": st.lists(st.integers(-1, 4), max_size=3), "dtype": st.sampled_from(DTYPES),
                               "weak": st.one_of(st.booleans(), st.none())},
                              optional={"drop": st.booleans(), "kind": st.sampled_from(["ShapedArray", "AbstractRef"]),
                                        "impl": st.sampled_from(["threefry2x32", "rbg", "x"])})
atoms = st.one_of(st.fixed_dictionaries({"v": st.integers(-1, 6)}),
                  st.fixed_dictionaries({"lit": st.one_of(st.fixed_dictionaries({"number": json_scalar}),
                                                           st.fixed_dictionaries({"bool": st.booleans()})),
                                         "aval": avals}))
eqns = st.fixed_dictionaries({"p": st.sampled_from(PRIMITIVES), "in": st.lists(atoms, max_size=3),
                              "out": st.lists(avals, max_size=2),
                              "params": st.dictionaries(st.sampled_from(["jaxpr", "axes", "length", "precision",
                                                                         "branches", "x"]), _values(), max_size=3),
                              "ctx": st.integers(-1, 1)},
                             optional={"stack": st.lists(st.tuples(st.sampled_from(["s", "t", "q"]),
                                                                   st.text(max_size=6)).map(list), max_size=3),
                                       "effects": st.lists(st.fixed_dictionaries({"kind": st.text(max_size=8)}),
                                                           max_size=2)})
jaxprs = st.fixed_dictionaries({"constvars": st.lists(avals, max_size=1), "invars": st.lists(avals, max_size=3),
                                "eqns": st.lists(eqns, max_size=4), "outvars": st.lists(atoms, max_size=2)})


@pytest.fixture(scope="module")
def context() -> dict:
    """A real equation context (``CONTEXT``), as the child's encoder writes it."""
    closed = jax.make_jaxpr(lambda x: x + 1.0)(1.0)
    return ProgramEncoder().program(closed)["contexts"][0]


def _programs(context: dict) -> st.SearchStrategy:
    subs = st.one_of(st.fixed_dictionaries({"open": jaxprs}),
                     st.fixed_dictionaries({"closed": st.fixed_dictionaries({"consts": st.just([]), "jaxpr": jaxprs})}),
                     _values(1))
    return st.fixed_dictionaries({"format": st.sampled_from([FORMAT, FORMAT, 0]),
                                  "contexts": st.one_of(st.just([context]), st.lists(_values(1), max_size=1)),
                                  "subprograms": st.lists(subs, max_size=3), "consts": st.just([]),
                                  "jaxpr": jaxprs})


def _clean(data: Any) -> None:
    """The property: a rebuilt program (which then compiles, or is refused with a sentence), or
    ``NotRebuildable`` with a sentence, in bounded time."""
    started = time.monotonic()
    try:
        closed = Rebuilder().program(json.loads(json.dumps(data)))
    except NotRebuildable as exc:
        assert str(exc).strip(), "a refusal without a sentence"
    else:
        flat = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]
        try:
            compile_program(closed, flat)
        except NotRebuildable as exc:
            assert str(exc).strip()
    assert time.monotonic() - started < BOUND_S


def test_grammar_data_rebuilds_or_is_refused_cleanly(context):
    @FUZZ
    @given(data=_programs(context))
    def run(data):
        _clean(data)
    run()


def test_output_structures_rebuild_or_are_refused_cleanly():
    @FUZZ
    @given(tree=_trees(4))
    def run(tree):
        try:
            jax.tree_util.tree_structure(_tree(tree, 0))
        except NotRebuildable as exc:
            assert str(exc).strip()
        except TypeError:
            # keys JAX cannot sort (1 and "1"): ``verify`` turns this into the sentence too
            pass
    run()


def _real_programs() -> list[dict]:
    """The child's encoding of two references, traced on their first example."""
    t = child.import_jax()
    out = []
    for slug in ("exponential-moving-average-with-scan", "gradient-accumulation-with-scan"):
        problem = problems.get(slug)
        specs = [asdict(a) for a in problem.args]
        static = tuple(i for i, s in enumerate(specs) if s.get("static"))
        module = type(sys)("solution")
        exec(compile(problem.reference, child.SOLUTION_FILE, "exec"), module.__dict__)
        args = child.build_args(t, problem.examples[0].inputs, specs)
        closed = jax.make_jaxpr(module.__dict__[problem.entry], static_argnums=static)(*args)
        out.append(json.loads(json.dumps(ProgramEncoder(t["policies"], t["own_primitives"]).program(closed))))
    return out


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON value that a mutation may replace."""
    found = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            found += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _paths(v, path + (i,))
    return found


def test_mutated_real_programs_rebuild_or_are_refused_cleanly():
    programs_ = _real_programs()
    for data in programs_:
        _clean(data)  # unmutated, they rebuild

    @FUZZ
    @given(which=st.integers(0, len(programs_) - 1), pick=st.integers(0, 10 ** 9),
           replacement=st.one_of(_values(2), avals, atoms, st.just("__delete__")))
    def run(which, pick, replacement):
        data = copy.deepcopy(programs_[which])
        paths = [p for p in _paths(data) if p]
        path = paths[pick % len(paths)]
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if replacement == "__delete__":
            del parent[path[-1]]
        else:
            parent[path[-1]] = replacement
        _clean(data)
    run()


def test_the_two_malformed_parameters_of_issue_29_are_refused_with_a_sentence():
    data = _real_programs()[0]
    eqn = data["jaxpr"]["eqns"][0]
    for bad in ({"frozenset": [{"list": [1, 2]}]}, {"treedef": {"dict": [[1, "*"], ["1", "*"]]}}):
        eqn["params"]["extra"] = bad
        with pytest.raises(NotRebuildable, match="could not be rebuilt|not a well-typed|unknown kind"):
            Rebuilder().program(copy.deepcopy(data))


def test_a_55_level_fan_out_of_shared_sub_programs_is_refused_in_linear_time(context):
    """Sub-program k calls sub-program k-1 twice: 2**55 equations run, 110 written. Counted per use, the
    rebuild refuses it before JAX's checker walks the uses."""
    aval = {"shape": [], "dtype": "float32", "weak": False}
    subs = [{"closed": {"consts": [], "jaxpr": {"constvars": [], "invars": [aval], "outvars": [{"v": 1}], "eqns": [
        {"p": "sin", "in": [{"v": 0}], "out": [aval], "params": {"accuracy": None}, "ctx": 0}]}}}]
    for k in range(1, 55):
        call = lambda src, dst: {"p": "jit", "in": [{"v": src}], "out": [aval], "ctx": 0, "params": {  # noqa: E731
            "jaxpr": {"sub": k - 1}, "in_shardings": {"tuple": [{"unspecified": True}]},
            "out_shardings": {"tuple": [{"unspecified": True}]}, "in_layouts": {"tuple": [None]},
            "out_layouts": {"tuple": [None]}, "donated_invars": {"tuple": [False]}, "ctx_mesh": None,
            "name": "f", "keep_unused": False, "inline": False, "compiler_options_kvs": {"tuple": []}}}
        subs.append({"closed": {"consts": [], "jaxpr": {"constvars": [], "invars": [aval], "outvars": [{"v": 2}],
                                                        "eqns": [call(0, 1), call(1, 2)]}}})
    data = {"format": FORMAT, "contexts": [context], "subprograms": subs, "consts": [],
            "jaxpr": subs[-1]["closed"]["jaxpr"]}
    started = time.monotonic()
    with pytest.raises(NotRebuildable, match="counting a shared sub-program at each of its uses"):
        Rebuilder().program(data)
    assert time.monotonic() - started < 2.0


def test_the_child_counts_a_shared_sub_program_at_each_use():
    """The same fan-out traced by JAX (each ``jax.jit`` traced once, called twice per level): the child's
    bound on equations refuses it at once, before anything walks the program."""
    t = child.import_jax()
    f = jax.jit(jax.numpy.sin)
    for _ in range(55):
        f = jax.jit(lambda x, g=f: g(g(x)))
    closed = jax.make_jaxpr(f)(1.0)
    started = time.monotonic()
    with pytest.raises(child.AnswerTooLarge, match="more than"):
        child.AnswerBudget().take_program(t, closed)
    assert time.monotonic() - started < 2.0

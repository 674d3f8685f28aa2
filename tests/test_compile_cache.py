"""The verifier compiles a program once per data and input types (``rebuild.compile_program``, issue 33).

The rebuild is a function of the program's data alone, so programs rebuilt from equal data share one compile;
any difference in the data (a constant's bytes, a primitive's parameter) or in the inputs' types is a compile
of its own: a cached compile must never stand in for another program."""
from __future__ import annotations

import json

import numpy as np
import pytest

from grader.boundary.program import ProgramEncoder
from grader.verifier import rebuild as rb

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _data(fn, *args):
    return json.loads(json.dumps(ProgramEncoder().program(jax.make_jaxpr(fn)(*args))))


def test_equal_data_shares_one_compile_and_computes_the_same():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    data = _data(lambda a: jnp.sin(a) @ a.T, x)
    first, second = rb.rebuild(data), rb.rebuild(json.loads(json.dumps(data)))
    assert first is not second
    c1, c2 = rb.compile_program(first, [x]), rb.compile_program(second, [x])
    assert c1 is c2
    np.testing.assert_allclose(rb.run_program(second, [x + 1], c2)[0], np.sin(x + 1) @ (x + 1).T, rtol=1e-6)


def test_other_constants_other_parameters_or_other_types_compile_anew():
    x = np.ones((4,), np.float32)
    base = rb.rebuild(_data(lambda a: a * np.float32(2.0) + np.arange(4, dtype=np.float32), x))
    other_const = rb.rebuild(_data(lambda a: a * np.float32(2.0) + np.arange(1, 5, dtype=np.float32), x))
    other_param = rb.rebuild(_data(lambda a: jax.lax.cumsum(a * np.float32(2.0), reverse=True), x))
    compiled = rb.compile_program(base, [x])
    assert rb.compile_program(other_const, [x]) is not compiled
    np.testing.assert_array_equal(rb.run_program(other_const, [x])[0], x * 2 + np.arange(1, 5))
    assert rb.compile_program(other_param, [x]) is not compiled
    assert rb.compile_program(other_param, [np.ones((5,), np.float32)]) is not rb.compile_program(other_param, [x])


def test_a_program_rebuilt_without_its_data_is_compiled_uncached():
    x = np.ones((3,), np.float32)
    closed = jax.make_jaxpr(lambda a: a + 1)(x)  # not from data: no digest, so never shared
    assert rb.compile_program(closed, [x]) is not rb.compile_program(closed, [x])


def _answer(problem, code):
    """The child's answer for ``code``'s Run, traced in this process as the child does (data only)."""
    import copy

    from grader.grading.grade import build_jobs
    from grader.learner import child
    t = child.import_jax()
    t["child"] = child
    job, trusted = build_jobs(problem, code, examples_only=True)
    result = child.run_job(t, copy.deepcopy(job))
    assert result["status"] == "ok"
    return t, trusted, result


def test_probes_are_measured_once_per_program_and_case(monkeypatch):
    """The probes of a program on a case are kept (``verify._measured``): the same answer again reads them back,
    equal to a fresh measurement; another program, or the same program on other inputs, is measured anew."""
    import copy

    import problems
    from grader.learner import child
    from grader.verifier import verify as vf

    problem = problems.get("rematerialized-mlp-block")
    calls: list = []
    measure = child.measure
    monkeypatch.setattr(child, "measure", lambda *a: calls.append(a[1]) or measure(*a))
    monkeypatch.setattr(vf, "_probes", type(vf._probes)())
    t, trusted, result = _answer(problem, problem.reference)
    first = vf.verify(t, copy.deepcopy(trusted), copy.deepcopy(result))
    measured = len(calls)
    assert measured >= 1
    again = vf.verify(t, copy.deepcopy(trusted), copy.deepcopy(result))
    assert len(calls) == measured, "the same programs on the same cases: nothing measured again"
    assert [tr["probes"] for tr in again["traces"]] == [tr["probes"] for tr in first["traces"]]
    monkeypatch.setattr(vf, "_probes", type(vf._probes)())
    fresh = vf.verify(t, copy.deepcopy(trusted), copy.deepcopy(result))
    assert json.loads(json.dumps([tr["probes"] for tr in fresh["traces"]])) == \
        json.loads(json.dumps([tr["probes"] for tr in again["traces"]])), "kept probes equal measured ones"
    moved = copy.deepcopy(trusted)
    for case in moved["cases"]:  # the same program (same shapes) on other numbers
        case["args"] = json.loads(json.dumps(case["args"]).replace("0.", "0.5"))
    before = len(calls)
    vf.verify(t, moved, copy.deepcopy(result))
    assert len(calls) > before, "other inputs: measured again"
    _, _, other = _answer(problem, problem.reference.replace("jnp.tanh(", "jnp.sin("))
    before = len(calls)
    vf.verify(t, copy.deepcopy(trusted), other)
    assert len(calls) > before, "another program: measured again"

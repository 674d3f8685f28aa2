"""What the submitted source says (``grader/toolkit/source.py``): public JAX transformations under any
spelling, with their lines, where they sit and what they are applied to; read with ``ast``, nothing run."""
from __future__ import annotations

import pytest

from grader.toolkit.source import read


def calls(code: str) -> list[tuple[str, int, set[str], set[str]]]:
    return [(c.api, c.line, set(c.inside), set(c.applied_to)) for c in read(code).calls]


def test_value_and_grad_inside_the_scanned_step_under_any_spelling():
    for head, vg, scan in [("import jax", "jax.value_and_grad", "jax.lax.scan"),
                           ("import jax as j", "j.value_and_grad", "j.lax.scan"),
                           ("from jax import value_and_grad as vg, lax", "vg", "lax.scan"),
                           ("from jax.lax import scan\nimport jax", "jax.value_and_grad", "scan"),
                           ("import equinox as eqx\nimport jax", "eqx.filter_value_and_grad", "jax.lax.scan")]:
        code = (f"{head}\n"
                "def loss(p, b):\n    return (p * b).sum()\n"
                "def step(c, b):\n"
                f"    l, g = {vg}(loss)(c, b)\n"
                "    return c + g, l\n"
                "def f(p, xs):\n"
                f"    return {scan}(step, p, xs)\n")
        facts = read(code)
        vg_calls = facts.of("value_and_grad")
        assert len(vg_calls) == 1 and vg_calls[0].inside == {"scan"}, (head, calls(code))
        assert facts.inside(("scan",), "value_and_grad") == vg_calls
        assert "value_and_grad" in facts.of("scan")[0].applied_to


def test_a_grad_function_made_outside_the_loop_and_called_in_it_is_inside():
    """t5x's style: `grad_fn = jax.value_and_grad(loss_fn)` once, called in the `fori_loop` body."""
    code = ("import jax\n"
            "def train(params, batch, n):\n"
            "    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)\n"
            "    def body(i, state):\n"
            "        (l, _), g = grad_fn(params, batch, i)\n"
            "        return jax.tree.map(lambda a, b: a + b, state, g)\n"
            "    return jax.lax.fori_loop(0, n, body, params)\n")
    facts = read(code)
    assert facts.of("value_and_grad")[0].inside == {"fori_loop"}
    assert not facts.of("map")  # jax.tree.map is no lax.map


def test_differentiating_through_the_scan_is_applied_to_not_inside():
    code = ("import jax\n"
            "def total(p, xs):\n"
            "    return jax.lax.scan(lambda c, b: (c + (p * b).sum(), None), 0.0, xs)[0]\n"
            "def f(p, xs):\n"
            "    return jax.grad(total)(p, xs)\n")
    facts = read(code)
    (g,) = facts.of("grad")
    assert g.inside == frozenset() and "scan" in g.applied_to
    assert facts.of("scan")[0].inside == {"grad"}


def test_forward_over_reverse_and_its_look_alikes():
    fwd = read("import jax\nfrom functools import partial\n"
               "def hvp(w, v):\n    return jax.jvp(partial(jax.grad(loss), x=1), (w,), (v,))\n")
    assert fwd.applied("jvp", {"grad"})
    lin = read("import jax\ndef hvp(w, v):\n    g, f = jax.linearize(jax.grad(loss), w)\n    return f(v)\n")
    assert lin.applied("linearize", {"grad"})
    gradfn = read("import jax\ndef hvp(w, v):\n    gf = jax.grad(loss)\n    return jax.jvp(gf, (w,), (v,))\n")
    assert gradfn.applied("jvp", {"grad"})
    lam = read("import jax\n@jax.jit\ndef hvp(p, v):\n    grad_fn = lambda p: jax.grad(loss)(p, 1)\n"
               "    return jax.jvp(grad_fn, (p,), (v,))\n")
    assert lam.applied("jvp", {"grad"}) and lam.of("grad")[0].inside == {"jvp"}
    part = read("import jax, functools\ndef hvp(w, v):\n    gf = functools.partial(jax.grad(loss), x=1)\n"
                "    return jax.jvp(gf, (w,), (v,))\n")
    assert part.applied("jvp", {"grad"})
    rev = read("import jax\ndef hvp(w, v):\n    return jax.grad(lambda w: jax.jvp(loss, (w,), (v,))[1])(w)\n")
    assert not rev.applied("jvp", {"grad"}) and rev.applied("grad", {"jvp"})
    by_hand = read("import jax.numpy as jnp\ndef hvp(w, v):\n    return w @ v\n")
    assert not by_hand.calls


def test_decorators_and_bound_names_count():
    code = ("import jax\nimport flax.linen as nn\nfrom functools import partial\n"
            "@partial(jax.checkpoint, policy=jax.checkpoint_policies.dots_saveable)\n"
            "def block(p, x):\n    return x\n"
            "@jax.custom_vjp\ndef q(w):\n    return w\n"
            "remat = nn.remat(block)\n"
            "def loss(p):\n    return q(block(p, 1)) + remat(p, 1)\n"
            "def f(p):\n    return jax.value_and_grad(loss)(p)\n")
    facts = read(code)
    (vg,) = facts.of("value_and_grad")
    assert {"checkpoint", "custom_vjp"} <= vg.applied_to
    assert {c.line for c in facts.of("checkpoint")} == {4, 10}
    assert all("value_and_grad" in c.inside for c in facts.of("checkpoint"))


def test_names_of_other_libraries_or_the_learner_own_do_not_count():
    code = ("import numpy as np\nimport torch\n"
            "def grad(f):\n    return f\n"
            "def f(x):\n    return grad(np.sum)(x), torch.autograd.grad(x, x), x.grad\n")
    assert read(code).calls == []


@pytest.mark.parametrize("code", ["def f(:\n", "x = (" * 200 + ")" * 200])
def test_a_source_that_does_not_parse_has_no_facts(code):
    facts = read(code)
    assert facts.calls == [] and not facts.parsed or facts.calls == []


def test_the_note_names_each_call_and_line():
    facts = read("import jax\n\n\ndef f(w):\n    return jax.value_and_grad(g)(w)\n")
    assert facts.note(facts.of("value_and_grad")) == "read from your source: `jax.value_and_grad` on line 5"
    assert facts.note([]) == "read from your source: no such call"


def test_a_call_whose_result_is_thrown_away_is_not_counted():
    """JAX drops such a call from the traced program, so a check that finds no marks must not take the
    call's word for the gradients."""
    for line in ["    _ = jax.grad(loss)(p)", "    jax.grad(loss)(p)", "    g, _ = jax.value_and_grad(loss)(p)"]:
        facts = read(f"import jax\ndef f(p):\n{line}\n    return p\n")
        assert facts.of("grad", "value_and_grad") == [] and len(facts.unused("grad", "value_and_grad")) == 1
    for line in ["    g = jax.grad(loss)(p)\n    return g", "    return jax.grad(loss)(p)",
                 "    out['g'] = jax.grad(loss)(p)\n    return out", "    return f2(jax.grad(loss)(p))"]:
        facts = read(f"import jax\ndef f(p, out):\n{line}\n")
        assert len(facts.of("grad")) == 1, line


def test_a_vjp_counts_only_when_its_pullback_is_called_and_used():
    head = "import jax\ndef f(w, ct):\n    out, pullback = jax.vjp(g, w)\n"
    assert read(head + "    (grad,) = pullback(ct)\n    return out, grad\n").of("vjp")
    assert read(head + "    return out, pullback(ct)[0]\n").of("vjp")
    assert not read(head + "    _ = pullback(ct)\n    return out, ct\n").of("vjp")
    assert not read(head + "    return out, ct\n").of("vjp")
    assert read("import jax\ndef f(w, ct):\n    return jax.vjp(g, w)[1](ct)\n").of("vjp")


def test_a_partial_of_a_transformation_bound_to_a_name_is_that_transformation():
    """flax's nn.remat style: `remat = functools.partial(jax.checkpoint, policy=...)`, then `remat(f)`."""
    code = ("import functools, jax\n"
            "remat = functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.dots_saveable)\n"
            "def f(p, x):\n    block = remat(g)\n"
            "    return jax.value_and_grad(lambda p: block(p, x).sum())(p)\n")
    facts = read(code)
    assert [c.spelled for c in facts.of("checkpoint")] == ["jax.checkpoint", "remat"]
    assert "checkpoint" in facts.of("value_and_grad")[0].applied_to


def test_a_pullback_handed_on_counts():
    code = "import jax\ndef f(w, basis):\n    _, pullback = jax.vjp(g, w)\n    return jax.vmap(pullback)(basis)\n"
    assert read(code).of("vjp")

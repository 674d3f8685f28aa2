"""The source policy (``grader/grading/source_policy.py``): code that reaches into the grader, the interpreter's
internals or JAX's private modules is refused before it runs, with its line and what to use instead; no right
answer of any gallery is refused."""
from __future__ import annotations

from pathlib import Path

import pytest

import problems
from grader.grading import source_policy
from grader.grading.grade import grade

ROOT = Path(__file__).resolve().parents[1]
GALLERY = sorted(p for folder in (ROOT / "problems").iterdir() if not folder.name.startswith("_")
                 for p in [*folder.glob("*.py"), *(folder / "submissions").rglob("*.py")]
                 if p.name in ("reference.py", "baseline.py", "starter.py") or "submissions" in p.parts)
REFUSED_ATTACKS = {
    "cross_process_calls", "ctypes_clone", "ctypes_openat", "ctypes_raw_socket", "forged_result_with_token",
    "io_uring", "memfd_raw_syscall", "monkeypatch_internals", "monkeypatch_json_and_builtins", "ptrace_parent",
    "read_host_proc", "segfault", "sysv_shared_memory", "unshare_namespace",
}
"""The attack files the policy refuses (the rest reach only what the sandbox stops: files, sockets, processes)."""


def test_no_gallery_file_reference_baseline_or_starter_is_refused():
    assert len(GALLERY) > 700
    refused = {str(p.relative_to(ROOT)): r.message() for p in GALLERY if (r := source_policy.check(p.read_text()))}
    assert not refused


def test_the_attacks_it_refuses_and_every_forgery():
    attacks = {p.stem for p in (ROOT / "tests" / "attacks").glob("*.py") if source_policy.check(p.read_text())}
    assert attacks == REFUSED_ATTACKS
    for path in (ROOT / "tests" / "forgeries").glob("*.py"):
        assert source_policy.check(path.read_text()) is not None, path.name


REFUSED = [
    ("import jax._src.core as core", 1, "private module of jax"),
    ("from jax._src import source_info_util", 1, "private module of jax"),
    ("import jax\nwith jax._src.source_info_util.transform_name_stack('jvp'):\n    pass", 2, "private"),
    ("from jax import _src", 1, "private"),
    ("import sys\nf = sys._getframe(1)", 2, "sys._getframe"),
    ("import sys\nm = sys.modules['grader']", 2, "sys.modules"),
    ("from sys import _getframe", 1, "_getframe"),
    ("from sys import modules", 1, "modules"),
    ("import inspect\nf = inspect.currentframe()", 2, "inspect.currentframe"),
    ("def g():\n    yield 1\nx = g().gi_frame", 3, "gi_frame"),
    ("try:\n    1/0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame.f_back", 4, "__traceback__"),
    ("import gc\n", 1, "import gc"),
    ("import ctypes.util", 1, "ctypes"),
    ("import importlib\nm = importlib.import_module('jax' + '._src')", 1, "importlib"),
    ("m = __import__('j' + 'ax')", 1, "__import__"),
    ("import jaxplay_payload", 1, "payload"),
    ("from grader.learner import child", 1, "grader"),
    ("import problems", 1, "problems"),
    ("x = ().__class__.__bases__[0].__subclasses__()", 1, "__bases__"),
    ("def f():\n    pass\ng = f.__globals__", 3, "__globals__"),
    ("def f():\n    pass\nc = f.__code__", 3, "__code__"),
    ("b = __builtins__", 1, "__builtins__"),
    ("x = getattr(object, '__subclasses__')", 1, "__subclasses__"),
    ("import sys as S\nm = S.modules", 2, "sys.modules"),
    ("eval('1')", 1, "eval"),
    ("exec('import gc')", 1, "exec"),
    ("g = globals()", 1, "globals"),
    ("from . import sibling", 1, "relative import"),
]


@pytest.mark.parametrize("code,line,words", REFUSED, ids=[c for c, _, _ in REFUSED])
def test_each_reach_is_refused_with_its_line(code, line, words):
    refusal = source_policy.check(code)
    assert refusal is not None
    assert refusal.line == line and words in refusal.message(), refusal.message()
    assert refusal.message().startswith(f"Line {line}: ")


ALLOWED = [
    "import jax\nimport jax.numpy as jnp\nfrom jax import lax, grad as g\n",
    "from jax.extend.core import Primitive\nfrom jax.interpreters import mlir\n",
    "def _loss(p):\n    return p\n_step = _loss\n",
    "class M:\n    def __init__(self):\n        self.n = 0\n    def __call__(self, x):\n        self.n += 1\n        return x\n",
    "import dataclasses\nd = {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}\n",
    "x = getattr(cfg, 'lr', 0.1)\nsetattr(cfg, 'lr', 0.2)\n",
    "import functools, inspect, sys, os\nsig = inspect.signature(f)\nprint(sys.version, file=sys.stderr)\n",
    "import numpy as np, optax_like as optax\n",
    "n: int = 3\nimport jax\njax.custom_vjp\njax.checkpoint\njax.tree_util.tree_map(lambda a: a, {})\n",
    "def f(x):\n    return x.__class__.__name__, type(x).__name__\n",
    "this is not python (",  # the child reports the syntax error with its line, as before
    # honest spellings the policy once refused (issue 41): a name built at run time, a dunder asked about,
    # a class filling its own attributes
    "import jax.numpy as jnp\nbits = 32\ndtype = getattr(jnp, 'float' + str(bits))\n",
    "class Net:\n    def layer(self, i):\n        return getattr(self, f'dense_{i}')\n",
    "def is_array(x):\n    return hasattr(x, '__array__')\n",
    "class Config:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n",
]


@pytest.mark.parametrize("code", ALLOWED)
def test_ordinary_python_is_let_through(code):
    assert source_policy.check(code) is None


def test_grade_refuses_before_anything_runs_and_off_lets_it_run(monkeypatch):
    problem = problems.get("gradient-accumulation-with-scan")
    code = problem.reference + "\nimport gc  # for nothing\n"
    line = code.count("\n")

    ran = []

    def runner(job, limits):
        ran.append(job)
        raise RuntimeError("not run in this test")

    report = grade(problem, code, examples_only=True, run=runner)
    assert not ran
    assert report.verdict.value == "runtime_error" and report.error_kind.value == "submission"
    assert report.message.startswith(f"Line {line}: `import gc`")
    assert all(c.message == "not run" for c in report.cases)
    assert all(not r.passed and "refused" in r.message for r in report.requirements)
    monkeypatch.setattr(source_policy, "ENABLED", False)
    grade(problem, code, examples_only=True, run=runner)
    assert len(ran) == 1 and ran[0]["code"] == code


@pytest.mark.parametrize("policy", [True, False], ids=["policy-on", "policy-off"])
def test_code_the_grader_cannot_read_is_refused_with_a_sentence(monkeypatch, policy):
    """Thousands of nested operators exhaust Python's parser on the trusted side: the submission is refused as
    the learner's (a Runtime Error saying why), never run, never passed, never the grader's own error, with
    the policy on or off."""
    monkeypatch.setattr(source_policy, "ENABLED", policy)
    problem = problems.get("gradient-accumulation-with-scan")
    code = problem.reference + "\nDEEP = " + "-" * 3000 + "1\n"
    ran = []
    report = grade(problem, code, examples_only=True, run=lambda job, limits: ran.append(job))
    assert not ran
    assert report.verdict.value == "runtime_error" and report.error_kind.value == "submission", report.message
    assert "nested too deeply" in report.message and "runs none it cannot read" in report.message

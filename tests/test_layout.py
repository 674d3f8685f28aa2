"""The folder shows the architecture (issue 23): every grader module imports on its own, no import circle joins
grader's modules at import time, and problems' checks import from the grader only ``grader.toolkit``."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEARNER_SIDE = {"reference.py", "baseline.py", "starter.py", "cases.py"}
"""Files of a problem that run as learner code in the child, never imported by the grader."""


def grader_modules() -> dict[str, Path]:
    """Dotted name -> file of every module under ``grader/``."""
    out = {}
    for path in sorted((ROOT / "grader").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports_at_import_time(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The grader modules ``name`` imports while it is imported: its top-level imports (class bodies, ``if``
    and ``try`` blocks included), not those inside functions, nor under ``if TYPE_CHECKING``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    stack: list[ast.AST] = list(ast.parse(path.read_text()).body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack += node.orelse
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                found = [".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in modules]
                out.update(found[:1])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    out.add(f"{base}.{alias.name}")
                elif base in modules:
                    out.add(base)
        stack.extend(ast.iter_child_nodes(node))
    out.discard(name)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_circle_and_passes_a_chain():
    assert find_cycle({"checker": {"grade"}, "grade": {"workers"}, "workers": {"checker"}}) == [
        "checker", "grade", "workers", "checker"]
    assert find_cycle({"cli": {"workers"}, "worker": {"workers"}, "workers": set()}) is None


def test_no_import_circle_among_graders_modules_at_import_time():
    modules = grader_modules()
    graph = {name: imports_at_import_time(name, path, modules) for name, path in modules.items()}
    assert graph["grader.grading.grade"] >= {"grader.grading.workers", "grader.grading.checker"}  # it reads them
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


@pytest.mark.slow
def test_every_grader_module_imports_on_its_own_in_a_fresh_interpreter():
    names = [n for n in grader_modules() if n != "grader.__main__"]  # __main__ runs the command line
    driver = ("import importlib, json, os, sys, traceback\n"
              "failed = {}\n"
              "for name in json.loads(sys.argv[1]):\n"
              "    r, w = os.pipe()\n"
              "    pid = os.fork()\n"
              "    if pid == 0:\n"
              "        os.close(r)\n"
              "        try:\n"
              "            importlib.import_module(name)\n"
              "            os._exit(0)\n"
              "        except BaseException:\n"
              "            os.write(w, traceback.format_exc()[-1500:].encode())\n"
              "            os._exit(1)\n"
              "    os.close(w)\n"
              "    message = os.read(r, 4096).decode()\n"
              "    os.close(r)\n"
              "    if os.waitpid(pid, 0)[1] != 0:\n"
              "        failed[name] = message or 'exited'\n"
              "print(json.dumps(failed))\n")
    done = subprocess.run([sys.executable, "-c", driver, json.dumps(names)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert not failed, "\n".join(f"{name}: {why}" for name, why in failed.items())


def problem_code() -> list[Path]:
    """The problems' code the grader imports: checks and their helpers (galleries and learner-side files not)."""
    return sorted(p for p in (ROOT / "problems").glob("*/**/*.py")
                  if "submissions" not in p.parts and p.name not in LEARNER_SIDE)


def test_problems_checks_import_from_the_grader_only_the_toolkits_public_names():
    import grader.toolkit as toolkit
    public = set(toolkit.__all__)
    assert all(hasattr(toolkit, n) for n in public)
    files = problem_code()
    assert ROOT / "problems" / "_template" / "checks.py" in files and len(files) > 20
    wrong = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                wrong += [f"{where}: import {a.name}" for a in node.names
                          if a.name == "grader" or a.name.startswith("grader.")]
            elif isinstance(node, ast.ImportFrom) and node.module and (
                    node.module == "grader" or node.module.startswith("grader.")):
                if path.name == "experiments.py" and node.module == "grader.verifier.experiments":
                    continue  # a problem's experiments run in the verifier, on its helpers (find_per_step...)
                if node.module != "grader.toolkit":
                    wrong.append(f"{where}: from {node.module} import ...")
                else:
                    wrong += [f"{where}: {a.name} is not in grader.toolkit.__all__" for a in node.names
                              if a.name not in public]
    assert not wrong, "\n".join(wrong)


def test_the_boundary_is_a_folder_of_its_own_that_both_sides_import():
    """Three places (issue 29): what runs in the learner's process (``grader/learner/``), what crosses
    (``grader/boundary/``), what decides (``grader/verifier/``, ``grader/grading/``, ``grader/toolkit/``). The
    format that crosses is loaded by the child as a companion the sandbox shows beside it, imported by the
    verifier, and imports nothing of the grader itself (the child loads it by path, with no package)."""
    from grader.grading.workers import CHILD
    from grader.sandbox import bwrap
    boundary = sorted(p.relative_to(ROOT / "grader" / "boundary").as_posix() for p in (ROOT / "grader" / "boundary").glob("*.py"))
    assert boundary == ["__init__.py", "program.py"]
    assert not (ROOT / "grader" / "learner" / "program.py").exists()
    shown = bwrap.companions(CHILD)
    assert ROOT / "grader" / "boundary" / "program.py" in shown
    assert bwrap.inside_path(CHILD, CHILD) == f"{bwrap.INSIDE}/learner/child.py"
    assert bwrap.inside_path(CHILD, ROOT / "grader" / "boundary" / "program.py") == f"{bwrap.INSIDE}/boundary/program.py"
    modules = grader_modules()
    assert "grader.boundary.program" in imports_at_import_time("grader.verifier.rebuild", modules["grader.verifier.rebuild"], modules)
    own = imports_at_import_time("grader.boundary.program", modules["grader.boundary.program"], modules)
    assert own == set(), own
    for node in ast.walk(ast.parse((ROOT / "grader" / "boundary" / "program.py").read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        assert all(n.split(".")[0] in ("base64", "dataclasses", "enum", "re", "numpy", "jax") for n in names), names

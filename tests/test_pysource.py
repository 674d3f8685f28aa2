"""Every parse of Python source on the trusted side goes through ``grader.pysource`` (one at a time per
process): CPython 3.11's ``ast`` fails one of two concurrent parses with ``SystemError: AST constructor
recursion depth mismatch`` (python/cpython#106905), seen here as a pool that could not start a worker while
another thread read a submission's source."""
from __future__ import annotations

import ast
import threading
from pathlib import Path

from grader import pysource

ROOT = Path(__file__).resolve().parents[1]
# The learner's process (grader/learner/) parses nothing of the grader's; problems' checks run one report at a
# time in the checker's single-threaded helper.
TRUSTED = [p for folder in ("grader", "pages", "classroom", "app.py") for p in (ROOT / folder).rglob("*.py")
           if "learner" not in p.relative_to(ROOT).parts]


def _raw_parses(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "ast"):
            continue
        if node.func.attr == "parse":
            lines.append(node.lineno)
        elif node.func.attr == "literal_eval" and not (node.args and isinstance(node.args[0], ast.Attribute)):
            lines.append(node.lineno)  # of text (a node's ``.value`` is already parsed)
    return lines


def test_the_trusted_side_parses_source_only_through_the_lock():
    found = {str(p.relative_to(ROOT)): lines for p in TRUSTED if p.name != "pysource.py"
             for lines in [_raw_parses(p)] if lines}
    assert not found, f"ast.parse / ast.literal_eval of text outside grader/pysource.py: {found}"


def test_parses_from_many_threads_at_once_all_succeed():
    source = "\n".join(f"def f{i}(x):\n    return [[(a, {{b: c for b in x}}) for a in x if a] for c in range({i})]"
                       for i in range(40))
    want = ast.dump(ast.parse(source))
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            try:
                if ast.dump(pysource.parse(source)) != want:
                    failures.append("a different tree")
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(repr(exc))
    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    assert pysource.literal_eval("((1, 2), (3,))") == ((1, 2), (3,))

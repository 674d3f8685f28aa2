"""Python source parsed on the grader's side: one parse at a time per process.

CPython 3.11's ``ast`` module keeps a single recursion counter while it turns a parse tree into Python
objects, and the interpreter may switch threads in the middle of that; two threads parsing at once then fail
one parse with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython#106905). A server
parses in many threads at once (a class's gradings read their source, a pool starts a worker, a page marks
the loops in the editor), so every parse on this side goes through one lock. A parse takes about a
millisecond; the lock costs nothing a learner could notice.
"""
from __future__ import annotations

import ast
import threading
from typing import Any

_LOCK = threading.Lock()


def parse(source: str, mode: str = "exec", **kwargs: Any) -> ast.AST:
    """``ast.parse``, alone in this process."""
    with _LOCK:
        return ast.parse(source, mode=mode, **kwargs)


def literal_eval(text: str) -> Any:
    """``ast.literal_eval`` of source text, its parse alone in this process."""
    return ast.literal_eval(parse(text, mode="eval"))

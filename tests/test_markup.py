"""Grader messages keep their own Markdown; learner text inside them is only text (``pages/views/markup.py``)."""
from __future__ import annotations

import re

import pytest

from grader.records import LEARNER_CLOSE, learner
from pages.views.markup import code_span, md, plain

HOSTILE = ["x` ![x](http://127.0.0.1:9/img)", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))",
           ":red[boom] $x^2$ :material/home:", "**bold** _it_ # h", "a\n\n    indented\n- item"]


def unescaped(markdown: str, chars: str) -> list[str]:
    """The characters of ``chars`` that stand unescaped outside code spans."""
    outside = re.sub(r"(`+).*?\1", "", markdown, flags=re.S)
    outside = re.sub(r"\\.", "", outside)
    return [c for c in chars if c in outside]


def test_grader_formatting_is_kept():
    out = md("runs *through* the rows, with `lax.scan` and **not** a loop.")
    assert "*through*" in out and "`lax.scan`" in out and "**not**" in out and out.endswith("loop\\.")


@pytest.mark.parametrize("text", HOSTILE)
def test_learner_text_is_literal_in_prose_and_in_code(text):
    prose = md(f"Your code raised {learner(text)}.")
    assert not unescaped(prose, "[]()<>!*_:$#-"), prose
    assert code_span(text.replace("\n", " ")) in prose, "learner text is a code span: nothing in it is parsed"
    in_code = md(f"key `{learner(text)}` is unexpected")
    assert unescaped(in_code, "[]()<>!*_:$") == []
    assert code_span(text.replace("\n", " ")) in in_code


@pytest.mark.parametrize("text", HOSTILE)
def test_unmarked_learner_text_can_only_become_code_or_emphasis(text):
    out = md(text)
    assert not unescaped(out, "[]()<>!:$#")


def test_learner_text_cannot_close_its_own_quotation():
    out = md(learner(f"a{LEARNER_CLOSE}[x](http://e/)"))
    assert not unescaped(out, "[]()")


def test_code_spans_fence_past_any_backtick_run():
    assert code_span("a``b") == "```a``b```"
    assert code_span("`x") == "`` `x ``"
    assert plain("<b>") == "\\<b\\>"

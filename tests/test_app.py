"""Headless tests of the pages with Streamlit's AppTest: they render, and Run/Submit grade what the editor holds.

AppTest cannot type into the Ace editor (a browser component), so tests replace ``pages.problem.editor`` with a
function that returns the text under test; the browser bridge is absent here, as without JavaScript, and the
tests mark the browser's saved progress as already loaded.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import problems

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py" / "streamlit_app.py")
GA = "gradient-accumulation-with-scan"
REMAT = "rematerialized-mlp-block"

# A Python loop over the microbatches: right numbers, no lax.scan (the problem's own known-bad submission).
PYTHON_LOOP = (Path(__file__).resolve().parents[1] / "problems" / "gradient-accumulation-with-scan" / "submissions"
               / "requirements_not_met" / "python_loop.py").read_text()


@pytest.fixture(autouse=True)
def editor_from_session_state(monkeypatch):
    """Stand in for the Ace editor: its value is ``jaxplay_test_code`` when a test sets it."""
    import streamlit as st

    import pages.problem as page

    def fake_editor(code: str, key: str, annotations=None) -> str:
        st.session_state["jaxplay_test_marks"] = list(annotations or [])  # what the gutter would show
        return st.session_state.get("jaxplay_test_code", code)
    monkeypatch.setattr(page, "editor", fake_editor)


def _run_until_done(at: AppTest, button: str, timeout: float = 120.0) -> AppTest:
    at.button(key=button).click().run()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if not any(w in i.value for i in at.info for w in ("Running", "Submitting", "Waiting for a free")):
            return at
        time.sleep(0.5)
    raise AssertionError("the grading did not finish in time")


def _problem_app(slug: str, code: str | None = None, tab: str | None = None) -> AppTest:
    """The problem page; ``tab`` opens a result tab (only the open one is built)."""
    at = AppTest.from_function(_problem_script, args=(slug,), default_timeout=60)
    if tab is not None:
        at.session_state[f"result-tabs-{slug}"] = tab
    at.session_state["jaxplay_progress"] = {"loaded": True, "code": {}, "solved": set(), "pending": {}, "waited": 0}
    if code is not None:
        at.session_state["jaxplay_test_code"] = code
    return at


def _problem_script(slug: str) -> None:
    from pages import problem  # the test process has the repository on sys.path (conftest.py)
    problem.render(slug)


def test_home_lists_every_problem_with_difficulty_and_summary():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    for p in problems.registry().values():
        assert p.summary in text
        assert p.difficulty in text
    links = [link.proto.label for link in at.get("page_link")]
    assert all(any(p.title in label for label in links) for p in problems.registry().values())


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [s.value for s in at.success] + [w.value for w in at.warning] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("slug", [GA, REMAT])
def test_problem_page_renders_statement_examples_requirements_and_constraints(slug):
    problem = problems.get(slug)
    at = _problem_app(slug).run()
    assert not at.exception
    assert at.title[0].value == problem.title
    text = _texts(at)
    assert problem.difficulty in text
    for req in problem.requirements:
        assert req.id in text
    for constraint in problem.constraints:
        assert constraint in text
    assert [b.label for b in at.button if b.key in ("run_btn", "submit_btn", "reset_btn")] == ["Run", "Submit", "Reset"]
    assert "Hint 1." not in text


def test_hints_are_revealed_one_at_a_time():
    problem = problems.get(GA)
    at = _problem_app(GA).run()
    at.button(key=f"hint-{GA}").click().run()
    text = _texts(at)
    assert "Hint 1." in text and "Hint 2." not in text
    at.button(key=f"hint-{GA}").click().run()
    assert "Hint 2." in _texts(at)
    assert len(problem.hints) >= 2


@pytest.mark.parametrize("slug", [GA, REMAT])
def test_run_with_the_reference_is_accepted_and_shows_the_jaxpr(slug):
    problem = problems.get(slug)
    at = _problem_app(slug, problem.reference).run()
    _run_until_done(at, "run_btn")
    assert not at.exception
    assert any("Accepted" in s.value for s in at.success), _texts(at)
    frame = at.dataframe[0].value
    assert set(frame["Case"]) == {c.name for c in problem.examples}
    assert (frame["Result"] == "✓ pass").all()
    assert not any("jaxplay-jaxpr" in h.proto.body for h in at.get("html")), "a closed tab is not built"
    at.session_state[f"result-tabs-{slug}"] = "jaxpr"
    at.run()
    assert any("jaxplay-jaxpr" in h.proto.body for h in at.get("html"))


def test_run_with_a_wrong_answer_says_wrong_answer_and_which_leaf():
    problem = problems.get(REMAT)
    wrong = problem.reference.replace('return {"loss": loss, "grads": grads}', 'return {"loss": 2 * loss, "grads": grads}')
    assert wrong != problem.reference
    at = _problem_app(REMAT, wrong).run()
    _run_until_done(at, "run_btn")
    assert any("Wrong Answer" in e.value for e in at.error), _texts(at)
    frame = at.dataframe[0].value
    loss_rows = frame[frame["Output"] == "loss"]
    assert (loss_rows["Result"] == "✗ fail").all()
    assert (frame[frame["Output"] == "grads.w1"]["Result"] == "✓ pass").all()


def test_run_with_a_python_loop_says_requirements_not_met():
    at = _problem_app(GA, PYTHON_LOOP).run()
    _run_until_done(at, "run_btn")
    assert any("Requirements Not Met" in w.value for w in at.warning), _texts(at)
    assert "one-scan" in _texts(at)


def test_a_python_loop_is_marked_in_the_gutter_at_its_for_line_as_soon_as_the_verdict_shows():
    """Issue 21: the marks come with the verdict (not one interaction later), and the message about a Python
    loop marks the loop's own line (20), not the matrix products in the function it calls (11-12)."""
    at = _problem_app(GA, PYTHON_LOOP).run()
    _run_until_done(at, "run_btn")
    marks = at.session_state["jaxplay_test_marks"]
    by_line = {}
    for mark in marks:
        by_line.setdefault(mark["row"] + 1, []).append(mark["text"])
    assert any(t.startswith("one-scan:") for t in by_line.get(20, [])), by_line
    assert not any(t.startswith("one-scan:") for line in (11, 12) for t in by_line.get(line, []))


def test_a_syntax_error_is_marked_in_the_gutter_in_the_same_script_run_as_its_verdict():
    at = _problem_app(REMAT, "import jax\n\ndef remat_mlp_block(params, x, y)\n    return 1\n").run()
    at.button(key="run_btn").click().run()
    deadline = time.monotonic() + 120
    while not any("Syntax Error" in e.value for e in at.error):
        assert time.monotonic() < deadline, _texts(at)
        time.sleep(0.2)
        at.run()
    marks = at.session_state["jaxplay_test_marks"]  # what the editor was given in the run that drew the verdict
    assert [(m["row"], m["type"]) for m in marks] == [(2, "error")], marks


def test_syntax_error_is_reported_with_its_traceback_as_text():
    at = _problem_app(REMAT, "def remat_mlp_block(params, x, y)\n    return <b>1</b>\n", tab="Console").run()
    _run_until_done(at, "run_btn")
    assert any("Syntax Error" in e.value for e in at.error), _texts(at)
    assert any("SyntaxError" in c.value for c in at.code)


def test_learner_text_in_messages_is_shown_literally():
    code = 'def remat_mlp_block(params, x, y):\n    raise ValueError("![pic](http://example.invalid/x.png) :red[boom] $x$")\n'
    at = _problem_app(REMAT, code).run()
    _run_until_done(at, "run_btn")
    banner = next(e.value for e in at.error if "Runtime Error" in e.value)
    # The exception text is a code span: nothing in it is parsed (link, image, directive, math, bare URL).
    assert "Example 1\\: `ValueError: ![pic](http://example.invalid/x.png) :red[boom] $x$`" in banner


def test_reference_jaxpr_appears_beside_yours_on_request():
    problem = problems.get(REMAT)
    at = _problem_app(REMAT, problem.reference, tab="jaxpr").run()
    _run_until_done(at, "run_btn")
    assert sum("jaxplay-jaxpr" in h.proto.body for h in at.get("html")) == 1
    at.toggle(key=f"ref-jaxpr-{REMAT}").set_value(True).run()
    assert sum("jaxplay-jaxpr" in h.proto.body for h in at.get("html")) == 2


def test_home_filters_by_difficulty_topic_and_progress_and_puts_easy_first():
    """Twenty problems: a newcomer's Easy problems are linked first; each filter narrows the list."""
    reg = problems.registry()
    at = AppTest.from_file(APP, default_timeout=60).run()
    easy = sorted(p.title for p in reg.values() if p.difficulty == "Easy")
    links = [link.proto.label for link in at.get("page_link")]
    assert easy and links[:len(easy)] == easy, "the Easy problems come first"
    by_title = {p.title: slug for slug, p in reg.items()}

    def cards() -> set[str]:  # a card's link has the title in bold; the start-here links do not
        return {by_title[label.strip("*")] for label in (link.proto.label for link in at.get("page_link"))
                if label.startswith("**")}
    assert cards() == set(reg)

    at.pills(key="home-difficulty").set_value(["Hard"]).run()
    assert cards() == {s for s, p in reg.items() if p.difficulty == "Hard"}
    topic = problems.get(GA).topic
    at.multiselect(key="home-topic").set_value([topic]).run()
    assert cards() == {s for s, p in reg.items() if p.difficulty == "Hard" and p.topic == topic}
    at.pills(key="home-difficulty").set_value([]).run()
    at.multiselect(key="home-topic").set_value([]).run()
    at.pills(key="home-status").set_value(["Solved"]).run()
    assert cards() == set()
    assert "No problem matches" in " ".join(i.value for i in at.info)


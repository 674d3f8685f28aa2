"""Page logic with Streamlit's AppTest: progress in the live status, a verdict restored after a reload, the
presenter layout, one quota per client across sessions, custom input errors replacing old results."""
from __future__ import annotations

import time

import pytest

from streamlit.testing.v1 import AppTest

import problems
from grader.records import Report, Verdict
from grader.sandbox import RunOutcome

REMAT = "rematerialized-mlp-block"


def _loaded(**extra) -> dict:
    state = {"loaded": True, "code": {}, "solved": set(), "pending": {}, "waited": 0}
    state.update(extra)
    return state


def _page(slug: str) -> None:
    from pages import problem
    problem.render(slug)


def test_the_live_status_shows_the_case_the_child_announced():
    from pages.services import runs
    from pages.views.run_status import status_line

    class ProgressPool:
        def run(self, job, limits, *, on_position=None, on_progress=None):
            on_progress("case 2 of 3: Example 2")
            return RunOutcome(result=None)

    seen = []
    runner = runs.get_runner(on_progress=seen.append)
    import unittest.mock as mock
    with mock.patch.object(runs, "shared_pool", return_value=ProgressPool()):
        runner = runs.get_runner(on_progress=seen.append)
        runner({"cases": []}, None)
    assert seen == ["case 2 of 3: Example 2"]

    future = runs.Future()
    future.set_running_or_notify_cancel()
    task = runs.Task(slug=REMAT, kind="submit", code="", started=time.monotonic(), future=future,
                     progress="case 7 of 17: Hidden <b>4</b> [x](http://e/)")
    line = status_line(task, "Submitting")
    assert "`case 7 of 17: Hidden <b>4</b> [x](http://e/)`" in line, "the child's words, as a code span: text"


def _saved_verdict_script() -> None:
    import json

    import streamlit as st

    from grader.records import Report, Verdict
    from pages import problem
    report = Report(file="<editor>", problem="rematerialized-mlp-block", verdict=Verdict.WRONG_ANSWER,
                    message="1 of 3 cases failed.", elapsed_s=0.4)
    saved = json.dumps({"kind": "run", "code": "mine", "report": report.to_json(marks=True)})
    st.session_state.setdefault("jaxplay_progress", {"loaded": True, "code": {"rematerialized-mlp-block": "mine"},
                                                     "solved": set(), "pending": {}, "waited": 0,
                                                     "verdicts": {"rematerialized-mlp-block": saved}})
    problem.render("rematerialized-mlp-block")


def test_a_saved_verdict_is_shown_again_after_a_reload(monkeypatch):
    import pages.problem as page
    monkeypatch.setattr(page, "editor", lambda code, key, annotations=None: code)
    at = AppTest.from_function(_saved_verdict_script, default_timeout=60).run()
    assert not at.exception
    assert any("Wrong Answer" in e.value and "1 of 3 cases failed" in e.value for e in at.error)
    assert any("kept in this browser" in c.value for c in at.caption)


def test_a_finished_run_is_saved_for_the_browser(monkeypatch):
    from pages.services import progress
    report = Report(file="<editor>", problem=REMAT, verdict=Verdict.ACCEPTED, message="ok")

    def script() -> None:
        import streamlit as st

        from pages.services import progress as pr
        st.session_state.setdefault("jaxplay_progress", {"loaded": True, "code": {}, "solved": set(), "pending": {},
                                                         "waited": 0})
        pr.save_verdict("rematerialized-mlp-block", "submit", "code", st.session_state["report"])
    at = AppTest.from_function(script)
    at.session_state["report"] = report
    at.run()
    state = at.session_state["jaxplay_progress"]
    assert "rematerialized-mlp-block" in state["pending"]["verdict"]
    assert progress.MAX_VERDICT_CHARS > len(state["pending"]["verdict"]["rematerialized-mlp-block"])


def test_a_saved_verdict_survives_a_rerun_that_cuts_off_its_write(monkeypatch):
    """A click's rerun can stop the script inside the write (before its message is sent), and the browser
    draws only the last of several quick runs: the verdict is written again until it has had time to land."""
    from pages.services import progress
    state = _loaded(verdicts={})
    monkeypatch.setattr(progress, "_state", lambda: state)
    sent: list[dict] = []

    def interrupted(changes):
        raise RuntimeError("rerun requested")  # what Streamlit raises there is its RerunException

    progress.save_verdict(REMAT, "run", "code", Report(file="<editor>", problem=REMAT, verdict=Verdict.ACCEPTED,
                                                           message="ok"))
    monkeypatch.setattr(progress, "write", interrupted)
    try:
        progress.flush()
    except RuntimeError:
        pass
    monkeypatch.setattr(progress, "write", sent.append)
    progress.flush()  # the next run: the verdict goes out
    progress.flush()  # and a run right after it (whose drawing replaces the last) repeats it
    assert [REMAT in w.get("verdict", {}) for w in sent] == [True, True]
    clock = time.monotonic() + progress.RESEND_S + 1
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock)
    progress.flush()
    assert sent[-1] == {}, "once it has had time to land, runs write nothing again"


def _presenter_script() -> None:
    import streamlit as st

    from pages import problem
    st.session_state.setdefault("jaxplay_progress", {"loaded": True, "code": {}, "solved": set(), "pending": {},
                                                     "waited": 0, "prefs": {"presenter": True, "font_size": 22,
                                                                            "keybinding": "Vim"}})
    problem.render("rematerialized-mlp-block")


def test_the_presenter_layout_folds_the_statement_above_a_full_width_editor(monkeypatch):
    import pages.problem as page
    monkeypatch.setattr(page, "editor", lambda code, key, annotations=None: code)
    at = AppTest.from_function(_presenter_script, default_timeout=60).run()
    assert not at.exception
    assert [e.label for e in at.expander][:1] == ["Problem statement"]
    assert not at.get("column") or all("statement-pane" not in str(c.proto) for c in at.get("column"))
    assert page.editor_height(22) > page.editor_height(14)


def _client_quota_script() -> None:
    import streamlit as st

    from pages.services import runs
    task = runs.start("p", "run", "a", lambda task: None)
    if task is not None:
        task.future.result(timeout=10)
        runs.current()
    st.write(f"started={task is not None}")
    st.write(runs.refusal() or "no refusal")


def test_a_new_session_from_the_same_client_is_over_the_same_quota(monkeypatch):
    """A reload is a new session: it must not bring a fresh quota (AppTest sessions are one local client)."""
    from pages.services import ratelimit, runs
    gate = ratelimit.RunGate(max_runs=1, window_s=60)
    monkeypatch.setattr(runs, "_gate", lambda: gate)
    first = AppTest.from_function(_client_quota_script).run()
    assert first.markdown[0].value == "started=True"
    second = AppTest.from_function(_client_quota_script).run()  # another session, same client
    assert second.markdown[0].value == "started=False"
    assert "runs in the last 60 seconds" in second.markdown[1].value
    assert set(gate._starts) == {"local"}, "counted by client, not by session"


def _custom_script() -> None:
    import streamlit as st

    from pages.views import result_tabs
    st.session_state.setdefault("jaxplay_progress", {"loaded": True, "code": {}, "solved": set(), "pending": {},
                                                     "waited": 0})
    result_tabs._custom(st.session_state["problem"])


def test_a_custom_input_error_replaces_the_last_result():
    at = AppTest.from_function(_custom_script, default_timeout=60)
    at.session_state["problem"] = problems.get(REMAT)
    at.run()
    key = f"custom-json-{REMAT}-Example 1"
    at.text_area(key=key).set_value("[1, 2]").run()
    at.button(key=f"custom-run-{REMAT}").click().run()
    assert any("JSON object" in e.value for e in at.error)
    assert not at.dataframe


@pytest.mark.parametrize("slug", sorted(problems.registry()))
def test_similar_problems_are_few_and_linked_by_technique_or_by_the_track(slug):
    """Issue 21: not 12 of the other 19; issue 32: not by a single shared tag. At most four, each using the same
    main technique, or listed as similar both ways, or listed here and sharing a tag; the same technique first."""
    from pages.views.statement import ranked_similar
    problem = problems.get(slug)
    shown = ranked_similar(problem)
    assert 0 < len(shown) <= 4 and problem not in shown
    mine = set(problem.tags) - {"JAX"}
    listed = {s.title for s in problem.similar}
    for other in shown:
        both = other.title in listed and problem.title in {s.title for s in other.similar}
        assert other.topic == problem.topic or both or (other.title in listed and mine & set(other.tags)), other.title
    same = [other.topic == problem.topic for other in shown]
    assert same == sorted(same, reverse=True), "the same main technique first"


def test_gradient_accumulation_is_followed_by_the_moving_average_and_the_optimizers():
    """Issue 32: it listed the straight-through estimator (sharing only "autodiff") and left these out."""
    from pages.views.statement import ranked_similar
    titles = [p.title for p in ranked_similar(problems.get("gradient-accumulation-with-scan"))]
    assert "Exponential Moving Average with Scan" in titles
    assert {"Global Norm Gradient Clipping", "AdamW from Scratch"} <= set(titles)
    assert "Straight-Through Estimator with Custom VJP" not in titles
    assert "Pairwise Distances with Nested vmap" not in [p.title for p in ranked_similar(problems.get("rematerialized-mlp-block"))]


BACKGROUND_SCRIPT = """
import threading, time
import streamlit as st
from pages.services import runs
gate = st.session_state.setdefault("gate", threading.Event())
if "cost" not in st.session_state:
    st.session_state["cost"] = runs.start("p", "cost", "code", lambda task: gate.wait(30) and "figures")
    st.session_state["grade"] = runs.start("p", "run", "code", lambda task: "verdict")
st.write(f"grading={runs.current() is not None} cost={runs.current_background('cost') is not None}")
"""


def test_a_cost_measurement_runs_beside_a_grading_and_never_holds_run_up():
    """Issue 32: the TPU plan took minutes with Run, Submit and Reset disabled; a measurement now has its own
    slot: a Run starts while it goes on, and ``runs.current()`` (what disables the buttons) never returns it."""
    at = AppTest.from_string(BACKGROUND_SCRIPT, default_timeout=30).run()
    cost, grade = at.session_state["cost"], at.session_state["grade"]
    assert cost is not None and grade is not None, "the Run was refused while a measurement was going"
    grade.future.result(timeout=10)
    at.run()
    assert at.markdown[0].value == "grading=False cost=True"
    at.session_state["gate"].set()
    cost.future.result(timeout=10)
    at.run()
    assert at.markdown[0].value == "grading=False cost=False"
    from pages.services import runs  # noqa: F401 - the finished measurement is this problem's last cost task
    assert at.session_state["jaxplay_tasks"]["last"][("p", "cost")] is cost

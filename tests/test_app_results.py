"""The pieces the pages draw with: record rendering, custom input, and the one-task-at-a-time rule."""
from __future__ import annotations

import json
import threading
import time
from unittest import mock

import pytest
from streamlit.testing.v1 import AppTest

import problems
from pages.views import custom_input, jaxpr_view, results, structure_view
from grader.records import CaseResult, Evidence, LeafResult, Report, RequirementResult, Verdict
from grader.grading.grade import grade
from grader.sandbox import Limits
from grader.grading.workers import run_job

GA = "gradient-accumulation-with-scan"
REMAT = "rematerialized-mlp-block"


def _report(**kw) -> Report:
    base = dict(file="<editor>", problem=REMAT, verdict=Verdict.WRONG_ANSWER, message="m")
    base.update(kw)
    return Report(**base)


def test_jaxpr_is_escaped_numbered_folded_and_opens_at_the_failing_evidence():
    text = ("{ lambda ; a:f32[]. let\n    b:f32[] = jit[\n      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n"
            "      name=<script>alert(1)</script>\n    ] a\n    e:f32[] = scan[\n      jaxpr={ lambda ; f:f32[]. let\n"
            "          g:f32[] = cos f\n        in (g,) }\n    ] b\n  in (e,) }")
    report = _report(jaxpr_text=text, requirements=[
        RequirementResult("one-jit", "t", True, "ok", [Evidence(path="0", primitive="jit", jaxpr_line=2, note="the jit")]),
        RequirementResult("one-scan", "t", False, "no", [Evidence(path="1", primitive="scan", jaxpr_line=6,
                                                                  source_line=7, note="<b>scan</b>")])])
    page = jaxpr_view.listing_html(text, jaxpr_view.marks(report.requirements), focus=jaxpr_view.focus_line(report))
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>scan" not in page
    assert 'data-focus="6"' in page, "opens at the first equation a failing requirement points at"
    assert '<div class="ln pass" data-line="2">' in page and '<div class="ln fail" data-line="6">' in page
    assert "✗ one-scan: &lt;b&gt;scan&lt;/b&gt; · your line 7" in page
    assert page.count('data-line="') == len(text.splitlines())
    assert jaxpr_view.folds(text.splitlines()) == {6: 8}, "a sub-program over several lines folds"
    assert page.count("<details open>") == 1 and page.count("</details>") == 1
    jumps = jaxpr_view.jumps_html(report.requirements)
    assert 'data-jaxpr-line="6"' in jumps and 'data-jaxpr-line="2"' in jumps
    # issue 32: "line 8 line 16" did not say whose lines: the traced program's, not the learner's code
    import re as _re
    shown = _re.sub(r"<[^>]+>", "", jumps)
    assert "one-jit → jaxpr line 2 " in shown and "one-scan → jaxpr line 6 " in shown, shown
    assert shown.count("traced program") == 2
    two = jaxpr_view.jumps_html([RequirementResult("r", "t", False, "no", [
        Evidence(path=str(n), primitive="add", jaxpr_line=n) for n in (34, 8, 16)])])
    assert "jaxpr lines 8, 16, 34 " in _re.sub(r"<[^>]+>", "", two)


def test_the_structure_picture_tags_each_requirement_in_its_region():
    from grader.records import Region
    tree = Region("program", "program", children=[
        Region("scan", "scan · length 2", path="3", eqns=2, primitives=["add"], children=[
            Region("forward", "forward pass (jvp)", path="3/jaxpr/0", span=2, eqns=2, primitives=["tanh"]),
            Region("backward", "backward pass (transpose)", path="3/jaxpr/2", span=1, eqns=1, primitives=["mul"])])])
    reqs = [RequirementResult("one-scan", "t", True, "ok", [Evidence(path="3", primitive="scan")]),
            RequirementResult("grad-inside-scan", "t", False, "no", [Evidence(path="3/jaxpr/2", primitive="mul")]),
            RequirementResult("odd \"id\"", "t", True, "ok", [])]
    marks = structure_view.evidence_marks(tree, reqs)
    assert marks[id(tree.children[0])] == [("one-scan", True)]
    assert marks[id(tree.children[0].children[1])] == [("grad-inside-scan", False)]
    source = structure_view.dot(tree, reqs, dark=True)
    assert source.count("subgraph cluster_") == 3 and "✗ grad-inside-scan" in source and "#e03131" in source
    assert 'label="scan · length 2"' in source


def test_cases_table_puts_the_result_first_and_marks_the_worst_entry():
    report = _report(cases=[
        CaseResult("Example 1", False, False, "loss: got 2", {"x": [1.0]},
                   [LeafResult("loss", False, "loss: got 2", expected=[1.0, 2.0], got=[1.0, 2.5], max_abs_err=0.5),
                    LeafResult("grads.w", True, "ok", expected=[[0.1234567]], got=[[0.12345671]], max_abs_err=1e-8)]),
        CaseResult("Hidden 1", True, True, "ok", None, [LeafResult("loss", True, "ok")])])
    frame = results.cases_frame(report)
    assert list(frame.columns)[:2] == ["Result", "Case"]
    bad = frame[frame["Output"] == "loss"].iloc[0]
    assert bad["Worst entry"] == "[1]: got 2.5, expected 2.0"
    # issue 32: at 1400 px "Worst entry", last but one, was cut off: it now follows the output it is about
    columns = list(frame.columns)
    assert columns.index("Worst entry") < columns.index("Expected") < columns.index("Got")
    assert results.worst_width(frame) >= results.text_px(bad["Worst entry"]) + 16
    # issue 46: the message followed Expected and Got and ran off the right edge; it now follows the worst entry
    assert columns.index("Worst entry") < columns.index("Message") < columns.index("Expected")
    good = frame[frame["Output"] == "grads.w"].iloc[0]
    assert good["Expected"] == good["Got"] == "[[0.123457]]", "expected and got at the same precision"
    hidden = frame[frame["Case"] == "Hidden 1"].iloc[0]
    assert "None" not in " ".join(map(str, hidden.values))


def test_hidden_cases_show_pass_fail_and_message_only():
    report = _report(cases=[
        CaseResult("Example 1", False, True, "ok", {"x": [1.0]},
                   [LeafResult("loss", True, "ok", expected=1.0, got=1.0, max_abs_err=0.0)]),
        CaseResult("Hidden 1", True, False, "loss: got 2, expected 1", None,
                   [LeafResult("loss", False, "loss: got 2, expected 1", expected=1.0, got=2.0, max_abs_err=1.0)]),
    ])
    frame = results.cases_frame(report)
    hidden = frame[frame["Case"] == "Hidden 1"].iloc[0]
    assert hidden["Expected"] == "" and hidden["Got"] == "" and hidden["Max abs err"] == ""
    assert hidden["Result"] == "✗ fail" and "expected 1" in hidden["Message"]
    visible = frame[frame["Case"] == "Example 1"].iloc[0]
    assert visible["Output"] == "loss" and visible["Got"] == "1.0"


def test_error_line_comes_from_the_syntax_error_or_the_traceback():
    assert results.error_line(_report(verdict=Verdict.SYNTAX_ERROR, message="SyntaxError: bad on line 7.")) == 7
    tb = 'Traceback:\n  File "solution.py", line 3, in f\n  File "solution.py", line 9, in g\nValueError: x'
    assert results.error_line(_report(verdict=Verdict.RUNTIME_ERROR, traceback=tb)) == 9
    assert results.error_line(_report()) is None


@pytest.mark.parametrize("text, words", [
    ("[1, 2]", "JSON object"),
    ("{", "Not valid JSON"),
    ('{"params": {}, "x": [[1.0]]}', "missing y"),
    ('{"params": [], "x": [[1.0]], "y": [[1.0]]}', "`params` must be an object"),
])
def test_custom_input_is_checked_before_it_runs(text, words):
    with pytest.raises(ValueError, match=words):
        custom_input.parse_inputs(problems.get(REMAT), text)


def test_custom_input_runs_yours_and_the_reference_side_by_side():
    problem = problems.get(REMAT)
    inputs = problem.examples[0].inputs
    wrong = problem.reference.replace('{"loss": loss,', '{"loss": loss + 1.0,')
    result = custom_input.run_custom(problem, wrong, inputs, run_job)
    assert result.yours.ok and result.reference.ok
    assert not result.matches
    failing = [leaf.path for leaf in result.leaves if not leaf.passed]
    assert failing == ["loss"]
    assert result.reference.output["loss"] == pytest.approx(problem.examples[0].expected["loss"], abs=1e-5)


def _tasks_script() -> None:
    import threading

    import streamlit as st

    from pages.services import runs

    gate = st.session_state.setdefault("gate", threading.Event())
    first = runs.start("p", "run", "a", lambda task: gate.wait())
    second = runs.start("p", "submit", "b", lambda task: None)
    st.write(f"first={first is not None} second={second is not None}")
    gate.set()


def test_a_second_click_while_a_task_runs_starts_nothing():
    at = AppTest.from_function(_tasks_script).run()
    assert at.markdown[0].value == "first=True second=False"


def _reset_script() -> None:
    import streamlit as st

    from pages import problem
    st.session_state.setdefault("jaxplay_progress", {"loaded": True, "code": {"rematerialized-mlp-block": "mine"},
                                                     "solved": set(), "pending": {}, "waited": 0})
    problem.render("rematerialized-mlp-block")


def test_reset_asks_first_then_restores_the_starter(monkeypatch):
    import pages.problem as page
    seen = []
    monkeypatch.setattr(page, "editor", lambda code, key, annotations=None: seen.append((key, code)) or code)
    at = AppTest.from_function(_reset_script, default_timeout=30).run()
    assert seen[-1][1] == "mine"
    at.button(key="reset_btn").click().run()
    assert seen[-1][1] == "mine", "reset must ask before it replaces the code"
    at.button(key="reset-confirm").click().run()
    assert seen[-1][1] == problems.get(REMAT).starter
    assert seen[-1][0] != seen[0][0], "a fresh editor shows the starter"
    assert progress_code(at) is None


def progress_code(at: AppTest):
    return at.session_state["jaxplay_progress"]["code"].get(REMAT)


@pytest.mark.slow
def test_the_app_grades_through_the_warm_pool_and_reports_its_place_in_line():
    from grader.grading.workers import worker_pool
    from pages.services import runs

    problem = problems.get("rematerialized-mlp-block")
    seen = []
    pool = worker_pool(1, warm=1)
    try:
        blocker = threading.Thread(target=pool.run, args=({"code": "while True: pass", "entry": "f", "args": [],
                                                           "cases": []}, Limits(wall_s=4.0)))
        blocker.start()
        time.sleep(0.5)
        with mock.patch.object(runs, "shared_pool", return_value=pool):
            report = grade(problem, problem.reference, examples_only=True, run=runs.get_runner(on_position=seen.append))
        blocker.join()
    finally:
        pool.shutdown()
    assert report.verdict is Verdict.ACCEPTED
    assert seen and seen[-1] == 0


def _rate_limit_script() -> None:
    import os

    import streamlit as st

    from pages.services import runs

    os.environ["JAXPLAY_RUNS_PER_MINUTE"] = "1"
    runs._gate.clear()
    first = runs.start("p", "run", "a", lambda task: None)
    first.future.result(timeout=10)
    runs.current()  # the finished task moves to "last"
    second = runs.start("p", "run", "b", lambda task: None)
    st.write(f"first={first is not None} second={second is not None}")
    st.write(runs.refusal() or "no refusal")
    os.environ.pop("JAXPLAY_RUNS_PER_MINUTE")
    runs._gate.clear()


def test_runs_over_the_per_minute_limit_are_refused_kindly():
    at = AppTest.from_function(_rate_limit_script).run()
    assert at.markdown[0].value == "first=True second=False"
    assert "runs in the last 60 seconds" in at.markdown[1].value


def test_learners_get_no_sidebar_and_a_small_isolation_badge_with_details_for_operators():
    at = AppTest.from_file("../app.py/streamlit_app.py", default_timeout=60).run()
    assert not at.exception
    assert len(at.sidebar.markdown) == 0 and len(at.sidebar.success) == 0, "nothing about the server in a sidebar"
    everything = " ".join(str(m.value) for m in at.markdown) + " ".join(str(c.value) for c in at.caption)
    assert "Graders:" not in everything and "running ·" not in everything
    badge = [m.value for m in at.markdown if "-badge[:material/shield:" in m.value]
    assert len(badge) == 1 and "Sandbox" in badge[0]
    details = [e for e in at.expander if "Isolation details" in e.label]
    assert details and not getattr(details[0].proto, "expanded", False)
    assert any("seccomp" in m.value for m in details[0].markdown)


@pytest.mark.parametrize("expected, got, shown", [
    (0.043908, 0.0439077, ("0.0439080", "0.0439077")),  # issue 21: not 0.043908 beside 0.0439077
    (0.25, 0.25, ("0.25", "0.25")),
    ([0.1, 0.25], [0.1, 0.2500001], ("[0.10, 0.25]", "[0.10, 0.25]")),
    ([1.5, 2.0], [1.5, 2.0], ("[1.5, 2.0]", "[1.5, 2.0]")),
    (1e-9, 1.1e-9, ("1.0e-09", "1.1e-09")),
    (3.0, 3.0, ("3.0", "3.0")),
])
def test_expected_and_got_are_shown_at_the_same_precision(expected, got, shown):
    assert results.fmt_pair(expected, got) == shown
    digits = [len(t.replace("-", "").replace(".", "").split("e")[0].lstrip("0[")) for t in shown if "," not in t]
    assert len(set(digits)) <= 1, "the same number of digits in both columns"


def _console_script() -> None:
    from grader.records import Report, Verdict
    from pages.views import results as results_view
    results_view.console(Report(file="f", problem="p", verdict=Verdict.OUTPUT_LIMIT, message="m",
                                stdout="x" * 1_000_000, output_truncated=True))


def test_a_huge_print_is_said_to_be_cut_first_and_drawn_in_part():
    """Issue 21: the note that output was cut comes before the box, and a megabyte line is not all drawn."""
    at = AppTest.from_function(_console_script, default_timeout=30).run()
    assert not at.exception
    assert at.caption[0].value.startswith(":material/content_cut: Output cut")
    assert len(at.code[0].value) == results.CONSOLE_CHARS
    assert "Download has all of it" in at.caption[1].value


def test_the_structure_picture_says_whose_line_it_cites():
    """Issue 21: "line 64" was a jaxpr line beside a 25-line file; the learner's own line leads, said as such."""
    from grader.records import Region
    tree = Region("program", "program", children=[
        Region("scan", "scan · length 2", path="3", eqns=2, primitives=["add"], line=64, source_line=24),
        Region("call", "jit", path="5", eqns=1, primitives=["mul"], line=70)])
    yours = structure_view.dot(tree, [])
    assert "scan · length 2 · your line 24" in yours and "jit · jaxpr line 70" in yours
    assert "· line " not in yours
    assert "the reference's line 24" in structure_view.dot(tree, [], title="reference")


def test_custom_input_json_keeps_a_row_of_numbers_on_one_line():
    """Issue 21: json.dumps(indent=1) put every number on a line of its own."""
    value = {"params": {"w1": [[1.0, 2.0], [3.0, 4.0]], "b1": [0.5, 0.25]}, "n": 2, "empty": [], "none": {}}
    text = custom_input.compact_json(value)
    assert json.loads(text) == value
    assert "      [1.0, 2.0],\n      [3.0, 4.0]\n" in text and '"b1": [0.5, 0.25]' in text
    assert len(text.splitlines()) == 12

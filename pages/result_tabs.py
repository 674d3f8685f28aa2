"""The tabs under the editor: test cases, requirements, jaxpr (with the reference's beside it), console and
custom input."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import problems
from pages import custom_input, progress, results, runs
from pages.browser_bridge import clicked_code
from grader.grade import grade
from grader.records import Report, RequirementResult
from problems import Problem


def results_tabs(problem: Problem) -> None:
    _, report = runs.last_report(problem.slug)
    tabs = st.tabs(["Test cases", "Requirements", "jaxpr", "Console", "Custom input"])
    with tabs[0]:
        if report is None:
            st.caption("Press **Run** to grade the visible examples, or **Submit** for the hidden cases too.")
        else:
            results.cases_table(report)
    with tabs[1]:
        if report is None:
            results.requirements_checklist([_unchecked(r) for r in problem.requirements], problem.requirements_note,
                                           checked=False)
        else:
            results.requirements_checklist(report.requirements, problem.requirements_note)
    with tabs[2]:
        _jaxpr(problem, report)
    with tabs[3]:
        if report is None:
            st.caption("Your code's printed output and errors appear here after a run.")
        else:
            results.console(report)
    with tabs[4]:
        _custom(problem)


def _unchecked(req) -> RequirementResult:
    return RequirementResult(req.id, req.text, False, "Not checked yet: press Run.")


@st.cache_data(show_spinner=False, max_entries=64)
def reference_jaxpr(slug: str) -> str:
    """The reference solution's traced program on the first example (graded once per server)."""
    problem = problems.get(slug)
    report = grade(problem, problem.reference, examples_only=True, run=runs.get_runner())
    if not report.jaxpr_text.strip():
        raise RuntimeError(report.message)  # not cached: the next toggle tries again
    return report.jaxpr_text


def _jaxpr(problem: Problem, report: Report | None) -> None:
    compare = st.toggle("Show the reference solution's jaxpr beside it", key=f"ref-jaxpr-{problem.slug}")
    mine = report.jaxpr_text if report is not None else ""
    marks = results.evidence_lines(report) if report is not None else {}
    if compare:
        a, b = st.columns(2)
        with a:
            st.markdown("**Your jaxpr** (first example)")
            _mine(report, mine, marks)
        with b:
            st.markdown("**Reference jaxpr**")
            with st.spinner("Tracing the reference solution…"):
                try:
                    results.jaxpr_view(reference_jaxpr(problem.slug))
                except RuntimeError:
                    st.caption("The reference could not be traced just now (the grader's problem, not yours); "
                               "toggle again to retry.")
    else:
        st.markdown("**Your jaxpr** (first example)")
        _mine(report, mine, marks)
    if marks:
        st.caption("Highlighted lines: the equations the requirement checks looked at (◀ which check).")


def _mine(report: Report | None, text: str, marks) -> None:
    if report is None:
        st.caption("Run your code to see the program JAX traced from it.")
    else:
        results.jaxpr_view(text, marks)


def _custom(problem: Problem) -> None:
    st.caption("Edit a visible example's inputs (JSON), run, and compare your output with the reference's.")
    names = [c.name for c in problem.examples]
    pick = st.selectbox("Start from", names, key=f"custom-pick-{problem.slug}")
    example = problem.examples[names.index(pick)]
    text = st.text_area("Inputs (JSON)", value=json.dumps(example.inputs, indent=1), height=220,
                        key=f"custom-json-{problem.slug}-{pick}")
    busy = runs.current() is not None
    if st.button("Run custom input", key=f"custom-run-{problem.slug}", disabled=busy,
                 icon=":material/science:"):
        try:
            inputs = custom_input.parse_inputs(problem, text)
        except ValueError as exc:
            st.error(str(exc))
        else:
            code = clicked_code(problem.slug, progress.code(problem.slug) or problem.starter,
                                st.session_state.get("jaxplay_last_flush"))
            runs.start(problem.slug, "custom", code,
                       lambda task: custom_input.run_custom(problem, code, inputs, runs.get_runner(
                           on_position=lambda ahead: setattr(task, "ahead", ahead))))
            st.rerun()
    task = runs.last(problem.slug, "custom")
    if task is not None:
        _custom_result(task)


def _custom_result(task: runs.Task) -> None:
    try:
        res: custom_input.CustomResult = task.result()
    except Exception as exc:  # noqa: BLE001
        why = results.md_text(f"{type(exc).__name__}: {exc}")
        st.error(f"The custom run failed inside the grader ({why}); this is not your fault.")
        return
    if res.yours.ok and res.reference.ok:
        (st.success if res.matches else st.warning)(
            "Your output matches the reference's." if res.matches else "Your output differs from the reference's.")
    if res.leaves:
        rows = [{"Output": leaf.path, "Yours": results.fmt_value(leaf.got),
                 "Reference": results.fmt_value(leaf.expected), "Max abs err": leaf.max_abs_err,
                 "Match": "✓" if leaf.passed else "✗", "Message": "" if leaf.passed else leaf.message}
                for leaf in res.leaves]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                     column_config={"Max abs err": st.column_config.NumberColumn(format="%.2e")})
    cols = st.columns(2)
    for col, title, side in ((cols[0], "Your output", res.yours), (cols[1], "Reference output", res.reference)):
        with col:
            if side.ok:
                with st.expander(f"{title} (full values)"):
                    st.code(json.dumps(side.output, indent=1), language="json")
            else:
                st.markdown(f"**{title}**")
                who = "Your code" if side is res.yours else "The reference (check the constraints)"
                st.error(f"{who} could not run this input: {results.md_text(side.message)}")
                if side.traceback:
                    st.code(side.traceback, language=None)
            if side.stdout.strip():
                st.caption(f"{title}: stdout")
                st.code(side.stdout, language=None)

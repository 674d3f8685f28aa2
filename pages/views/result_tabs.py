"""The tabs under the editor: test cases, requirements, the structure picture, the jaxpr (the reference's
below it), console, custom input and, where the problem declares an insight or is a Pallas kernel with a `jnp` baseline, cost."""
from __future__ import annotations

import json

import streamlit as st

from grader.records import Report, RequirementResult, learner, unmarked
from grader.cost import kernel_cost
from pages.views import block_hint, cost_view, custom_input, jaxpr_view, kernel_cost_view, results, structure_view
from pages.services import progress, reference, runs
from pages.services.browser_bridge import new_click
from pages.views.markup import md
from problems import Problem

TABS = ["Test cases", "Requirements", "Structure", "jaxpr", "Console", "Custom input", "Cost"]


TAB_KEYS = ["test-cases", "requirements", "structure", "jaxpr", "console", "custom-input", "cost"]


def results_tabs(problem: Problem) -> None:
    """The tabs; only the open one is built and sent (a click on another reruns the page for it), so a Run's
    verdict reaches the screen without the pictures, listings and tables of tabs nobody is looking at."""
    task, report = runs.last_report(problem.slug)
    ref = reference.report(problem.slug)  # started now in the background if need be: ready by the first Run
    draw = [lambda: _cases(problem, report), lambda: _requirements(problem, report, task.code if task is not None else ""),
            lambda: _structure(problem, report, ref), lambda: _jaxpr(problem, report, ref),
            lambda: _console(report), lambda: _custom(problem), lambda: _cost(problem)]
    shown = len(TABS) if has_cost_tab(problem) else len(TABS) - 1  # Cost: where the problem declares one
    tabs = st.tabs(TABS[:shown], key=f"result-tabs-{problem.slug}", on_change="rerun")
    for tab, key, body in zip(tabs, TAB_KEYS, draw):
        with tab:
            if tab.open is False:
                continue
            with st.container(key=f"tab-{key}"):
                body()


def has_cost_tab(problem: Problem) -> bool:
    """An insight (``insight.toml``), or a Pallas kernel with a ``jnp`` baseline (``kernel_cost.declared``)."""
    return problem.insight is not None or kernel_cost.declared(problem)


def _cost(problem: Problem) -> None:
    if problem.insight is not None:
        cost_view.cost_tab(problem)
    else:
        kernel_cost_view.cost_tab(problem)


def _cases(problem: Problem, report: Report | None) -> None:
    if report is None:
        st.caption("Press **Run** to grade the visible examples, or **Submit** for the hidden cases too.")
    else:
        results.cases_table(report)


def _requirements(problem: Problem, report: Report | None, code: str) -> None:
    if report is None:
        results.requirements_checklist([_unchecked(r) for r in problem.requirements], problem.requirements_note,
                                       checked=False)
    else:
        results.requirements_checklist(report.requirements, problem.requirements_note,
                                       forecast=block_hint.forecast(report.jaxpr_text, code))


def _console(report: Report | None) -> None:
    if report is None:
        st.caption("Your code's printed output and errors appear here after a run.")
    else:
        results.console(report)


def _unchecked(req) -> RequirementResult:
    return RequirementResult(req.id, req.text, False, "Not checked yet: press Run.", advice=req.advice)


def _dark() -> bool:
    return (getattr(st.context.theme, "type", None) or "light") == "dark"


def _structure(problem: Problem, report: Report | None, ref: Report | None) -> None:
    st.caption("Boxes inside boxes: the regions of the traced program (jit, scan, checkpoint, custom_vjp, "
               "cond/while, and the vmapped, forward and backward parts). Each requirement's evidence is a tag "
               "in the region where its equation sits: green holds, red fails.")
    mine, theirs = st.columns(2, gap="medium")
    with mine:
        st.markdown("**Your program** (first example)")
        if report is None or report.structure is None:
            st.caption("Run your code to see the structure JAX traced from it." if report is None else
                       "No traced program: your function could not be traced on the first example.")
        else:
            st.graphviz_chart(structure_view.dot(report.structure, report.requirements, dark=_dark()))
            nowhere = [r for r in report.requirements if not r.evidence]
            if nowhere:
                st.caption(" · ".join(f"{r.mark} {r.id}" for r in nowhere)
                           + ": no equation to point at in your program.")
    with theirs:
        st.markdown("**Reference solution**")
        if ref is None:
            _wait_for_reference(problem.slug, "structure")
        elif ref.structure is not None:
            st.graphviz_chart(structure_view.dot(ref.structure, ref.requirements, dark=_dark(),
                                                 title="reference"))


def _wait_for_reference(slug: str, where: str) -> None:
    """Say the reference is on its way (it is graded in the background from the page's first view). No
    timer reruns the page for it: an automatic rerun can cut off the script run of a click on Run."""
    st.caption("Tracing the reference solution… it shows with your next run, or now:")
    st.button("Show the reference", key=f"ref-refresh-{where}-{slug}", icon=":material/refresh:")


def _jaxpr(problem: Problem, report: Report | None, ref: Report | None) -> None:
    if report is None:
        st.caption("Run your code to see the program JAX traced from it.")
    elif not report.jaxpr_text.strip():
        st.caption("No traced program: your function could not be traced on the first example.")
    else:
        jumps = jaxpr_view.jumps_html(report.requirements)
        if jumps:
            st.html(jumps)
        st.markdown("**Your jaxpr** (first example)")
        st.html(jaxpr_view.listing_html(report.jaxpr_text, jaxpr_view.marks(report.requirements),
                                        focus=jaxpr_view.focus_line(report)))
        st.caption("Highlighted: the equations the requirement checks looked at, with why and your line. "
                   "▾ folds a sub-program.")
    if st.toggle("Show the reference solution's jaxpr below", key=f"ref-jaxpr-{problem.slug}"):
        st.markdown("**Reference jaxpr** (first example)")
        if ref is None:
            _wait_for_reference(problem.slug, "jaxpr")
        else:
            st.html(jaxpr_view.listing_html(ref.jaxpr_text, jaxpr_view.marks(ref.requirements), role="reference"))


def _custom(problem: Problem) -> None:
    st.caption("Edit a visible example's inputs (JSON), run, and compare your output with the reference's.")
    names = [c.name for c in problem.examples]
    pick = st.selectbox("Start from", names, key=f"custom-pick-{problem.slug}")
    example = problem.examples[names.index(pick)]
    text = st.text_area("Inputs (JSON)", value=custom_input.compact_json(example.inputs), height=220,
                        key=f"custom-json-{problem.slug}-{pick}")
    busy = runs.current() is not None
    errors = st.session_state.setdefault("jaxplay_custom_error", {})
    key = f"custom-run-{problem.slug}"
    pressed = st.button("Run custom input", key=key, disabled=busy, icon=":material/science:")
    click = new_click(problem.slug, st.session_state.get("jaxplay_last_flush"), (key,))  # survives a cut-off run
    if (pressed or click is not None) and not busy:
        try:
            inputs = custom_input.parse_inputs(problem, text)
        except ValueError as exc:
            errors[problem.slug] = str(exc)  # the error replaces any earlier result: never both at once
            runs.forget(problem.slug, "custom")
        else:
            errors.pop(problem.slug, None)
            code = click[1] if click is not None else progress.code(problem.slug) or problem.starter
            runs.start(problem.slug, "custom", code,
                       lambda task: custom_input.run_custom(problem, code, inputs, runs.get_runner(
                           on_position=lambda ahead: setattr(task, "ahead", ahead)), custom_input.ONE_CASE))
            st.rerun()
    if errors.get(problem.slug):
        st.error(md(errors[problem.slug]), icon=":material/data_object:")
        return
    task = runs.last(problem.slug, "custom")
    if task is not None:
        _custom_result(task)


def _custom_result(task: runs.Task) -> None:
    try:
        res: custom_input.CustomResult = task.result()
    except Exception as exc:  # noqa: BLE001
        st.error(f"The custom run failed inside the grader ({md(learner(f'{type(exc).__name__}: {exc}'))}); "
                 "this is not your fault.")
        return
    if res.yours.ok and res.reference.ok:
        (st.success if res.matches else st.warning)(
            "Your output matches the reference's." if res.matches else "Your output differs from the reference's.")
    if res.leaves:
        pairs = [results.fmt_pair(leaf.expected, leaf.got) for leaf in res.leaves]
        rows = [{"Match": "✓" if leaf.passed else "✗", "Output": leaf.path, "Yours": got, "Reference": expected,
                 "Max abs err": f"{leaf.max_abs_err:.1e}" if leaf.max_abs_err is not None else "",
                 "Message": "" if leaf.passed else unmarked(leaf.message)}
                for leaf, (expected, got) in zip(res.leaves, pairs)]
        import pandas as pd  # (here: a server's first page view does without it)
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="custom-table")
    cols = st.columns(2)
    for col, title, side in ((cols[0], "Your output", res.yours), (cols[1], "Reference output", res.reference)):
        with col:
            if side.ok:
                with st.expander(f"{title} (full values)"):
                    st.code(custom_input.compact_json(side.output), language="json")
            else:
                st.markdown(f"**{title}**")
                who = "Your code" if side is res.yours else "The reference (check the constraints)"
                st.error(f"{who} could not run this input: {md(side.message)}")
                if side.traceback:
                    st.code(side.traceback, language=None, height=200 if side.traceback.count("\n") > 10 else "content")
            if side.stdout.strip():
                st.caption(f"{title}: stdout")
                st.code(side.stdout, language=None, height=200 if side.stdout.count("\n") > 10 else "content")

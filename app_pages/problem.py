"""One problem: the statement on the left; the editor, Run/Submit/Reset and the results on the right."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st
from streamlit_ace import st_ace

import problems
from grader.records import Report, RequirementResult, Verdict
from app_pages import custom_input, progress, results, runs
from app_pages.nav import DIFFICULTY_COLOR, page_for
from problems import Problem

FONT_SIZES = (12, 14, 16, 18, 22, 28)
KEYBINDINGS = {"Default": "vscode", "Vim": "vim", "Emacs": "emacs"}
ACE_THEMES = {"light": "chrome", "dark": "tomorrow_night"}
RUN_KEY, SUBMIT_KEY, RESET_KEY = "run_btn", "submit_btn", "reset_btn"
STATEMENT_HEIGHT = 760  # px: the statement scrolls beside the editor, as on a practice site


def editor(code: str, key: str, annotations: list[dict] | None = None) -> str:
    """The Ace editor. A module-level function so tests can replace it (AppTest cannot type into it)."""
    settings = st.session_state.setdefault("jaxplay_editor", {"font_size": 14, "keybinding": "Default"})
    theme = ACE_THEMES.get(getattr(st.context.theme, "type", None) or "light", "chrome")
    value = st_ace(value=code, language="python", theme=theme, keybinding=KEYBINDINGS[settings["keybinding"]],
                   font_size=settings["font_size"], tab_size=4, min_lines=22, show_gutter=True, wrap=False,
                   annotations=annotations or None, auto_update=True, key=key)
    return code if value is None else value


def render(slug: str) -> None:
    problem = problems.get(slug)
    _collect_finished(problem)
    version = st.session_state.setdefault("jaxplay_editor_version", {}).get(slug, 0)
    editor_key = f"ace-{slug}-{version}"
    bridge = progress.sync(slug=slug, editor_key=editor_key,
                           button_keys=(RUN_KEY, SUBMIT_KEY, f"custom-run-{slug}"))
    st.session_state["jaxplay_last_flush"] = bridge.get("flushed") if hasattr(bridge, "get") else None

    _header(problem)
    left, right = st.columns(2, gap="large")
    with left:
        with st.container(height=STATEMENT_HEIGHT, border=False, key="statement-pane"):
            _statement(problem)
    with right:
        ready = _workspace(problem, editor_key, bridge)
    if ready:
        _results(problem)


def _collect_finished(problem: Problem) -> None:
    """Record an accepted submission as solved, once, before the bridge writes this run's changes."""
    task = runs.last(problem.slug)
    if task is None or task.kind != "submit" or getattr(task, "recorded", False):
        return
    task.recorded = True
    try:
        report = task.result()
    except Exception:  # noqa: BLE001 - shown by the results panel
        return
    if report.verdict is Verdict.ACCEPTED:
        progress.mark_solved(problem.slug)


# -- statement ------------------------------------------------------------------------------------------

def _header(problem: Problem) -> None:
    solved = problem.slug in progress.solved()
    st.title(problem.title, anchor=False)
    badges = [f":{DIFFICULTY_COLOR.get(problem.difficulty, 'gray')}-badge[{problem.difficulty}]"]
    badges += [f":gray-badge[{tag}]" for tag in problem.tags]
    if solved:
        badges.append(":green-badge[:material/check: Solved]")
    st.markdown(" ".join(badges))


def _statement(problem: Problem) -> None:
    with st.container(key="statement"):
        st.markdown(problem.statement)
        st.markdown(f"Your function: `{problem.signature}`")
        st.subheader("Examples", anchor=False)
        for case in problem.examples:
            st.markdown(f"**{case.name}**")
            st.code(_inputs_text(case.inputs) + "\n\n# Output\n" + _json_line(case.expected), language="python",
                    wrap_lines=True)
            if case.explanation:
                st.caption(case.explanation)
        _hints(problem)
        st.subheader("Requirements", anchor=False)
        for req in problem.requirements:
            st.markdown(f"- **`{req.id}`** — {req.text}")
        if problem.requirements_note:
            st.caption(problem.requirements_note)
        st.subheader("Constraints", anchor=False)
        st.markdown("\n".join(f"- {c}" for c in problem.constraints))
        _similar(problem)


def _inputs_text(inputs: dict) -> str:
    return "\n".join(f"{name} = {_json_line(value)}" for name, value in inputs.items())


def _json_line(value) -> str:
    return json.dumps(value, separators=(", ", ": "))


def _hints(problem: Problem) -> None:
    if not problem.hints:
        return
    st.subheader("Hints", anchor=False)
    shown = st.session_state.setdefault("jaxplay_hints", {})
    count = shown.get(problem.slug, 0)
    for i, hint in enumerate(problem.hints[:count], 1):
        st.info(f"**Hint {i}.** {hint}", icon=":material/lightbulb:")
    if count < len(problem.hints):
        if st.button(f"Show hint {count + 1} of {len(problem.hints)}", key=f"hint-{problem.slug}",
                     icon=":material/lightbulb:"):
            shown[problem.slug] = count + 1
            st.rerun()
    else:
        st.caption("All hints shown.")


def _similar(problem: Problem) -> None:
    if not problem.similar:
        return
    st.subheader("Similar problems", anchor=False)
    by_title = {p.title: p for p in problems.registry().values()}
    for sim in problem.similar:
        color = DIFFICULTY_COLOR.get(sim.difficulty, "gray")
        target = by_title.get(sim.title)
        if target is not None and page_for(target.slug) is not None:
            cols = st.columns([4, 1])
            cols[0].page_link(page_for(target.slug), label=sim.title)
            cols[1].markdown(f":{color}-badge[{sim.difficulty}]")
        else:
            st.markdown(f"{sim.title} :{color}-badge[{sim.difficulty}] :gray[(coming soon)]")


# -- editor, buttons, results ------------------------------------------------------------------------

def _workspace(problem: Problem, editor_key: str, bridge) -> bool:
    """Editor, buttons, run status and verdict; False while the browser's saved code is still on its way."""
    slug = problem.slug
    if not progress.loaded():
        _wait_for_browser()
        return False
    busy = runs.current() is not None
    top = st.columns([3, 1], vertical_alignment="bottom")
    top[0].markdown("**Code** · Python 3 · JAX")
    with top[1].popover("Settings", icon=":material/settings:", use_container_width=True):
        _settings()
    saved = progress.code(slug)
    current = saved if saved is not None else problem.starter
    code = editor(current, editor_key, _annotations(problem, current))

    flushed = bridge.get("flushed") if hasattr(bridge, "get") else None
    action = bridge.get("action") if hasattr(bridge, "get") else None
    cols = st.columns(3)
    run = cols[0].button("Run", key=RUN_KEY, type="secondary", icon=":material/play_arrow:", disabled=busy,
                         use_container_width=True, help="Grade the visible examples (Ctrl+Enter)")
    submit = cols[1].button("Submit", key=SUBMIT_KEY, type="primary", icon=":material/upload:", disabled=busy,
                            use_container_width=True, help="Grade the examples and the hidden cases")
    if cols[2].button("Reset", key=RESET_KEY, icon=":material/restart_alt:", disabled=busy,
                      use_container_width=True, help="Back to the starter code"):
        _confirm_reset(problem)

    if run or submit:
        code = _clicked_code(slug, code, flushed)
    if action and isinstance(action, dict) and isinstance(action.get("code"), str) and not busy:
        code, run = action["code"], True
    if code != problem.starter or saved is not None:
        progress.set_code(slug, code)
    if (run or submit) and not busy:
        if runs.start_grading(problem, code, submit=bool(submit)) is not None:
            st.rerun()  # draw the page again with Run/Submit disabled and the status showing

    task = runs.current()
    if task is not None:
        _status(task)
    _verdict(problem)
    return True


def _report(problem: Problem) -> tuple[runs.Task | None, Report | None]:
    task = runs.last(problem.slug)
    if task is None:
        return None, None
    try:
        return task, task.result()
    except Exception:  # noqa: BLE001 - shown by _verdict as the grader's failure
        return task, None


def _verdict(problem: Problem) -> None:
    task, report = _report(problem)
    if task is not None and report is None:
        exc = task.future.exception()
        st.error(f"**Internal Grader Error** · the grader itself failed ({type(exc).__name__}: {exc}). "
                 "This is not your fault; please try again.")
    if report is not None:
        results.verdict_banner(report, task.kind)
        if progress.code(problem.slug) is not None and task.code != progress.code(problem.slug):
            st.caption("The editor has changed since this run.")


def _annotations(problem: Problem, code: str) -> list[dict]:
    """Gutter marks in the editor for the last grading of this very code: error lines, requirement evidence."""
    task, report = _report(problem)
    if report is None or task.code != code:
        return []
    marks = []
    line = results.error_line(report)
    if line is not None:
        marks.append({"row": line - 1, "column": 0, "type": "error", "text": f"{report.verdict.label}: {report.message}"})
    for req in report.requirements:
        if req.passed:
            continue
        for ev in req.evidence:
            if ev.source_line:
                marks.append({"row": ev.source_line - 1, "column": 0, "type": "warning",
                              "text": f"{req.id}: {ev.note or ev.primitive} (jaxpr line {ev.jaxpr_line})"})
    return marks[:50]


def _clicked_code(slug: str, code: str, flushed) -> str:
    """The editor's text at the moment of the click (see ``browser_bridge``), else the editor's last value."""
    if not isinstance(flushed, dict) or flushed.get("slug") != slug or not isinstance(flushed.get("code"), str):
        return code
    used = st.session_state.setdefault("jaxplay_flush_used", {})
    if used.get(slug) == flushed.get("seq"):
        return code
    used[slug] = flushed.get("seq")
    return flushed["code"]


def _settings() -> None:
    settings = st.session_state.setdefault("jaxplay_editor", {"font_size": 14, "keybinding": "Default"})
    settings["font_size"] = st.select_slider("Font size", FONT_SIZES, value=settings["font_size"],
                                             key="setting-font-size", help="Large sizes suit a projector.")
    settings["keybinding"] = st.radio("Key bindings", list(KEYBINDINGS), horizontal=True,
                                      index=list(KEYBINDINGS).index(settings["keybinding"]),
                                      key="setting-keybinding")
    st.caption("The editor's colours follow the app's light or dark theme (menu ⋮ → Settings).")


def _reset(slug: str) -> None:
    """Back to the starter: forget the code here and in the browser, and mount a fresh editor."""
    progress.forget_code(slug)
    versions = st.session_state.setdefault("jaxplay_editor_version", {})
    versions[slug] = versions.get(slug, 0) + 1


@st.dialog("Reset to the starter code?")
def _confirm_reset(problem: Problem) -> None:
    st.write("Your code for this problem will be replaced by the starter code. This cannot be undone.")
    cols = st.columns(2)
    if cols[0].button("Reset code", type="primary", key="reset-confirm", use_container_width=True,
                      on_click=_reset, args=(problem.slug,)):
        st.rerun()  # close the dialog and draw the page with a fresh editor
    if cols[1].button("Keep my code", key="reset-cancel", use_container_width=True):
        st.rerun()


def _wait_for_browser() -> None:
    """Wait briefly for the browser to send this problem's saved code; then carry on without it."""
    st.info("Loading your saved code…", icon=":material/hourglass_top:")

    @st.fragment(run_every=0.5)
    def poll() -> None:
        state = st.session_state[progress.KEY]
        state["waited"] += 1
        if state["loaded"] or state["waited"] > 6:
            progress.give_up_waiting()
            st.rerun()
    poll()


def _status(task: runs.Task) -> None:
    label = {"run": "Running the examples", "submit": "Submitting: examples and hidden cases",
             "custom": "Running your code and the reference on the custom input"}[task.kind]

    @st.fragment(run_every=0.25)
    def status() -> None:
        current = runs.current()
        if current is None:
            st.rerun()
        st.info(f"{label}… {current.elapsed():.1f} s", icon=":material/progress_activity:")
    status()


def _results(problem: Problem) -> None:
    _, report = _report(problem)
    tabs = st.tabs(["Test cases", "Requirements", "jaxpr", "Console", "Custom input"])
    with tabs[0]:
        if report is None:
            st.caption("Press **Run** to grade the visible examples, or **Submit** for the hidden cases too.")
        else:
            results.cases_table(report)
    with tabs[1]:
        if report is None:
            results.requirements_checklist([_unchecked(r) for r in problem.requirements], problem.requirements_note)
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
    return runs.grade(problem, problem.reference, examples_only=True, run=runs.get_runner()).jaxpr_text


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
                results.jaxpr_view(reference_jaxpr(problem.slug))
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
            code = _clicked_code(problem.slug, progress.code(problem.slug) or problem.starter,
                                 st.session_state.get("jaxplay_last_flush"))
            runner = runs.get_runner()
            runs.start(problem.slug, "custom", code,
                       lambda: custom_input.run_custom(problem, code, inputs, runner))
            st.rerun()
    task = runs.last(problem.slug, "custom")
    if task is not None:
        _custom_result(task)


def _custom_result(task: runs.Task) -> None:
    try:
        res: custom_input.CustomResult = task.result()
    except Exception as exc:  # noqa: BLE001
        st.error(f"The custom run failed inside the grader ({type(exc).__name__}: {exc}); not your fault.")
        return
    if res.yours.ok and res.reference.ok:
        (st.success if res.matches else st.warning)(
            "Your output matches the reference's." if res.matches else "Your output differs from the reference's.")
    cols = st.columns(2)
    for col, title, side in ((cols[0], "Your output", res.yours), (cols[1], "Reference output", res.reference)):
        with col:
            st.markdown(f"**{title}**")
            if side.ok:
                st.code(json.dumps(side.output, indent=1), language="json")
            else:
                who = "Your code" if side is res.yours else "The reference (check the constraints)"
                st.error(f"{who} could not run this input: {side.message}")
                if side.traceback:
                    st.code(side.traceback, language=None)
            if side.stdout.strip():
                st.caption("stdout")
                st.code(side.stdout, language=None)
    if res.leaves:
        rows = [{"Output": leaf.path, "Yours": results.fmt_value(leaf.got),
                 "Reference": results.fmt_value(leaf.expected), "Max abs err": leaf.max_abs_err,
                 "Match": "✓" if leaf.passed else "✗", "Message": "" if leaf.passed else leaf.message}
                for leaf in res.leaves]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                     column_config={"Max abs err": st.column_config.NumberColumn(format="%.2e")})

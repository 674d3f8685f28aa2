"""One problem: the statement on the left, the editor with Run/Submit/Reset and the verdict on the right,
the result tabs below."""
from __future__ import annotations

import ast
import datetime as dt
import re
import time

import streamlit as st
from streamlit_ace import st_ace

import problems
from classroom.results import plain_failure
from grader import pysource
from grader.sandbox import PoolBusy
from grader.records import Verdict, learner, unmarked
from pages.views import class_bar, layout, result_tabs, results, run_status, statement
from pages.services import attempts, class_store, progress, runs
from pages.services.browser_bridge import new_click
from pages.views.markup import md, plain
from problems import Problem

FONT_SIZES = (12, 14, 16, 18, 22, 28)
EDITOR_LINES = 18  # the editor, the buttons, the verdict and the case strip fit 1400x900 together
KEYBINDINGS = {"Default": "vscode", "Vim": "vim", "Emacs": "emacs"}
ACE_THEMES = {"light": "chrome", "dark": "tomorrow_night"}
RUN_KEY, SUBMIT_KEY, RESET_KEY = "run_btn", "submit_btn", "reset_btn"
MARKS_STALE_KEY = "jaxplay_marks_stale"
"""Set by a script run that drew the editor before its grading's result changed the gutter marks."""
STATEMENT_HEIGHT = 760  # px: the statement scrolls beside the editor, as on a practice site
AFTER_KEY = "jaxplay_interrupted"
"""Per problem: what became of a Run or Submit this browser started and never saw the verdict of (a page
that reconnected after a server restart): ``("recorded", Recorded)``, ``("interrupted", entry)`` or
``("unknown", entry)`` while the class database cannot say."""


def editor(code: str, key: str, annotations: list[dict] | None = None) -> str:
    """The Ace editor. A module-level function so tests can replace it (AppTest cannot type into it)."""
    settings = progress.prefs()
    theme = ACE_THEMES.get(getattr(st.context.theme, "type", None) or "light", "chrome")
    value = st_ace(value=code, language="python", theme=theme, keybinding=KEYBINDINGS.get(settings["keybinding"], "vscode"),
                   font_size=settings["font_size"], tab_size=4, height=editor_height(settings["font_size"]), show_gutter=True,
                   wrap=bool(settings.get("wrap", True)),
                   annotations=annotations or None, auto_update=True, key=key)
    return code if value is None else value


def editor_height(font_size: int) -> int:
    """Pixels for ``EDITOR_LINES`` lines at this font size (the bridge sets Ace's line height to 1.45)."""
    return int(EDITOR_LINES * font_size * 1.45) + 6


def render(slug: str) -> None:
    problem = problems.get(slug)
    version = st.session_state.setdefault("jaxplay_editor_version", {}).get(slug, 0)
    editor_key = f"ace-{slug}-{version}"
    bridge = progress.sync(slug=slug, editor_key=editor_key,
                           button_keys=(RUN_KEY, SUBMIT_KEY, f"custom-run-{slug}", f"cost-run-{slug}"))
    st.session_state["jaxplay_last_flush"] = bridge.get("flushed") if hasattr(bridge, "get") else None
    _restore_verdict(problem)
    _collect_finished(problem)

    statement.header(problem)
    if progress.prefs()["presenter"]:  # a projector: the editor full width, the statement folded above it
        layout.presenter(progress.prefs()["font_size"])
        with st.expander("Problem statement", expanded=False):
            statement.statement(problem)
        ready = _workspace(problem, editor_key, bridge)
    else:
        left, right = st.columns(2, gap="large")
        with left:
            with st.container(height=STATEMENT_HEIGHT, border=False, key="statement-pane"):
                statement.statement(problem)
        with right:
            ready = _workspace(problem, editor_key, bridge)
    if ready:
        result_tabs.results_tabs(problem)
    if st.session_state.pop(MARKS_STALE_KEY, False):
        st.rerun()  # the verdict is on screen: now the editor again, with the gutter marks of this result


def _restore_verdict(problem: Problem) -> None:
    """After a reload (a new session), show the verdict this browser saved, as the code is shown; unless a
    Run or Submit started since never brought its verdict here (``_interrupted``)."""
    if runs.last(problem.slug) is not None or runs.current() is not None:
        return
    if _interrupted(problem):
        return
    saved = progress.saved_verdict(problem.slug)
    if saved is not None:
        runs.restore(problem.slug, *saved)


def _interrupted(problem: Problem) -> bool:
    """A Run or Submit this browser started whose verdict it never got (the page reconnected to a new session:
    a server restart, a dropped connection). This server's own grading is taken over, running or done; a
    result another server process graded is shown as the class recorded it, which is what the board shows;
    otherwise the learner is told the Run was interrupted. True when the page shows one of those instead of
    the verdict the browser saved before it."""
    slug = problem.slug
    entry = progress.inflight(slug)
    if entry is None or entry["uid"] == progress.saved_verdict_uid(slug):
        st.session_state.get(AFTER_KEY, {}).pop(slug, None)
        if entry is not None:
            progress.set_inflight(slug, None)
        return False
    known = st.session_state.setdefault(AFTER_KEY, {})
    if slug in known and known[slug][0] != "unknown":
        return True
    task = attempts.find(entry["uid"])
    if task is not None:  # graded (or still grading) by this very server: its full report
        task.recorded = False
        runs.adopt(task)
        known.pop(slug, None)
        return True
    who = class_store.member() or class_store.member_of(progress.item("class"))
    try:
        found = class_store.recorded(who, entry["uid"])
    except class_store.StoreDown:
        known[slug] = ("unknown", entry)
        return True
    known[slug] = ("recorded", found) if found is not None else ("interrupted", entry)
    return True


def _interrupted_notice(problem: Problem) -> bool:
    """Where the verdict goes: what the class recorded of the Run the page never saw finish, or that it was
    interrupted. False when there is nothing of the kind to say."""
    state = st.session_state.get(AFTER_KEY, {}).get(problem.slug)
    if state is None:
        return False
    what, value = state
    with st.container(key="verdict"):
        if what == "recorded":
            label = Verdict(value.verdict).label if value.verdict in Verdict._value2member_map_ else value.verdict
            failing = (" · fails " + ", ".join(f"`{r}`" for r in value.failed)) if value.failed else ""
            body = (f"**{label}** · your {value.kind.capitalize()}{_when(value.at)}, graded while the page was away "
                    f"(the server restarted){failing}. This is what your class board recorded. Run it again to "
                    "see the cases and the tabs.")
            if value.failure:
                body += "\n\n" + plain(plain_failure(value.failure))
            if value.verdict == "accepted":
                st.success(body, icon=":material/check_circle:")
            elif value.verdict == "requirements_not_met":
                st.warning(body)
            else:
                st.error(body)
        elif what == "interrupted":
            st.warning(f"**Your {value.get('kind', 'run').capitalize()} was interrupted: run it again.** The server "
                       "restarted before it was graded, so it has no verdict and nothing of it was recorded.",
                       icon=":material/replay:")
        else:
            st.info(f"**Your last {value.get('kind', 'run').capitalize()}'s result is not known yet**: it was "
                    "under way when the page lost the server, and the class database is not answering. Run it "
                    "again, or reload once the database is back.", icon=":material/hourglass_top:")
    return True


def _when(at: object) -> str:
    """`` at 10:42:05 UTC`` for a recorded time ('' when unknown)."""
    if isinstance(at, str):
        try:
            at = dt.datetime.fromisoformat(at)
        except ValueError:
            return ""
    return f" at {at:%H:%M:%S} UTC" if isinstance(at, dt.datetime) else ""


def _collect_finished(problem: Problem) -> None:
    """Once per finished Run/Submit: save its verdict in the browser, and mark an accepted Submit solved."""
    task = runs.last(problem.slug)
    if task is None or task.restored or getattr(task, "recorded", False):
        return
    task.recorded = True
    try:
        report = task.result()
    except Exception:  # noqa: BLE001 - shown by the results panel
        return
    progress.save_verdict(problem.slug, task.kind, task.code, report, uid=task.uid)
    waiting = progress.inflight(problem.slug)
    if waiting is not None and (waiting["uid"] == task.uid or not task.uid):
        progress.set_inflight(problem.slug, None)
    st.session_state.get(AFTER_KEY, {}).pop(problem.slug, None)
    if task.kind == "submit" and report.verdict is Verdict.ACCEPTED:
        progress.mark_solved(problem.slug)


def _workspace(problem: Problem, editor_key: str, bridge) -> bool:
    """Editor, buttons, run status, verdict and case strip; False while the browser's saved code is on its way."""
    slug = problem.slug
    if not progress.loaded():
        _wait_for_browser()
        return False
    busy = runs.current() is not None
    saved = progress.code(slug)
    current = saved if saved is not None else problem.starter
    marks = _annotations(problem, current)
    code = editor(current, editor_key, marks)

    flushed = bridge.get("flushed") if hasattr(bridge, "get") else None
    action = bridge.get("action") if hasattr(bridge, "get") else None
    with st.container(key="editor-actions"):  # one row, a phone included (pages/views/layout.py)
        cols = st.columns([3, 3, 3, 2], gap="small")
    run = cols[0].button("Run", key=RUN_KEY, type="secondary", icon=":material/play_arrow:", disabled=busy,
                         width="stretch")  # no tooltip: it stayed over the editor after the click
    submit = cols[1].button("Submit", key=SUBMIT_KEY, type="primary", icon=":material/upload:", disabled=busy,
                            width="stretch")
    if cols[2].button("Reset", key=RESET_KEY, icon=":material/restart_alt:", disabled=busy,
                      width="stretch"):
        _confirm_reset(problem)
    with cols[3].popover("", icon=":material/settings:", width="stretch", help="Editor and layout settings"):
        _settings()

    click = new_click(slug, flushed, (RUN_KEY, SUBMIT_KEY))  # survives a script run cut off by another rerun
    if click is not None:
        code = click[1]
        run, submit = run or click[0] == RUN_KEY, submit or click[0] == SUBMIT_KEY
    if action and isinstance(action, dict) and isinstance(action.get("code"), str) and not busy:
        code, run = action["code"], True
    if code != problem.starter or saved is not None:
        progress.set_code(slug, code)
    if (run or submit) and not busy:
        task = runs.start_grading(problem, code, submit=bool(submit))
        if task is not None:  # the browser keeps its id until the verdict comes: a reconnected page asks after it
            progress.set_inflight(slug, {"uid": task.uid, "kind": task.kind, "at": time.time()})
            st.session_state.get(AFTER_KEY, {}).pop(slug, None)
        if task is not None and not run_status.wait_briefly(task):
            st.rerun()  # still grading: draw the page again with Run/Submit disabled and the live status
        _collect_finished(problem)  # done already (a warm Run): its verdict is drawn below, in this same run
        # The editor above was drawn before this result: it is drawn again with its gutter marks, by a rerun
        # once the verdict below is on screen (a rerun here held the verdict back for a whole script run).
        st.session_state[MARKS_STALE_KEY] = _annotations(problem, code) != marks
    refused = runs.refusal()
    if refused:
        st.warning(refused, icon=":material/schedule:")

    task = runs.current()
    if task is not None:
        run_status.show(task, problem)
    _verdict(problem)
    return True


def _verdict(problem: Problem) -> None:
    task, report = runs.last_report(problem.slug)
    if task is None and runs.current() is None and _interrupted_notice(problem):
        return
    if task is not None and report is None:
        exc = task.future.exception()
        if isinstance(exc, PoolBusy):
            st.warning("**The graders are busy** · every grader is taken and the queue is full. Your code is "
                       "safe in the editor; please press Run again in a moment.")
        else:
            st.error(f"**Internal Grader Error** · the grader itself failed ({md(learner(f'{type(exc).__name__}: {exc}'))}). "
                     "This is not your fault; please try again.")
    if report is not None:
        results.verdict_banner(report, task.kind)
        results.case_strip(report)
        class_bar.note(task)
        notes = []
        if task.restored:
            notes.append("Your last result on this problem, kept in this browser.")
        if progress.code(problem.slug) is not None and task.code != progress.code(problem.slug):
            notes.append("The editor has changed since this run.")
        if notes:
            st.caption(" ".join(notes))


_LOOP_WORDS = re.compile(r"\bPython (`for` |`while` )?loop", re.IGNORECASE)


def _python_loops(code: str) -> list[int]:
    """Lines of the ``for`` and ``while`` statements in ``code`` (none if it does not parse)."""
    try:
        tree = pysource.parse(code)
    except (SyntaxError, ValueError):
        return []
    return sorted({node.lineno for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While, ast.AsyncFor))})


def _annotations(problem: Problem, code: str) -> list[dict]:
    """Gutter marks in the editor for the last grading of this very code: error lines, requirement evidence."""
    task, report = runs.last_report(problem.slug)
    if report is None or task.code != code:
        return []
    marks = []
    line = results.error_line(report)
    if line is not None:
        marks.append({"row": line - 1, "column": 0, "type": "error",
                      "text": f"{report.verdict.label}: {unmarked(report.message)}"})
    loops = _python_loops(code)
    for req in report.requirements:
        if req.passed or not req.decides:
            continue
        message = unmarked(req.message)
        if loops and _LOOP_WORDS.search(message):  # the message is about the loop: mark the loop, not its body
            marks.extend({"row": n - 1, "column": 0, "type": "warning", "text": f"{req.id}: {message}"}
                         for n in loops)
            continue
        for ev in req.evidence:
            if ev.source_line:
                marks.append({"row": ev.source_line - 1, "column": 0, "type": "warning",
                              "text": f"{req.id}: {unmarked(ev.note or ev.primitive)} (jaxpr line {ev.jaxpr_line})"})
    return marks[:50]


def _settings() -> None:
    """Font size, key bindings and the presenter layout, remembered in this browser."""
    prefs = progress.prefs()
    before = dict(prefs)
    prefs["font_size"] = st.select_slider("Font size", FONT_SIZES, value=prefs["font_size"]
                                          if prefs["font_size"] in FONT_SIZES else 14,
                                          key="setting-font-size", help="Large sizes suit a projector.")
    prefs["keybinding"] = st.radio("Key bindings", list(KEYBINDINGS), horizontal=True,
                                   index=list(KEYBINDINGS).index(prefs["keybinding"])
                                   if prefs["keybinding"] in KEYBINDINGS else 0, key="setting-keybinding")
    prefs["live_completion"] = st.toggle(
        "Suggestions while typing", value=bool(prefs.get("live_completion", False)), key="setting-live-completion",
        help="Off (the default): Enter always starts a new line, and Ctrl+Space shows suggestions when you want "
             "them. On: suggestions pop up as you type, and Enter takes the highlighted one.")
    prefs["wrap"] = st.toggle("Wrap long lines", value=bool(prefs.get("wrap", True)), key="setting-wrap",
                              help="Long lines continue on the next row instead of running past the editor's edge.")
    prefs["presenter"] = st.toggle("Presenter layout", value=prefs["presenter"], key="setting-presenter",
                                   help="For a projector: the editor full width, the statement folded above it, "
                                        "the results below.")
    st.caption("Run grades the visible examples (Ctrl+Enter in the editor does too); Submit adds the hidden "
               "cases; Reset goes back to the starter code.")
    st.caption("Kept in this browser. The editor's colours follow the app's light or dark theme (menu ⋮ → Settings).")
    if prefs != before:
        progress.save_prefs()
        if prefs["presenter"] != before["presenter"]:
            st.rerun()


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
    """Wait briefly for the browser to send this problem's saved code; then carry on without it. The wait
    holds the editor's place (its height and the buttons'), so nothing below moves when the editor comes."""
    with st.container(height=editor_height(progress.prefs()["font_size"]) + 52, border=False, key="editor-placeholder"):
        st.info("Loading your saved code…", icon=":material/hourglass_top:")

    @st.fragment(run_every=0.5)
    def poll() -> None:
        state = st.session_state[progress.KEY]
        state["waited"] += 1
        if state["loaded"] or state["waited"] > 6:
            progress.give_up_waiting()
            st.rerun()
    poll()

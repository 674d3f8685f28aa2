"""The board's live part, drawn for a projector at 1920x1080 read from the back of a room: one problem's
figures in large type, each requirement with how many pass and the names of who fails it, who could not
run, the most common failure and who shares it, and the learners in dense rows (nickname, solved, last
verdict as a large white-on-dark badge with the requirements it fails, their last code one click away).

Learner text (nicknames, failure lines quoting an exception) is text: nicknames go through ``plain`` or
``html.escape``, failure lines through ``md`` (the grader's marks keep learner quotations in code spans).
"""
from __future__ import annotations

import html

import streamlit as st

import problems
from classroom.results import could_not_run, plain_failure
from classroom.summary import LearnerRow, ProblemBoard, duration, fastest_words
from grader.records import Verdict
from pages.views.markup import plain

PASS, FAIL = "#2f9e44", "#e03131"
BADGE = {  # (short word, background): white bold type on a dark fill, readable from the back of a room
    "accepted": ("Accepted", "#1b7a33"),
    "requirements_not_met": ("Not met", "#b35900"),
    "wrong_answer": ("Wrong answer", "#c41d1d"),
}
COULD_NOT_RUN_BADGE = "#5c3c92"
ROWS_AS_WIDGETS = 60
"""Up to this many learners, a row each with its own Code button; beyond, one HTML grid and a picker."""
CSS = """
.st-key-board { font-size: 1.25rem; }
.st-key-board [data-testid='stMarkdownContainer'] p { font-size: 1.25rem; }
/* Figures: large, and never cut: a value may wrap inside its column rather than end in an ellipsis. */
.st-key-board [data-testid='stMetricValue'], .st-key-board [data-testid='stMetricValue'] * {
  font-size: 2.6rem !important; font-weight: 700; line-height: 1.05; white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
.st-key-board [data-testid='stMetricLabel'] p { font-size: 1.25rem !important; white-space: normal !important; line-height: 1.2; }
.st-key-board [data-testid='stMetricLabel'], .st-key-board [data-testid='stMetricLabel'] * { overflow: visible !important;
  text-overflow: clip !important; }
.st-key-board h2 { font-size: 2.1rem !important; padding: 0.2rem 0 !important; }
.st-key-board h3 { font-size: 1.6rem !important; padding: 0.3rem 0 !important; }
.st-key-board [data-testid='stCaptionContainer'] p { font-size: 1.25rem; }
.jaxplay-board-code { font-size: 3.2rem; font-weight: 800; letter-spacing: 0.18em; line-height: 1.05; white-space: nowrap; }
.jaxplay-board-join { font-size: 1.3rem; }
.jaxplay-board-join a { font-size: 1.5rem; font-weight: 600; }
.jaxplay-join-link { overflow-wrap: normal; word-break: normal; }
.jaxplay-join-link .jaxplay-code-part { white-space: nowrap; }
[data-testid='stMainBlockContainer']:has(.st-key-board) { padding-top: 3.4rem; }
/* How fresh the board is: live, or stale and why (the browser's script counts the seconds on). */
.jaxplay-fresh { font-size: 1.25rem; line-height: 1.35; padding: 0.15rem 0.6rem; border-radius: 0.4rem; }
.jaxplay-fresh-live { color: rgba(128, 128, 128, 1); }
.jaxplay-fresh-stale, .jaxplay-fresh.jaxplay-stale { background: #fff3bf; color: #5c3c00; font-weight: 700; }
/* Requirements: one bar each, with the names of who fails it, large enough for a projector. */
.jaxplay-req { margin: 0 0 0.35rem 0; }
.jaxplay-req-head { display: flex; justify-content: space-between; flex-wrap: wrap; gap: 0 1rem; font-size: 1.35rem;
  font-weight: 700; }
.jaxplay-req-head code { font-size: 1.3rem; overflow-wrap: anywhere; }
.jaxplay-req-bar { height: 0.9rem; border-radius: 0.45rem; background: #e03131; overflow: hidden; margin: 0.15rem 0; }
.jaxplay-req-bar > div { height: 100%; background: #2f9e44; }
.jaxplay-req-who { font-size: 1.25rem; line-height: 1.35; }
.jaxplay-req-fails { color: #e03131; font-weight: 700; }
.jaxplay-nick { font-weight: 700; }
.jaxplay-names { font-size: 1.25rem; font-weight: 600; }
.jaxplay-failure { font-size: 1.25rem; line-height: 1.35; overflow-wrap: anywhere; }
.jaxplay-failure b { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
/* Learners: dense rows in two or three columns, so a class of 30 fits one 1920x1080 screen. A row is the
   nickname and the verdict's badge; under it, what its latest attempt fails, each requirement whole. */
.st-key-board-learners [data-testid='stVerticalBlock'] { gap: 0.22rem; }
.st-key-board-learners [class*='st-key-board-learner-'] { padding: 0.08rem 0.45rem !important; gap: 0 !important; }
.st-key-board-learners [class*='st-key-board-learner-'] [data-testid='stHorizontalBlock'] { gap: 0.4rem; }
.st-key-board-learners [data-testid='stMarkdownContainer'] { margin-bottom: 0 !important; }
.st-key-board-learners [data-testid='stMarkdownContainer'] p { font-size: 1.25rem; margin: 0; line-height: 1.25; }
.st-key-board-learners button { min-height: 1.75rem; padding: 0 0.5rem; }
.st-key-board-learners button p { font-size: 1.05rem !important; }
.jaxplay-row-head { display: flex; flex-wrap: wrap; align-items: center; gap: 0 0.5rem; font-size: 1.25rem;
  line-height: 1.2; }
.jaxplay-row-head .jaxplay-nick { overflow-wrap: anywhere; }
.jaxplay-tries { font-size: 1.05rem; opacity: 0.75; white-space: nowrap; }
.jaxplay-row-fails { font-size: 1.25rem; line-height: 1.2; font-weight: 600; color: #c92a2a; }
.jaxplay-fail-id { margin-right: 0.55rem; display: inline-block; max-width: 100%; overflow-wrap: anywhere; }
.jaxplay-row-note { font-size: 1.25rem; line-height: 1.25; opacity: 0.85; }
.jaxplay-verdict { display: inline-block; padding: 0 0.45rem; border-radius: 0.4rem; color: #fff;
  font-weight: 800; font-size: 1.25rem; line-height: 1.3; white-space: nowrap; }
.jaxplay-fails { font-size: 1.25rem; opacity: 0.9; }
.jaxplay-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(20rem, 1fr)); gap: 0.2rem 0.8rem; }
.jaxplay-cell { font-size: 1.1rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; padding: 0.1rem 0; }
.jaxplay-cell .jaxplay-verdict { font-size: 1rem; }
.jaxplay-cell .jaxplay-fails { font-size: 1rem; }
[data-testid='stDialog'] pre code, [data-testid='stDialog'] code { font-size: 17px !important;
  line-height: 1.5 !important; }
"""


def title(slug: str) -> str:
    try:
        return problems.get(slug).title
    except Exception:  # noqa: BLE001 - a problem removed since it was recorded: its slug
        return slug


def requirement_sentences(slug: str) -> list[tuple[str, str]]:
    try:
        return [(r.id, r.text) for r in problems.get(slug).requirements if not r.advice]
    except Exception:  # noqa: BLE001 - as above
        return []


def _names(names: tuple[str, ...], limit: int = 12) -> str:
    """Nicknames as escaped HTML, the first ``limit`` of them and how many more."""
    shown = ", ".join(html.escape(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def problem_panel(board: ProblemBoard) -> None:
    """One problem: joined / ran / solved, each requirement with who fails it, who could not run, the most
    common failure and who shares it, the time to accept."""
    st.subheader(title(board.problem), anchor=False)
    cols = st.columns([1, 1, 1.25, 1.75])
    cols[0].metric("Joined", board.joined)
    cols[1].metric("Ran it", board.ran)
    cols[2].metric("Solved (Submit accepted)", board.accepted)
    cols[3].metric("Time to first accept (median)", duration(board.median_to_accept_s),
                   help="From a learner's first Run or Submit of the problem to their first accepted Submit, over "
                        "those who tried before; a solve on the very first attempt has no such time.")
    if board.first_try:
        st.caption(f"{board.first_try} solved it with their very first attempt (a Submit): not counted in the median.")
    with st.container(key="board-requirements"):
        st.markdown("**Requirements** · who fails each, on their latest Run or Submit")
        _requirements(board)
    if board.could_not_run:
        with st.container(border=True, key="board-could-not-run"):
            st.markdown(f'<div class="jaxplay-names">Could not run ({len(board.could_not_run)}): '
                        f"{_names(board.could_not_run)}</div>", unsafe_allow_html=True)
            st.caption("Stopped before any requirement was checked: a syntax error, an exception, a time or "
                       "memory limit.")
    with st.container(border=True, key="board-failure"):
        if board.common_failure:
            people = board.common_failure_count
            st.markdown(f"**Most common failure** · {people} learner{'s' if people != 1 else ''} not yet through, "
                        "on their latest attempt:")
            st.markdown(f'<div class="jaxplay-names">{_names(board.common_failure_names)}</div>',
                        unsafe_allow_html=True)
            st.markdown(f'<div class="jaxplay-failure">{_failure_html(board)}</div>', unsafe_allow_html=True)
        else:
            st.markdown("**Most common failure** · " + ("none so far." if board.ran else "nobody has run this problem yet."))
    with st.container(border=True, key="board-accept"):
        if board.fastest:
            name, _ = board.fastest
            st.markdown(f"**First accepted Submit** · Fastest: **{plain(name)}**, {fastest_words(board)}.")
        else:
            st.markdown("**First accepted Submit** · not yet.")


def _failure_html(board: ProblemBoard) -> str:
    """The most common failure as plain text (escaped HTML), its requirement's id in a code font, never cut."""
    text = plain_failure(board.common_failure)
    rid = board.common_failure_requirement
    if rid and text.startswith(rid):
        return f"<b>{html.escape(rid)}</b>{html.escape(text[len(rid):])}"
    return html.escape(text)


def _requirements(board: ProblemBoard) -> None:
    if not board.requirements or not board.ran:
        st.caption("Fills in as learners run the problem.")
        return
    parts = []
    for r in board.requirements:
        checked = r.passing + r.failing
        share = 100.0 * r.passing / checked if checked else 0.0
        who = (f'<span class="jaxplay-req-fails">✗ {_names(r.failing_names)}</span>' if r.failing_names else
               ("✓ everyone who ran passes" if checked else "not checked yet"))
        parts.append(f'<div class="jaxplay-req" data-requirement="{html.escape(r.id, quote=True)}">'
                     f'<div class="jaxplay-req-head"><code>{html.escape(r.id)}</code>'
                     f"<span>{r.passing} of {checked} pass</span></div>"
                     f'<div class="jaxplay-req-bar"><div style="width:{share:.1f}%"></div></div>'
                     f'<div class="jaxplay-req-who">{who}</div></div>')
    st.markdown("".join(parts), unsafe_allow_html=True)


def badge(verdict: str) -> str:
    """The verdict as a large white-on-dark badge (HTML)."""
    if could_not_run(verdict):
        word = Verdict(verdict).label if verdict in Verdict._value2member_map_ else verdict
        return f'<span class="jaxplay-verdict" style="background:{COULD_NOT_RUN_BADGE}">{html.escape(word)}</span>'
    word, colour = BADGE.get(verdict, (verdict, "#c41d1d"))
    return f'<span class="jaxplay-verdict" style="background:{colour}">{html.escape(word)}</span>'


def learners_table(rows: list[LearnerRow], on_code, *, show_problem: bool = True, on_remove=None) -> None:
    """Every learner: nickname, problems solved, last verdict as a large badge with the requirements it fails
    (and of which problem, when the class has tried more than one), attempts, and a button for their last
    code. Two columns from 9 learners (30 fit one projector screen beside the figures), three from 31."""
    st.subheader(f"Learners ({len(rows)})", anchor=False)
    if not rows:
        st.markdown("Nobody has joined yet: learners open the join link and pick a nickname.")
        return
    if len(rows) > ROWS_AS_WIDGETS:
        _learners_grid(rows, on_code, show_problem)
        if on_remove is not None:
            _remove_picker(rows, on_remove)
        return
    with st.container(key="board-learners"):
        n = 1 if len(rows) <= 8 else 2 if len(rows) <= 30 else 3
        halves = st.columns(n, gap="medium") if n > 1 else [st.container()]
        per = -(-len(rows) // len(halves))
        for half, chunk in zip(halves, (rows[i:i + per] for i in range(0, len(rows), per))):
            with half:
                for row in chunk:
                    _learner_row(row, on_code, show_problem, n)
    if on_remove is not None:
        _remove_picker(rows, on_remove)


def _learners_grid(rows: list[LearnerRow], on_code, show_problem: bool) -> None:
    """A large class: every learner in one HTML grid (one element, however many rows: the board stays
    fast at 300), and their last code through a picker."""
    cells = []
    for row in rows:
        if row.last is None:
            state, detail = '<span class="jaxplay-fails">no Run yet</span>', ""
        else:
            state = badge(row.last.verdict)
            detail = " ".join(f"✗ {r}" for r in row.last.failed)
            if show_problem:
                detail = (detail + " · " if detail else "") + title(row.last.problem)
        cells.append(f'<div class="jaxplay-cell" data-learner="{row.learner_id}">'
                     f'<span class="jaxplay-nick">{html.escape(row.nickname)}</span> '
                     f"{state} <span class=\"jaxplay-fails\">{html.escape(detail)}</span></div>")
    st.markdown(f'<div class="jaxplay-grid">{"".join(cells)}</div>', unsafe_allow_html=True)
    names = {row.learner_id: row.nickname for row in rows if row.last is not None}
    picked = st.selectbox("Last code of", list(names), format_func=lambda i: names[i], index=None,
                          key="board-code-of", placeholder="Choose a nickname")
    if picked is not None and st.session_state.get("board-code-shown") != picked:
        st.session_state["board-code-shown"] = picked
        on_code(picked)


def _learner_row(row: LearnerRow, on_code, show_problem: bool, columns: int) -> None:
    """One learner: their nickname, attempts and the verdict's badge (and their code one click away); under
    it, across the row's whole width, each requirement their latest attempt fails, whole (an id moves to the
    next line rather than end in an ellipsis)."""
    with st.container(key=f"board-learner-{row.learner_id}", border=True):
        cols = st.columns([10, 2] if columns < 3 else [8, 2], vertical_alignment="center", gap="small")
        tries = f"{row.attempts} attempt{'s' if row.attempts != 1 else ''}" + (f" · ✓{row.solved}" if row.solved else "")
        head = (f'<span class="jaxplay-nick">{html.escape(row.nickname)}</span>'
                f'<span class="jaxplay-tries">· {html.escape(tries)}</span>')
        below = ""
        if row.last is None:
            head += '<span class="jaxplay-tries">no Run yet</span>'
        else:
            last = row.last
            head += badge(last.verdict)
            if last.failed:
                below = '<div class="jaxplay-row-fails">' + " ".join(
                    f'<span class="jaxplay-fail-id">✗ {html.escape(r)}</span>' for r in last.failed) + "</div>"
            if show_problem:
                below += f'<div class="jaxplay-row-note">{html.escape(title(last.problem))}</div>'
        cols[0].markdown(f'<div class="jaxplay-row-head">{head}</div>', unsafe_allow_html=True)
        if row.last is not None:
            cols[1].button("Code", key=f"board-code-{row.learner_id}", width="stretch",
                           on_click=on_code, args=(row.learner_id,), help="Their last code, read-only")
        if below:  # the row's whole width: two requirements side by side on one line
            st.markdown(below, unsafe_allow_html=True)


def _remove_picker(rows: list[LearnerRow], on_remove) -> None:
    """Take one learner off the board (a joke name, a flood): their rows go, their page says so."""
    with st.expander("Remove a learner"):
        names = {row.learner_id: row.nickname for row in rows}
        cols = st.columns([4, 2], vertical_alignment="bottom")
        who = cols[0].selectbox("Learner", list(names), format_func=lambda i: names[i], index=None,
                                key="board-remove-who", placeholder="Choose a nickname")
        if cols[1].button("Remove from class", key="board-remove", icon=":material/person_remove:",
                          disabled=who is None):
            on_remove(who)

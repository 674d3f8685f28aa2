"""The board's live part, drawn for a projector at 1920x1080 read from the back of a room: one problem's
figures in large type, its requirements as a chart of how many pass, the most common failure, and the
learners (nickname, solved, last verdict, attempts, their last code one click away).

Learner text (nicknames, failure lines quoting an exception) is text: nicknames go through ``plain``,
failure lines through ``md`` (the grader's marks keep learner quotations in code spans), the chart's labels
are requirement ids of the problem.
"""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import problems
from classroom.summary import LearnerRow, ProblemBoard, duration
from grader.records import Verdict
from pages.markup import md, plain

PASS, FAIL = "#2f9e44", "#e03131"
VERDICT_COLOR = {"accepted": "green", "requirements_not_met": "orange", "wrong_answer": "red"}
CSS = """
.st-key-board { font-size: 1.3rem; }
.st-key-board [data-testid='stMarkdownContainer'] p { font-size: 1.3rem; }
.st-key-board [data-testid='stMetricValue'], .st-key-board [data-testid='stMetricValue'] * {
  font-size: 4.2rem !important; font-weight: 700; line-height: 1.05; }
.st-key-board [data-testid='stMetricLabel'] p { font-size: 1.35rem !important; }
.st-key-board h2 { font-size: 2.3rem !important; }
.st-key-board h3 { font-size: 1.7rem !important; }
.st-key-board [data-testid='stCaptionContainer'] p { font-size: 1.05rem; }
.st-key-board-learners [data-testid='stMarkdownContainer'] p { font-size: 1.3rem; margin: 0; }
.st-key-board-learners [data-testid='stMarkdownContainer'] p span { font-size: 1.2rem; }
.jaxplay-board-code { font-size: 3.2rem; font-weight: 800; letter-spacing: 0.18em; line-height: 1.1; }
.jaxplay-board-join a { font-size: 1.6rem; font-weight: 600; word-break: break-all; }
"""


def title(slug: str) -> str:
    try:
        return problems.get(slug).title
    except Exception:  # noqa: BLE001 - a problem removed since it was recorded: its slug
        return slug


def requirement_sentences(slug: str) -> list[tuple[str, str]]:
    try:
        return [(r.id, r.text) for r in problems.get(slug).requirements]
    except Exception:  # noqa: BLE001 - as above
        return []


def problem_panel(board: ProblemBoard) -> None:
    """One problem: joined / ran / solved, the requirement chart, the most common failure, time to accept."""
    st.subheader(title(board.problem), anchor=False)
    cols = st.columns(4)
    cols[0].metric("Joined", board.joined)
    cols[1].metric("Ran it", board.ran)
    cols[2].metric("Solved (Submit accepted)", board.accepted)
    cols[3].metric("Time to first accept (median)", duration(board.median_to_accept_s))
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown("**Requirements: how many pass** (each learner's latest Run or Submit)")
        _requirement_chart(board)
    with right:
        with st.container(border=True, key="board-failure"):
            st.markdown("**Most common failure**")
            if board.common_failure:
                st.markdown(md(board.common_failure))
                people = board.common_failure_count
                st.caption(f"{people} learner{'s' if people != 1 else ''} not yet through, on their latest attempt")
            else:
                st.markdown("None so far." if board.ran else "Nobody has run this problem yet.")
        with st.container(border=True, key="board-accept"):
            st.markdown("**First accepted Submit**")
            if board.fastest:
                name, seconds = board.fastest
                st.markdown(f"Fastest: **{plain(name)}**, {duration(seconds)} after their first Run.")
                st.caption("Times run from a learner's first Run or Submit of the problem to their first "
                           "accepted Submit.")
            else:
                st.markdown("Not yet.")


def _requirement_chart(board: ProblemBoard) -> None:
    if not board.requirements or not board.ran:
        st.caption("The chart fills in as learners run the problem.")
        return
    rows = []
    for r in board.requirements:
        rows.append({"requirement": r.id, "outcome": "pass", "learners": r.passing, "order": 0})
        rows.append({"requirement": r.id, "outcome": "fail", "learners": r.failing, "order": 1})
    frame = pd.DataFrame(rows)
    y = alt.Y("requirement:N", title=None, sort=[r.id for r in board.requirements],
              axis=alt.Axis(labelFontSize=22, labelLimit=420))
    bars = alt.Chart(frame).mark_bar(size=38).encode(
        x=alt.X("sum(learners):Q", title="learners", scale=alt.Scale(domain=[0, max(board.ran, 1)]),
                axis=alt.Axis(labelFontSize=18, titleFontSize=18, tickMinStep=1, format="d")),
        y=y,
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["pass", "fail"], range=[PASS, FAIL]),
                        legend=alt.Legend(orient="bottom", labelFontSize=18, title=None)),
        order=alt.Order("order:Q"),
        tooltip=["requirement", "outcome", "learners"])
    labels = alt.Chart(pd.DataFrame([{"requirement": r.id, "text": f"{r.passing} of {board.ran} pass"}
                                     for r in board.requirements])).mark_text(
        align="left", dx=8, fontSize=22, fontWeight="bold").encode(
        y=y, x=alt.value(0), text="text:N", color=alt.value("white"))
    st.altair_chart((bars + labels).properties(height=64 * len(board.requirements) + 40), width="stretch")
    st.caption(" · ".join(f"{r.id}: {r.passing} pass, {r.failing} fail" for r in board.requirements))


def learners_table(rows: list[LearnerRow], on_code, *, show_problem: bool = True) -> None:
    """Every learner: nickname, problems solved, last verdict (and of which problem, when the class has tried
    more than one), attempts, and a button for their last code."""
    st.subheader(f"Learners ({len(rows)})", anchor=False)
    if not rows:
        st.markdown("Nobody has joined yet: learners open the join link and pick a nickname.")
        return
    with st.container(key="board-learners"):
        halves = st.columns(2, gap="large") if len(rows) > 8 else [st.container()]
        per = -(-len(rows) // len(halves))
        for half, chunk in zip(halves, (rows[i:i + per] for i in range(0, len(rows), per))):
            with half:
                for row in chunk:
                    _learner_row(row, on_code, show_problem)


def _learner_row(row: LearnerRow, on_code, show_problem: bool) -> None:
    with st.container(key=f"board-learner-{row.learner_id}", border=True):
        cols = st.columns([4, 2, 5, 2, 2], vertical_alignment="center")
        cols[0].markdown(f"**{plain(row.nickname)}**")
        cols[1].markdown(f"✓ {row.solved}")
        if row.last is None:
            cols[2].markdown(":gray[no Run yet]")
        else:
            word = Verdict(row.last.verdict).label if row.last.verdict in Verdict._value2member_map_ else row.last.verdict
            colour = VERDICT_COLOR.get(row.last.verdict, "red")
            where = f" :gray[{plain(title(row.last.problem))}]" if show_problem else ""
            cols[2].markdown(f":{colour}-badge[{plain(word)}]{where}")
        cols[3].markdown(f"{row.attempts} attempt{'s' if row.attempts != 1 else ''}")
        if row.last is not None:
            cols[4].button("Code", key=f"board-code-{row.learner_id}", icon=":material/code:",
                           on_click=on_code, args=(row.learner_id,), help="Their last code, read-only")

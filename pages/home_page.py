"""Home: every problem, grouped by topic, with its difficulty, tags, summary and this browser's solved mark.

Twenty problems read well with three filters (difficulty, topic, progress) and a first row for a newcomer:
the Easy problems, linked before anything else. Topics come in the order of their easiest problem, and the
easiest problems first within each topic.
"""
from __future__ import annotations

import streamlit as st

import problems
from pages.services import progress
from pages.nav import DIFFICULTY_COLOR, badges, page_for

DIFFICULTIES = ("Easy", "Medium", "Hard")
STATUSES = ("Not solved", "Solved")


def render() -> None:
    progress.sync()
    solved = progress.solved()
    registry = problems.registry()
    st.title("JAX Playground")
    st.markdown("Practice JAX the way it is used: each problem checks that your numbers are right **and** that "
                "the program JAX traces from your code has the structure the problem asks for — one `lax.scan`, "
                "a checkpoint inside `grad`, and so on.")
    done = sum(slug in solved for slug in registry)
    st.caption(f"{len(registry)} problems · {done} solved in this browser")
    _start_here(registry, solved)

    groups = problems.by_topic()
    order = sorted(groups, key=lambda t: (min(problems.DIFFICULTY_ORDER.get(p.difficulty, 9) for p in groups[t]),
                                          t.lower()))
    with st.container(key="home-filters"):
        left, middle, right = st.columns([2, 3, 2], vertical_alignment="bottom")
        with left:
            levels = st.pills("Difficulty", DIFFICULTIES, selection_mode="multi", key="home-difficulty")
        with middle:  # eleven topics: a list that opens, not a row of pills cut off at the column's edge
            topics = st.multiselect("Topic", order, key="home-topic", placeholder="All topics")
        with right:
            status = st.pills("Progress", STATUSES, selection_mode="multi", key="home-status")

    def keep(p: problems.Problem) -> bool:
        return ((not levels or p.difficulty in levels) and (not topics or p.topic in topics) and
                (not status or ("Solved" if p.slug in solved else "Not solved") in status))

    shown = 0
    for topic in order:
        group = [p for p in groups[topic] if keep(p)]
        if not group:
            continue
        st.subheader(topic, anchor=False)
        for problem in group:
            _card(problem, solved)
        shown += len(group)
    if shown == 0:
        st.info("No problem matches these filters. Clear one to see more.", icon=":material/filter_alt_off:")
    elif shown < len(registry):
        st.caption(f"Showing {shown} of {len(registry)} problems.")


def _start_here(registry: dict[str, problems.Problem], solved: set[str]) -> None:
    """New to the track? The Easy problems, as links, before the filters and the long list."""
    easy = sorted((p for p in registry.values() if p.difficulty == "Easy"), key=lambda p: p.title)
    if not easy:
        return
    with st.container(border=True, key="home-start-here"):
        st.markdown(f":{DIFFICULTY_COLOR['Easy']}[:material/flag:] **New to JAX transformations? Start here.**")
        columns = st.columns(len(easy))
        for column, problem in zip(columns, easy):
            with column:
                st.page_link(page_for(problem.slug), label=problem.title,
                             icon=":material/check_circle:" if problem.slug in solved else ":material/code:")


def _card(problem: problems.Problem, solved: set[str]) -> None:
    slug = problem.slug
    with st.container(border=True, key=f"problem-card-{slug}"):
        left, right = st.columns([5, 1], vertical_alignment="center")
        with left:
            st.page_link(page_for(slug), label=f"**{problem.title}**",
                         icon=":material/check_circle:" if slug in solved else ":material/code:")
            st.markdown(badges(problem))
            st.caption(problem.summary)
        with right:
            if slug in solved:
                st.markdown(":green-badge[:material/check: Solved]")
            elif progress.code(slug) not in (None, problem.starter):
                st.markdown(":orange-badge[:material/edit: In progress]")
            else:
                st.caption("Not started")

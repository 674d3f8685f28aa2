"""Home: every problem, grouped by topic, with its difficulty, tags, summary and this browser's solved mark."""
from __future__ import annotations

import streamlit as st

import problems
from pages import progress
from pages.nav import badges, page_for


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
    for topic, group in problems.by_topic().items():
        st.subheader(topic, anchor=False)
        for problem in group:
            _card(problem, solved)


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

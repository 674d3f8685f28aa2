"""The problem statement as the seed page shows it: badges, description with math, examples, hints one at a
time, requirements, constraints and similar problems (linked when they exist here)."""
from __future__ import annotations

import json

import streamlit as st

import problems
from pages.services import progress
from pages.views.markup import plain
from pages.nav import DIFFICULTY_COLOR, badges, page_for
from problems import Problem


def header(problem: Problem) -> None:
    solved = problem.slug in progress.solved()
    st.title(problem.title, anchor=False)
    st.markdown(badges(problem) + (" :green-badge[:material/check: Solved]" if solved else ""))


def statement(problem: Problem) -> None:
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
            if req.advice:  # said as advice: it never decides the verdict
                st.markdown(f"- **`{req.id}`** (advice) — {req.text}")
            else:
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


SIMILAR_SHOWN = 4
"""At most this many similar problems: the few that share a technique, not half the track."""


def ranked_similar(problem: Problem) -> list[Problem]:
    """The few problems here most like this one, by shared technique first and the track's own order next
    (issue 32: a single shared tag put the straight-through estimator, which shares only ``autodiff``, beside
    gradient accumulation, and left out the moving average with scan and the optimizers that follow it).

    A problem is a candidate when the two are linked: it uses the same main technique (the topic:
    ``lax.scan``), or the track lists each as similar to the other, or this problem lists it and they share a
    tag besides ``JAX``. Ranked: the same main technique first, then a link both ways, then this problem's own
    list order (the track's order for it; a problem that lists this one comes after those it lists), then more
    shared tags, then easier first. At most ``SIMILAR_SHOWN``."""
    registry = problems.registry()
    by_title = {p.title: p for p in registry.values()}
    mine = set(problem.tags) - {"JAX"}
    listed = [by_title[s.title].slug for s in problem.similar if s.title in by_title]
    scored = []
    for other in registry.values():
        if other.slug == problem.slug:
            continue
        back = problem.title in {s.title for s in other.similar}
        forth = other.slug in listed
        same = other.topic == problem.topic and problem.topic != "JAX"
        shared = len(mine & (set(other.tags) - {"JAX"}))
        if not (same or (back and forth) or (forth and shared)):
            continue
        place = listed.index(other.slug) if forth else len(listed) + next(
            i for i, s in enumerate(other.similar) if s.title == problem.title) if back else 99
        scored.append(((not same, not (back and forth), place, -shared,
                        problems.DIFFICULTY_ORDER.get(other.difficulty, 9), other.title), other))
    return [p for _, p in sorted(scored, key=lambda t: t[0])][:SIMILAR_SHOWN]


def _similar(problem: Problem) -> None:
    """The few similar problems that exist here and share a technique, as links; titles listed but not written
    yet, marked as coming."""
    if not problem.similar:
        return
    by_title = {p.title: p for p in problems.registry().values()}
    ranked = [p for p in ranked_similar(problem) if page_for(p.slug) is not None]
    coming = [s for s in problem.similar if s.title not in by_title][:SIMILAR_SHOWN]
    if not ranked and not coming:
        return
    st.subheader("Similar problems", anchor=False)
    with st.container(key="similar-existing"):
        for target in ranked:
            cols = st.columns([4, 1])
            cols[0].page_link(page_for(target.slug), label=target.title, icon=":material/code:")
            cols[1].markdown(f":{DIFFICULTY_COLOR.get(target.difficulty, 'gray')}-badge[{target.difficulty}]")
    if coming:
        with st.container(key="similar-coming"):
            st.caption("Coming to the playground:")
            for sim in coming:
                color = DIFFICULTY_COLOR.get(sim.difficulty, "gray")
                st.markdown(f":gray[{plain(sim.title)}] :{color}-badge[{sim.difficulty}] :gray-badge[coming soon]")

"""The JAX Playground: a home page and one page per problem, at the URL path of the problem's slug.

Run with ``streamlit run app.py``. Pages live in ``pages/`` and only draw what ``grader`` and
``problems`` return; a new folder under ``problems/`` becomes a new page here with no other change.

The folder is not called ``pages/``: Streamlit 1.67 still treats a ``pages/`` folder beside the main script
as an old-style multipage app on the first run after the server starts, and the first visitor who opens a
problem's URL then sees a "Page not found" dialog.
"""
from __future__ import annotations

import functools

import streamlit as st

import problems
from streamlit.runtime.pages_manager import PagesManager

from pages import home_page, nav, problem, sidebar
from pages.browser_bridge import STALE_NOT_FOUND

if PagesManager.uses_pages_directory:  # true only until st.navigation runs once in this server
    st.session_state[STALE_NOT_FOUND] = True

# The sidebar (isolation layers, grader load) opens by itself only when a layer is missing: then it matters.
st.set_page_config(page_title="JAX Playground", page_icon=":material/function:", layout="wide",
                   initial_sidebar_state="expanded" if sidebar.needs_attention() else "collapsed")
# Less empty space above the title: the editor and the verdict should fit one screen.
st.html("<style>[data-testid='stMainBlockContainer'] { padding-top: 2.5rem; }</style>")


def _problem_page(slug: str) -> st.Page:
    render = functools.partial(problem.render, slug)
    p = problems.get(slug)
    return st.Page(render, title=p.title, url_path=slug, icon=":material/code:")


home_page = st.Page(home_page.render, title="Home", url_path="home", icon=":material/home:", default=True)
sections = {topic: [_problem_page(p.slug) for p in group] for topic, group in problems.by_topic().items()}
problem_pages = [page for group in sections.values() for page in group]
for page in problem_pages:
    nav.register(page.url_path, page)
nav.register("", home_page)

page = st.navigation({"": [home_page], **sections}, position="top")
sidebar.render()
page.run()

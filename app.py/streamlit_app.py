"""The JAX Playground: a home page and one page per problem, at the URL path of the problem's slug.

Run from the repository's root with ``streamlit run app.py``: ``app.py`` is this folder, and Streamlit runs a
folder's ``streamlit_app.py``. Pages live in the ``pages`` package and only draw what ``grader`` and ``problems``
return; a new folder under ``problems/`` becomes a new page here with no other change.

Why the app's entry is a folder named ``app.py`` rather than a file: Streamlit treats a folder named ``pages`` *beside the main
script* as an old-style multipage app, and on the first run after the server starts it routes by that
folder (a "Page not found" dialog for a problem's URL, a sidebar listing the modules in it). Here the main
script's folder holds no ``pages``, so Streamlit never enters that mode, and ``st.navigation`` is the only
router from the very first request. ``tests/test_entry.py`` keeps it that way.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # Streamlit puts this script's folder on sys.path, not the repository's root
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

import problems  # noqa: E402
from pages import board_page, home_page, nav, problem, teacher_page  # noqa: E402
from pages.services import progress, runs  # noqa: E402
from pages.views import class_bar, isolation, layout  # noqa: E402

# Learners get the page without a sidebar: nothing in it is for them (the isolation status is a badge).
# The icon is a file here, not a Material icon: Streamlit fetches those from a font CDN, and the page must
# load whole without the internet.
st.set_page_config(page_title="JAX Playground", page_icon=str(Path(__file__).with_name("icon.png")), layout="wide",
                   initial_sidebar_state="collapsed")
layout.style()


def _problem_page(slug: str) -> st.Page:
    render = functools.partial(problem.render, slug)
    p = problems.get(slug)
    return st.Page(render, title=p.title, url_path=slug, icon=":material/code:")


home = st.Page(home_page.render, title="Home", url_path="home", icon=":material/home:", default=True)
sections = {topic: [_problem_page(p.slug) for p in group] for topic, group in problems.by_topic().items()}
for page in (p for group in sections.values() for p in group):
    nav.register(page.url_path, page)
nav.register("", home)
teach = st.Page(teacher_page.render, title="Teach a class", url_path="class", icon=":material/co_present:")
board = st.Page(board_page.render, title="Class board", url_path="board", icon=":material/leaderboard:",
                visibility="hidden")  # opened by its link, which carries the class's key
nav.register("class", teach)
nav.register("board", board)

runs.warm_graders()  # once per server, with its first page view: the first Run need not wait for JAX to load
runs.freeze_loaded_objects()  # once per server: the collection after each script run skips what is loaded now
page = st.navigation({"": [home], **sections, "Teach": [teach, board]}, position="top")
bar = class_bar.slot(offer_code=page.url_path not in ("class", "board"))  # join form, chip or Class code field
page.run()
class_bar.render(bar, join=page.url_path != "board", offer_code=page.url_path != "class")
isolation.footer()
progress.flush()  # last: what this run decided (code, a verdict, a solved mark) reaches the browser's storage

"""Streamlit never runs its old multipage mode here: no ``pages`` folder sits beside the main script.

Streamlit 1.67 decides once per server, from ``<main script's folder>/pages``, whether the app is an
old-style multipage app; if it is, the first visitor of a problem's URL gets a "Page not found" dialog and a
sidebar of the modules in that folder (``tests/test_browser.py`` watches a cold first visit for both).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "app.py" / "streamlit_app.py"


def test_the_main_script_has_no_pages_folder_beside_it():
    assert MAIN.is_file()
    assert not (MAIN.parent / "pages").exists()
    assert (ROOT / "pages" / "__init__.py").is_file(), "pages/ stays the app's package of views"
    assert (ROOT / "app.py").is_dir(), "a main script file at the root would sit beside pages/"


def test_the_readme_runs_that_script():
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^streamlit run app\.py$", readme, re.M)
    assert "PagesManager" not in MAIN.read_text() and "Page not found" not in (ROOT / "pages" / "services" / "browser_bridge.py").read_text()

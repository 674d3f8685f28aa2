"""The app's pages by problem slug, so one page can link to another (set up by ``app.py/streamlit_app.py`` on every run)."""
from __future__ import annotations

from typing import Any

_PAGES: dict[str, Any] = {}


def register(slug: str, page: Any) -> None:
    _PAGES[slug] = page


def page_for(slug: str) -> Any | None:
    return _PAGES.get(slug)


DIFFICULTY_COLOR = {"Easy": "green", "Medium": "orange", "Hard": "red"}


def badges(problem: Any) -> str:
    """The difficulty and tag badges of a problem, as Markdown."""
    marks = [f":{DIFFICULTY_COLOR.get(problem.difficulty, 'gray')}-badge[{problem.difficulty}]"]
    return " ".join(marks + [f":gray-badge[{tag}]" for tag in problem.tags])

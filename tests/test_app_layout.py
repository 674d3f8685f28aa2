"""The pages/ folder and the app's URL paths must not collide (see app.py's docstring)."""
from pathlib import Path

import problems

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_in_pages_is_named_like_an_app_url():
    modules = {p.stem for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py"}
    urls = {"home"} | set(problems.registry())
    assert not modules & urls

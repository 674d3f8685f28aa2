"""This browser's progress: the code of each problem and which problems it has solved.

The truth lives in the browser's ``localStorage`` (see ``browser_bridge``), so it survives reloads and
server restarts and nothing personal is kept on the server. This session keeps a copy in session state,
filled once from the browser, updated as the learner edits, and written back through the bridge.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from pages.browser_bridge import bridge

KEY = "jaxplay_progress"


def _state() -> dict[str, Any]:
    return st.session_state.setdefault(KEY, {"loaded": False, "code": {}, "solved": set(), "pending": {},
                                             "waited": 0})


def loaded() -> bool:
    """Whether the browser's saved progress has arrived (or was given up on)."""
    return _state()["loaded"]


def give_up_waiting() -> None:
    """No JavaScript answer (blocked storage, old browser): carry on with an empty store."""
    _state()["loaded"] = True


def code(slug: str) -> str | None:
    return _state()["code"].get(slug)


def set_code(slug: str, text: str) -> None:
    _state()["code"][slug] = text


def forget_code(slug: str) -> None:
    """Back to the starter: drop the session copy and the browser's."""
    state = _state()
    state["code"].pop(slug, None)
    state["pending"].setdefault("code", {})[slug] = None


def solved() -> set[str]:
    return set(_state()["solved"])


def mark_solved(slug: str) -> None:
    state = _state()
    state["solved"].add(slug)


def sync(*, slug: str | None = None, editor_key: str | None = None,
         button_keys: tuple[str, ...] = ()) -> Any:
    """Mount the bridge (writing pending changes) and merge what the browser reported; returns its result."""
    state = _state()
    write = dict(state["pending"])
    if state["solved"]:
        write["solved"] = sorted(state["solved"])
    state["pending"] = {}
    result = bridge(slug=slug, editor_key=editor_key, button_keys=button_keys, write=write or None)
    stored = result.get("stored") if hasattr(result, "get") else None
    if stored and not state["loaded"]:
        for s, text in (stored.get("code") or {}).items():
            if isinstance(text, str):
                state["code"].setdefault(s, text)
        state["solved"] |= {s for s in stored.get("solved") or [] if isinstance(s, str)}
        state["loaded"] = True
    return result

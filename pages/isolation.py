"""The isolation status, for whoever asks: a small badge at the foot of every page, details in an expander.

Learners need none of it to practise, so it never takes room from the statement or the editor (no sidebar);
an operator reads the details here or, better, from ``python -m grader doctor``.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from grader import sandbox
from pages.markup import plain


@st.cache_resource(ttl=600, show_spinner=False)
def _isolation() -> dict[str, Any]:
    return sandbox.probe()


def status() -> tuple[str, str]:
    """(colour, words) of the badge: green when every layer works, orange when some are off, red when a
    required one is missing (then no code runs at all)."""
    info = _isolation()
    off = [name for name, v in info["layers"].items() if not v["ok"]]
    if info["missing"]:
        return "red", "Sandbox unavailable"
    if off:
        return "orange", f"Sandboxed ({len(off)} layer{'s' if len(off) != 1 else ''} off)"
    return "green", "Sandboxed"


def footer() -> None:
    """The badge, and the layers behind it in a closed expander."""
    info = _isolation()
    colour, words = status()
    with st.container(key="isolation-footer"):
        st.markdown(f":{colour}-badge[:material/shield: {words}]")
        with st.expander("Isolation details (for operators)"):
            st.caption(plain(info["note"]))
            for name, v in info["layers"].items():
                st.markdown(f"{'✓' if v['ok'] else '✗'} **{plain(name)}**: {plain(v['detail'])}")
            st.caption("Check a deployment with `python -m grader doctor`.")

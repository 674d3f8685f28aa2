"""The sidebar: which isolation layers guard learner code here, and how busy the graders are."""
from __future__ import annotations

from typing import Any

import streamlit as st

from grader import sandbox
from grader.workers import shared_pool


@st.cache_resource(ttl=600, show_spinner=False)
def _isolation() -> dict[str, Any]:
    return sandbox.probe()


def needs_attention() -> bool:
    """True when some isolation layer does not work here (the learner should see it without asking)."""
    return any(not v["ok"] for v in _isolation()["layers"].values())


def render() -> None:
    info = _isolation()
    with st.sidebar:
        st.markdown("#### Grader")
        layers = info["layers"]
        on = [name for name, v in layers.items() if v["ok"]]
        off = [name for name, v in layers.items() if not v["ok"]]
        if info["missing"]:
            st.error(info["note"], icon=":material/gpp_bad:")
        elif off:
            st.warning(info["note"], icon=":material/shield:")
        else:
            st.success("Learner code runs isolated: " + ", ".join(on) + ".", icon=":material/verified_user:")
        with st.expander("Isolation layers"):
            for name, v in layers.items():
                st.markdown(f"{'✓' if v['ok'] else '✗'} **{name}**: {sandbox_detail(v['detail'])}")
        stats = shared_pool().stats()
        st.caption(f"Graders: {stats.running} running · {stats.ready} ready · {stats.queued} waiting")


def sandbox_detail(text: Any) -> str:
    """Layer details come from the system, not learners; still shown as plain text."""
    return str(text).replace("*", "\\*").replace("_", "\\_")

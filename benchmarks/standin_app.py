"""A minimal Streamlit page standing in for ``app.py`` in ``benchmarks/classroom.py``.

Visiting it once starts the classroom load on threads of this server process, through ``shared_pool()``
and ``grade``, as the app's session threads would; ``CLASSROOM_OUT`` names the file the results go to.
"""
import os
import threading

import streamlit as st

from benchmarks.classroom import run_load


@st.cache_resource
def _start_once() -> threading.Thread:
    t = threading.Thread(target=run_load, daemon=True, args=(
        os.environ["CLASSROOM_OUT"], int(os.environ.get("CLASSROOM_COUNT", "30")),
        float(os.environ.get("CLASSROOM_WALL", "30"))))
    t.start()
    return t


st.title("Grader stand-in")
if os.environ.get("CLASSROOM_OUT"):
    _start_once()
    st.write("classroom load started")

"""The reference solution's own report (its jaxpr and structure), graded once per problem per server.

Grading starts in the background the first time a problem page asks, through the same warm pool as the
learners' runs, so a learner who opens the Structure or jaxpr tab after a Run finds it ready; a grading
that failed (a busy pool) is tried again on the next ask.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future

import streamlit as st

import problems
from grader.grading.grade import limits_for
from grader.records import Report
from pages.services import runs


@st.cache_resource
def _futures() -> tuple[threading.Lock, dict[str, Future]]:
    return threading.Lock(), {}


def report(slug: str) -> Report | None:
    """The reference's report on the visible examples, or None while it is being graded (started here)."""
    lock, futures = _futures()
    with lock:
        future = futures.get(slug)
        if future is None or (future.done() and (future.exception() is not None or not future.result().jaxpr_text)):
            future = runs.background(_grade_reference, slug)
            futures[slug] = future
    if future.done() and future.exception() is None:
        return future.result()
    return None


def _grade_reference(slug: str) -> Report:
    problem = problems.get(slug)
    return runs.get_runner().grade(problem, problem.reference, examples_only=True, limits=limits_for(problem, True),
                                   file="reference.py")

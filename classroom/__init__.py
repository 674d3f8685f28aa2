"""The class board's storage: classes, learners and their graded Runs and Submits, in SQLite or PostgreSQL.

A package of its own because it is no view and no grader: the app's pages, the recording hook in
``pages/services/runs.py``, the load benchmark and the tests all use it, most of them outside any Streamlit script run.
It knows nothing of Streamlit; it reads the grader's ``Report`` only in ``results.outcome``.
"""
from classroom.db import data_dir, database_url, describe
from classroom.identity import BadNickname
from classroom.results import Outcome, outcome
from classroom.store import Attempt, ClassFull, ClassInfo, ClassStore, Learner, Member, NicknameTaken, UnknownClass

__all__ = ["Attempt", "BadNickname", "ClassFull", "ClassInfo", "ClassStore", "Learner", "Member", "NicknameTaken", "Outcome",
           "UnknownClass", "data_dir", "database_url", "describe", "outcome"]

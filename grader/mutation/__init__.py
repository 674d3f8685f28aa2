"""Mutation testing of the problems' checks: ``mutate.py`` is the catalogue of one-change variants of a
reference, ``mutants.py`` grades them on the hidden cases (``python -m grader mutants``).
"""

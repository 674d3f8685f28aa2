"""The verifier: the numbers a verdict compares come from here, never from the learner's process.

``grader/boundary/program.py`` writes a traced program as plain data (on the learner's side); ``rebuild.py`` rebuilds it,
in a process that never imported learner code, from JAX's own primitives only.
"""

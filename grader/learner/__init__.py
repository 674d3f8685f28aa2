"""The learner's side: what runs in the sandboxed child, after the learner's code is imported.

``child.py`` is the grading payload (the sandbox loads it by path); its ``COMPANIONS`` are the files of this
folder it loads beside itself, which bubblewrap shows beside it and nothing else of the application:
``counterfactual.py`` (the probes) with ``jaxpr_numpy.py`` (their NumPy evaluator), ``cost_child.py`` (a cost
measurement) and, from ``grader/boundary/``, ``program.py`` (the format that crosses: the traced program as
data, which ``grader/verifier/`` rebuilds). Whatever runs in that process is the learner's, so it only hands
over data, and nothing it writes decides a verdict.
"""

"""Grading: from a submission to its records.

``grade.py`` runs the child (``workers.py``: the sandbox with ``grader/learner/child.py`` as its payload),
hands its data to the verifier, reads the answer within bounds (``bounds.py``), compares the outputs
(``compare.py``) and runs the requirement checks in a helper process (``checker.py``, which runs
``requirements.py``; ``helpers.py`` keeps the warm helpers). ``runners.py`` says where a grading runs.
"""

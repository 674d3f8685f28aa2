"""Cost: what a submission's structure buys, measured by XLA at the problem's realistic size.

``measure.py`` sends the measurement to the grading pool (``grader/learner/cost_child.py`` runs it in the
child), ``records.py`` holds its typed records, ``charts.py`` turns them into the Cost tab's charts, ``targets.py``
says what it compiles for (this CPU, or a TPU ahead of time) and ``cli.py`` is ``python -m grader cost``.
"""

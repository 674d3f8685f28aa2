"""What crosses between the learner's process and the grader's: the data format, and nothing that decides.

``program.py`` writes a traced program as plain JSON data. It is imported on both sides: the sandboxed child
(``grader/learner/child.py`` loads it by path, a companion the sandbox shows beside the payload) writes
programs with it, and the grader's deciding side (``grader/verifier/`` rebuilds and runs them;
``grader/grading/bounds.py`` bounds them) reads them. Nothing the learner's process wrote is believed here:
the format only says what shape the data has, and the verifier refuses whatever does not rebuild.
"""

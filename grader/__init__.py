"""The grader: runs a submission in a child process, compares its outputs, checks its traced program."""

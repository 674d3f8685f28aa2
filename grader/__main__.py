"""The grader: runs a submission in a child process, compares its outputs, checks its traced program.

As a command line it adopts every process it starts, however deep (bubblewrap's own processes included), and
kills and reaps whatever is left before it exits: nothing it started outlives it."""
import sys

from grader.cli import main
from grader.sandbox.processes import reaping_children

with reaping_children():
    status = main()
sys.exit(status)

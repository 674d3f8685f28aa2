"""Removing a run's scratch folder, whatever its code left there: see ``inside/cleanup.py`` (it lives inside
the sandbox's folder because the fork server uses it too)."""
from grader.sandbox.inside.cleanup import DEFAULT_DEADLINE_S, Cleanup, remove_tree

__all__ = ["DEFAULT_DEADLINE_S", "Cleanup", "remove_tree"]

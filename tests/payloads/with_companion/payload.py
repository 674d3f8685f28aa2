"""A payload that loads a helper file from its own folder when it is loaded, as a payload with companions does."""
import importlib.util
import os

COMPANIONS = ("helper.py", "sub/deeper.py", "../with_companion/unlisted.py", "/etc/passwd.py")
_spec = importlib.util.spec_from_file_location("payload_helper", os.path.join(os.path.dirname(__file__), "helper.py"))
helper = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helper)
_spec = importlib.util.spec_from_file_location("payload_deeper", os.path.join(os.path.dirname(__file__), "sub", "deeper.py"))
deeper = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(deeper)
WATCHED_MODULES = ()


def prepare():
    return {}


def start(state):
    pass


def run(state, job, guard, progress):
    return {"status": "ok", "answer": helper.ANSWER, "deeper": deeper.VALUE}

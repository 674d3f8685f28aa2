"""A payload for the containment tests: in the fork server (``prepare`` runs there) it makes each step of
reaping and cleaning up fail in turn, as a learner's leftovers or a bug could: removing a worker's folder
raises, hangs 2 s, is slow, or raises another error; every third ``wait4`` raises. Each job answers with its
own number, so a run that got another's answer, or none, shows."""
import os
import sys
import time

WATCHED_MODULES = ()


def prepare():
    cleanup = sys.modules.get("jaxplay_inside.cleanup")
    if cleanup is not None and "jaxplay_inside.zygote" in sys.modules:  # the fork server (a new process: none)
        real_remove, real_wait4, calls = cleanup.remove_tree, os.wait4, {"remove": 0, "wait4": 0}

        def remove_tree(path, **kwargs):
            calls["remove"] += 1
            mode = calls["remove"] % 4
            if mode == 1:
                raise RecursionError("maximum recursion depth exceeded (injected)")
            if mode == 2:
                time.sleep(2)
            elif mode == 3:
                time.sleep(0.3)
            else:
                raise OSError("removal failed (injected)")
            return real_remove(path, **kwargs)

        def wait4(*args):
            calls["wait4"] += 1
            if calls["wait4"] % 3 == 0:
                raise OSError("wait4 failed (injected)")
            return real_wait4(*args)

        cleanup.remove_tree = remove_tree
        os.wait4 = wait4
    return {}


def start(state):
    pass


def run(state, job, guard, progress):
    return {"status": "ok", "n": job.get("n")}

"""The program a sandbox starts (``python -I -B entry.py ...``):

- ``entry.py cold JOB_FD RESULT_FD PROGRESS_FD PAYLOAD``: lock down, prepare and start the payload, serve one
  job (``serve.py``), exit. The uid to become comes from ``JAXPLAY_WORKER_UID``.
- ``entry.py forkserver CONTROL_FD PAYLOAD``: the fork server (``zygote.py``).

``-I`` leaves this folder off ``sys.path``, so it is loaded here as the package ``jaxplay_inside``; the
payload is loaded by path as ``jaxplay_payload``.
"""
import importlib
import importlib.util
import os
import sys
import time


def load_package():
    """This folder as the package ``jaxplay_inside``."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("jaxplay_inside", os.path.join(here, "__init__.py"),
                                                  submodule_search_locations=[here])
    package = importlib.util.module_from_spec(spec)
    sys.modules["jaxplay_inside"] = package
    spec.loader.exec_module(package)
    return package


def load_payload(path):
    spec = importlib.util.spec_from_file_location("jaxplay_payload", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["jaxplay_payload"] = module
    spec.loader.exec_module(module)
    return module


def cold(job_fd, result_fd, progress_fd, payload_path):
    started = time.monotonic()
    load_package()
    lockdown = importlib.import_module("jaxplay_inside.lockdown")
    serve = importlib.import_module("jaxplay_inside.serve")
    tamper = importlib.import_module("jaxplay_inside.tamper")
    payload = load_payload(payload_path)
    parent = os.getppid()
    layers = lockdown.before_import(os.getcwd(), lockdown.worker_uid())  # one thread only: threads started
    kernel = importlib.import_module("jaxplay_inside.kernel")              # later inherit both
    kernel.libc.prctl(kernel.PR_SET_PDEATHSIG, 9, 0, 0, 0)  # dies with its parent, also as a user of its own
    if os.getppid() != parent:
        os._exit(71)
    state = payload.prepare()
    payload.start(state)
    guard = serve.make_guard(tamper, payload, state)  # nothing but trusted code has run yet
    serve.serve(payload, state, guard, lockdown, layers, (job_fd, result_fd, progress_fd), started)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "cold":
        cold(int(args[0]), int(args[1]), int(args[2]), args[3])
    elif mode == "forkserver":
        load_package()
        importlib.import_module("jaxplay_inside.zygote").main(int(args[0]), args[1], load_payload)
    else:
        raise SystemExit("usage: entry.py cold JOB_FD RESULT_FD PROGRESS_FD PAYLOAD | forkserver CONTROL_FD PAYLOAD")
    os._exit(0)


if __name__ == "__main__":
    main()

"""Serve one job: say ready, read the job, lock down, run the payload, answer once, exit.

Shared by a child started on its own (``entry.py cold``) and a worker forked by the fork server
(``zygote.py``); by then the payload is prepared and started, and the tamper guard holds its snapshot.
The job arrives as JSON on the job pipe; what the sandbox adds to it (``nonce``, ``limits``, ``selftest``)
is taken out before the payload sees it. The answer is one JSON object on the result pipe, carrying the
run's nonce, the layers applied and the seconds since start-up, sent after the output and progress pipes are
closed (so the parent need not wait for the process's exit to know that nothing more comes). Progress messages go on a pipe of their own,
one short line each.
"""
import json
import os
import sys
import time
import traceback

from . import selftest as checks

READY = b"\n"
"""Written on the result pipe once the process is ready for its job (JSON ignores it in the answer)."""
PROGRESS_CHARS = 160
"""The longest progress message sent; longer ones are cut."""


def read_fd(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def make_guard(tamper, payload, state):
    """The payload's tamper guard, snapshotting now (before any learner code)."""
    return tamper.TamperGuard(state, modules=getattr(payload, "WATCHED_MODULES", ()),
                              settings=getattr(payload, "watched_settings", None),
                              message=getattr(payload, "TAMPER_MESSAGE", None))


class Progress:
    """``progress(text)``: one line on the progress pipe; never blocks the job for long, never raises."""

    def __init__(self, fd):
        self.fd = fd

    def __call__(self, text):
        line = " ".join(str(text).split())[:PROGRESS_CHARS] + "\n"
        try:
            os.write(self.fd, line.encode("utf-8", "replace"))
        except OSError:
            pass


def required_layers():
    """The layers the parent requires (``JAXPLAY_REQUIRE_LAYERS``): a job runs only if each of them works."""
    return [name for name in os.environ.get("JAXPLAY_REQUIRE_LAYERS", "").split(",") if name]


def serve(payload, state, guard, lockdown, layers, fds, started):
    """Take one job and answer it; never returns."""
    job_fd, result_fd, progress_fd = fds
    os.write(result_fd, READY)
    job = json.loads(read_fd(job_fd))
    nonce = job.pop("nonce", "")
    limits = job.pop("limits", {})
    selftest = job.pop("selftest", False)
    layers.update(lockdown.before_learner(limits, layers.get("identity", {}).get("ok", False)))
    if selftest:
        layers.update(checks.run())
    missing = ["%s (%s)" % (name, layers[name]["detail"]) for name in required_layers()
               if name in layers and not layers[name]["ok"]]
    result_out = os.fdopen(result_fd, "w", encoding="utf-8")
    try:
        if missing:
            result = {"status": "sandbox_unavailable", "message": "isolation layers missing: " + "; ".join(missing)}
        else:
            result = payload.run(state, job, guard, Progress(progress_fd))
            result = guard.verify(result)
    except BaseException as exc:  # noqa: BLE001 - anything escaping here is reported, never lost
        result = {"status": "grader_error", "message": "%s: %s" % (type(exc).__name__, exc),
                  "traceback": traceback.format_exc()[-4000:]}
    if not isinstance(result, dict):
        result = {"status": "grader_error", "message": "the payload answered %s" % type(result).__name__}
    result["child_s"] = round(time.monotonic() - started, 3)
    result["sandbox"] = layers
    result["nonce"] = nonce
    for stream in (sys.stdout, sys.stderr):  # learner code may have replaced or closed them
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    text = json.dumps(result)
    for fd in (1, 2, progress_fd):  # the parent takes the answer as the end once every pipe is closed
        try:
            os.close(fd)
        except OSError:
            pass
    result_out.write(text)
    result_out.close()
    os._exit(0)

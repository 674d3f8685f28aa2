"""Gradings on a queue: jobs on Redis through RQ, taken by grading workers on any number of machines.

Unset, nothing here runs: the app and ``python -m grader check`` grade on their own warm pool. With
``JAXPLAY_QUEUE=redis://[:password@]host:port/db`` (or ``check --queue URL``) a grading is a job on the
queue, and ``python -m grader worker --queue URL`` on each grading machine takes jobs and grades them on
its own sandboxed warm pool, returning the same report records as the local path.

- ``settings.py``: the URL, the queue's name, its sizes and how long everything lives in Redis;
- ``tasks.py``: what a worker runs for a job (the only functions it runs: a job naming anything else fails);
- ``client.py``: ``QueueRunner``, the app's and command line's side (enqueue, place in line, progress, the
  report; a worker that dies comes back as "the grading worker was lost; run again");
- ``worker.py``: the ``worker`` command (doctor first, RQ workers on threads over one warm pool, a
  liveness key refreshed only while its pool grades, probe jobs included).
"""
import os


def queue_url() -> str | None:
    """``JAXPLAY_QUEUE`` when set (gradings go to the queue), None when not (the local pool). Reading it
    imports neither RQ nor Redis: an app without a queue never loads them."""
    return os.environ.get("JAXPLAY_QUEUE", "").strip() or None

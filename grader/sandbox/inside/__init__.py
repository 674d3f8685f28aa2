"""What runs inside the sandbox: the start-up, the fork server and the lockdown a sandboxed process applies
to itself before a payload's job runs.

These files are the only part of the application a sandboxed process can see (bubblewrap binds this folder
read-only at ``/jaxplay/sandbox``), so they use the standard library and ctypes only. ``entry.py`` is the
program bubblewrap starts; it loads this folder as the package ``jaxplay_inside`` (``python -I`` puts
nothing of ours on ``sys.path``), so the modules here import each other relatively, in the grader's process
as well as in the sandbox.

A *payload* is one more Python file, given by path, that does the actual work. It defines:

- ``prepare() -> state``: import what its jobs need, without starting threads (a fork server calls it once,
  then forks workers from the result);
- ``start(state)``: start what needs threads, once the process is locked down (a worker calls it after
  the fork);
- ``prepare_forks(state)`` (optional): trusted work a fork server does once after ``prepare``, before it forks,
  starting no thread (work every worker would otherwise do first, such as tracing: the workers inherit it);
- ``after_fork(state)`` (optional): make a forked copy its own (reseed random generators);
- ``warm_up(state)`` (optional): trusted work a forked worker does after ``start`` when no run is waiting for
  it, so the learner's job does not pay for first-time costs (copy-on-write page copies, a first compile);
- ``run(state, job, guard, progress) -> dict``: one job, answered with plain JSON data; ``guard`` is a
  ``tamper.TamperGuard``, ``progress(text)`` sends a short progress message to the parent;
- ``WATCHED_MODULES``, ``watched_settings()`` and ``TAMPER_MESSAGE``: what the tamper guard watches and
  what it says when something was replaced;
- ``COMPANIONS`` (optional): names of files in the payload's own folder that it loads by path (beside its
  ``__file__``); bubblewrap shows them beside it. Load them when the payload is loaded (at import): the
  lockdown that follows closes the application's folder to Landlock.
"""

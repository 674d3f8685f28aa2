"""Running untrusted code: a sandboxed Python that runs a payload script on a job and returns plain data.

This package knows nothing of problems, verdicts or jaxprs. Its parts, from the outside in:

- ``pool.py``: warm one-shot workers behind a FIFO queue (``WorkerPool``, ``shared_pool``, ``PoolBusy``);
- ``forkserver.py``: the parent's side of the fork server that forks those workers;
- ``runner.py``: start one sandboxed process, feed it a job, watch its limits, collect its answer
  (``spawn_child``, ``supervise``, ``run_job``), with ``channels.py`` (bounded pipes: output, progress,
  answer), ``outcome.py`` (``Limits``, ``RunOutcome``) and ``processes.py`` (process trees, reaping);
- ``bwrap.py``: bubblewrap's command line; ``users.py``: a uid of its own per worker; ``policy.py``: which
  layers a deployment requires; ``doctor.py``: which layers work here (``probe``, ``refusal``);
- ``inside/``: what runs in the sandbox: the start-up and the fork server, the lockdown (identity, Landlock,
  seccomp, resource limits), the tamper guard and the serving of one job.

The public names are importable from here.
"""
from grader.sandbox.doctor import probe, refusal
from grader.sandbox.outcome import Limits, RunOutcome
from grader.sandbox.pool import PoolBusy, PoolClosed, WorkerPool, shared_pool
from grader.sandbox.runner import run_job

__all__ = ["Limits", "PoolBusy", "PoolClosed", "RunOutcome", "WorkerPool", "probe", "refusal", "run_job",
           "shared_pool"]

"""The fork server: one process that prepares the payload once and forks a fresh worker per job.

Started as ``entry.py forkserver CONTROL_FD PAYLOAD`` inside the same sandbox a child gets, with a scratch
root as its working folder. It keeps only the capabilities it needs (``identity.FORK_SERVER_CAPS``), notes
its scheduling attributes and limits (``attributes.py``), prepares the payload (which must start no thread,
so the process can fork safely), snapshots what learner code could monkeypatch, then serves requests on
CONTROL_FD, a unix ``SOCK_SEQPACKET`` socket whose peer is ``forkserver.py`` in the grader:

- ``{"fork": ID, "uid": UID, "warm_up": BOOL}`` with five file descriptors (job, result, stdout, stderr,
  progress pipes): fork a worker with scratch folder ``w<ID>``, owned by UID. The worker starts a session of
  its own, puts back the server's attributes should anything have changed them, says ``{"hello": ID}`` (the
  kernel attaches its pid as the grader sees it), closes the socket, becomes UID with no capability, applies
  Landlock to its own folder and ``/proc`` entry, starts the payload (and, with ``warm_up``, runs the
  payload's own warm-up job) and is then ``serve.serve``: ready byte, one job, seccomp and limits, the
  learner's code, one answer, exit. The server answers ``{"forked": ID, "pid": PID}``.
- When a worker exits the server reaps it, says ``{"exit": PID, "code": CODE, "cpu": SECONDS}``, then removes
  its folder (``cleanup.remove_tree``: iterative and bounded in time, whatever the learner left there).

No step of serving may stop the server: a failure reaping a worker, removing a folder or forking one is
written on stderr and the server goes on (a worker it cannot account for is one run's problem, a dead
server is every run's).

Nothing carries over between jobs: each worker is a copy of a process that never ran learner code, dies
after one job, is a user no other process is, and can write only its own folder, which goes with it.
"""
import gc
import json
import os
import random
import select
import signal
import socket
import time

from . import attributes, cleanup, identity, kernel, landlock, lockdown, serve, tamper

FDS_PER_FORK = 5
CLEANUP_DEADLINE_S = 5.0
"""The longest the server spends removing one worker's folder (it forks nobody meanwhile)."""


def complain(what, exc):
    """Say on stderr that a step failed (the grader's log shows it); never raises."""
    try:
        os.write(2, ("fork server: %s failed: %s: %s\n" % (what, type(exc).__name__, exc)).encode("utf-8", "replace"))
    except Exception:  # noqa: BLE001
        pass


def thread_count():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


class Zygote:
    def __init__(self, control_fd, payload):
        self.sock = socket.socket(fileno=control_fd)
        self.root = os.getcwd()
        self.pid = os.getpid()
        self.payload = payload
        self.privileges = lockdown.attempt(identity.fork_server)
        kernel.libc.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the grader gone: so are we
        self.baseline = attributes.snapshot()
        self.state = payload.prepare()
        if hasattr(payload, "prepare_forks"):
            try:
                payload.prepare_forks(self.state)
            except Exception as exc:  # noqa: BLE001 - it only saves time: workers then do it themselves
                complain("preparing the workers", exc)
        self.guard = serve.make_guard(tamper, payload, self.state)
        gc.collect()
        gc.freeze()  # workers' collections skip the server's objects: fewer copy-on-write page copies
        self.workers = {}  # pid -> scratch folder
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def say(self, **msg):
        try:
            self.sock.send(json.dumps(msg).encode())
        except OSError:
            os._exit(0)  # the grader closed its end: nobody is left to serve

    def serve(self):
        self.say(ready=True, threads=thread_count())
        while True:
            ready, _, _ = select.select([self.sock, self.wake_r], [], [], 1.0)
            failed = attributes.restore(self.baseline)
            if failed:  # changed and cannot be put back: let the grader start a new fork server
                os.write(2, ("fork server: could not put back its %s; stopping\n" % ", ".join(failed)).encode())
                os._exit(0)
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except OSError:
                    pass
            try:
                self.reap()
            except Exception as exc:  # noqa: BLE001 - see the module's docstring
                complain("reaping", exc)
            if self.sock in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, 4096, FDS_PER_FORK)
                except OSError:
                    data, fds = b"", []
                if not data:
                    return  # the grader closed its end
                wid = None
                try:
                    request = json.loads(data)
                    wid = int(request["fork"])
                    uid = request.get("uid")
                    self.fork(wid, int(uid) if uid is not None else None, fds, bool(request.get("warm_up", False)))
                except Exception as exc:  # noqa: BLE001 - this fork fails, the server goes on
                    complain("forking", exc)
                    if wid is not None:
                        self.say(error=wid, message="%s: %s" % (type(exc).__name__, exc))
                finally:
                    for fd in fds:
                        try:
                            os.close(fd)
                        except OSError:
                            pass

    def fork(self, wid, uid, fds, warm_up=False):
        if len(fds) != FDS_PER_FORK:
            self.say(error=wid, message="expected %d file descriptors, got %d" % (FDS_PER_FORK, len(fds)))
            return
        scratch = os.path.join(self.root, "w%d" % wid)
        os.mkdir(scratch, 0o700)
        if uid is not None and os.geteuid() == 0:
            os.chown(scratch, uid, uid)
        deadline = time.monotonic() + 2.0
        while thread_count() > 1 and time.monotonic() < deadline:  # forking is only safe with one thread
            time.sleep(0.005)
        if thread_count() > 1:
            self.remove(scratch)
            self.say(error=wid, message="the fork server has %d threads" % thread_count())
            return
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.become_worker(wid, uid, fds, scratch, warm_up)
            except BaseException as exc:  # noqa: BLE001 - say why on stderr (the grader shows it), never return
                try:
                    os.write(2, ("worker failed to start: %s: %s\n" % (type(exc).__name__, exc)).encode())
                except OSError:
                    pass
            os._exit(code)
        self.workers[pid] = scratch
        self.say(forked=wid, pid=pid)

    def become_worker(self, wid, uid, fds, scratch, warm_up):
        started = time.monotonic()
        job_fd, result_fd, out_fd, err_fd, progress_fd = fds
        os.setsid()  # a process group of its own: the grader kills the group
        kernel.libc.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.pid:
            os._exit(71)
        not_restored = attributes.restore(self.baseline)  # still privileged: limits and priority can go back up
        if not_restored:
            raise OSError("could not put back the fork server's %s" % ", ".join(not_restored))
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.sock.send(json.dumps({"hello": wid}).encode())  # the kernel attaches this process's pid
        self.sock.close()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        keep = {0, 1, 2, job_fd, result_fd, progress_fd}
        for name in os.listdir("/proc/self/fd"):  # nothing of the server's: its socket, its wake pipe
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.chdir(scratch)
        os.environ["HOME"] = os.environ["TMPDIR"] = scratch
        random.seed()  # a copy of the server's state otherwise, identical in every worker
        if hasattr(self.payload, "after_fork"):
            self.payload.after_fork(self.state)
        layers = identity.become_worker(uid, lockdown.keep_read_search())
        kernel.libc.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a new uid cleared it
        if os.getppid() != self.pid:
            os._exit(71)
        layers["landlock"] = lockdown.attempt(landlock.restrict, scratch)
        self.payload.start(self.state)
        if warm_up and hasattr(self.payload, "warm_up"):
            try:
                self.payload.warm_up(self.state)
            except Exception:  # noqa: BLE001 - it only saves time: a job that fails the same way says why
                pass
        guard = self.guard
        guard.extend()
        if guard.changed():  # starting the payload replaced something watched: take a fresh snapshot
            guard = serve.make_guard(tamper, self.payload, self.state)
        serve.serve(self.payload, self.state, guard, lockdown, layers, (job_fd, result_fd, progress_fd), started)

    def reap(self):
        while self.workers:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            scratch = self.workers.pop(pid, None)
            try:
                code = os.waitstatus_to_exitcode(status)
                cpu = round(usage.ru_utime + usage.ru_stime, 3)
            except Exception:  # noqa: BLE001
                code, cpu = -9, 0.0
            self.say(exit=pid, code=code, cpu=cpu)  # first: the run's verdict waits for no cleanup
            if scratch:
                self.remove(scratch)

    def remove(self, scratch):
        """Remove a worker's folder, bounded in time; what is left is said on stderr, never raised."""
        try:
            report = cleanup.remove_tree(scratch, deadline_s=CLEANUP_DEADLINE_S)
            if not report.complete:
                os.write(2, ("fork server: %s\n" % report).encode("utf-8", "replace"))
        except Exception as exc:  # noqa: BLE001
            complain("removing %s" % scratch, exc)


def main(control_fd, payload_path, load_payload):
    """Prepare ``payload_path`` (loaded with ``load_payload``) and serve fork requests until the grader goes."""
    Zygote(control_fd, load_payload(payload_path)).serve()
    os._exit(0)

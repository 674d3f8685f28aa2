"""The fork server: one process that imports JAX once and forks a fresh worker per submission.

Run as ``python -I -B zygote.py CONTROL_FD`` inside the same sandbox a child gets (``sandbox.wrap_child``),
with a scratch root as its working folder. It drops root first, imports JAX without starting its backend
(so it stays one thread and can fork safely), snapshots what learner code could monkeypatch, then serves
requests on CONTROL_FD, a unix ``SOCK_SEQPACKET`` socket whose peer is ``forkserver.py`` in the grader:

- ``{"fork": ID}`` with four file descriptors (job, result, stdout, stderr pipes): fork a worker. The worker
  starts a session of its own, says ``{"hello": ID}`` (the kernel attaches its pid as the grader sees it),
  closes the socket, applies Landlock to its own scratch folder ``w<ID>`` (and its own ``/proc`` entry),
  starts JAX's backend, and from there is ``child.serve``: ready byte, one job, seccomp and rlimits, the
  learner's code, one answer, exit. The server answers ``{"forked": ID, "pid": PID}``.
- When a worker exits the server reaps it, removes its scratch folder and says
  ``{"exit": PID, "code": CODE, "cpu": SECONDS}``.

Nothing carries over between submissions: each worker is a copy of a process that never ran learner code,
dies after one job, and can write only its own scratch folder, which goes with it. Standard library only,
plus its siblings ``child.py``, ``lockdown.py`` and ``tamper.py``.
"""
import json
import os
import select
import shutil
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1


def load_child():
    """``child.py`` from this folder (``-I`` leaves the folder off sys.path); it loads the other siblings."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
    spec = importlib.util.spec_from_file_location("jaxplay_child", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def thread_count():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


class Zygote:
    def __init__(self, control_fd):
        self.sock = socket.socket(fileno=control_fd)
        self.root = os.getcwd()
        self.pid = os.getpid()
        self.child = load_child()
        self.lockdown, self.tamper = self.child.load_sibling("lockdown"), self.child.load_sibling("tamper")
        self.privileges = self.lockdown._attempt(self.lockdown.drop_privileges)
        self.lockdown._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the grader gone: so are we
        self.t = self.child.import_jax()
        self.guard = self.tamper.TamperGuard(self.t)
        import gc
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
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            self.reap()
            if self.sock in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, 4096, 4)
                except OSError:
                    data, fds = b"", []
                if not data:
                    return  # the grader closed its end
                try:
                    request = json.loads(data)
                    self.fork(int(request["fork"]), fds)
                finally:
                    for fd in fds:
                        try:
                            os.close(fd)
                        except OSError:
                            pass

    def fork(self, wid, fds):
        if len(fds) != 4:
            self.say(error=wid, message="expected 4 file descriptors, got %d" % len(fds))
            return
        scratch = os.path.join(self.root, "w%d" % wid)
        os.mkdir(scratch, 0o700)
        deadline = time.monotonic() + 2.0
        while thread_count() > 1 and time.monotonic() < deadline:  # forking is only safe with one thread
            time.sleep(0.005)
        if thread_count() > 1:
            shutil.rmtree(scratch, ignore_errors=True)
            self.say(error=wid, message="the fork server has %d threads" % thread_count())
            return
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.become_worker(wid, fds, scratch)
            except BaseException as exc:  # noqa: BLE001 - say why on stderr (the grader shows it), never return
                try:
                    os.write(2, ("worker failed to start: %s: %s\n" % (type(exc).__name__, exc)).encode())
                except OSError:
                    pass
            os._exit(code)
        self.workers[pid] = scratch
        self.say(forked=wid, pid=pid)

    def become_worker(self, wid, fds, scratch):
        started = time.monotonic()
        job_fd, result_fd, out_fd, err_fd = fds
        os.setsid()  # a process group of its own: the grader kills the group
        self.lockdown._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.pid:
            os._exit(71)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.sock.send(json.dumps({"hello": wid}).encode())  # the kernel attaches this process's pid
        self.sock.close()
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        keep = {0, 1, 2, job_fd, result_fd}
        for name in os.listdir("/proc/self/fd"):  # nothing of the server's: its socket, its wake pipe
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.chdir(scratch)
        os.environ["HOME"] = os.environ["TMPDIR"] = scratch
        import random
        random.seed()  # a copy of the server's state otherwise, identical in every worker
        self.t["np"].random.seed()
        layers = {"privileges": self.privileges,
                  "landlock": self.lockdown._attempt(self.lockdown.restrict_filesystem, scratch)}
        self.child.init_backend(self.t)
        guard = self.guard
        guard.extend()
        if guard.changed():  # starting the backend replaced something watched: take a fresh snapshot
            guard = self.tamper.TamperGuard(self.t)
        self.child.serve(self.t, guard, self.lockdown, layers, job_fd, result_fd, started)

    def reap(self):
        while self.workers:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            shutil.rmtree(self.workers.pop(pid, ""), ignore_errors=True)
            self.say(exit=pid, code=os.waitstatus_to_exitcode(status),
                     cpu=round(usage.ru_utime + usage.ru_stime, 3))


def main():
    Zygote(int(sys.argv[1])).serve()
    os._exit(0)


if __name__ == "__main__":
    main()

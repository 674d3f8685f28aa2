"""The parent's side of the fork server (``inside/zygote.py``): fresh workers in milliseconds instead of a new
Python preparing the payload (about half a second of CPU each for JAX, which is most of what a batch or a
classroom spends).

``ForkServer.spawn()`` returns a ``runner.Child`` like ``runner.spawn_child()`` does, so the pool and
``runner.supervise`` treat both alike. Its ``proc`` is a ``ForkedProcess``: the worker is the server's child,
not ours, so its exit status and CPU seconds come from the server's messages, and its pid (as this process
sees it, through bubblewrap's PID namespace) from the kernel's credentials on the worker's hello.

The server runs in the same sandbox a child gets (bubblewrap where it works), with a tmpfs scratch root
shared by its workers; each worker is a user of its own (``users.py``) and can write only its own folder in
it (Landlock), which is removed when the worker exits. The grader watches each folder's size through
``/proc/PID/root``.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.sandbox import bwrap, users
from grader.sandbox.cleanup import remove_tree
from grader.sandbox.processes import killpg
from grader.sandbox.runner import Child, child_env

SCRATCH_ROOT_BYTES = 4 * bwrap.SCRATCH_BYTES
"""The tmpfs all of one server's workers share under bubblewrap (each is held to its own limit by the pool)."""
_UCRED = struct.Struct("3i")


class ForkServerError(RuntimeError):
    """The fork server could not start, or stopped answering."""


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs: not gone, and not a zombie waiting for an init that may never reap it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


class ForkedProcess:
    """The parts of ``subprocess.Popen`` the pool and ``supervise`` use, for a worker the server forked."""

    def __init__(self, pid: int, server: "ForkServer") -> None:
        self.pid = pid
        """The worker's pid as this process sees it (also its process group: it starts a session)."""
        self.args = ["jaxplay-worker", str(pid)]
        self.returncode: int | None = None
        self.cpu_s = 0.0
        self._done = threading.Event()
        self._server = server

    def _exited(self, code: int, cpu: float) -> None:
        self.cpu_s = cpu
        self.returncode = code
        self._done.set()

    def poll(self) -> int | None:
        if self.returncode is None and self._server.lost and not _alive(self.pid):
            self._exited(-9, self.cpu_s)  # the server died: its workers die with it (PR_SET_PDEATHSIG)
        return self.returncode

    def doomed(self) -> bool:
        """Whether its server is gone: it dies with it (PR_SET_PDEATHSIG), though perhaps not yet."""
        return self._server.lost

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._done.wait(0.05 if left is None else min(0.05, left))
        return self.returncode  # type: ignore[return-value]


class ForkServer:
    """One running fork server (``inside/zygote.py``) for ``payload``, and the workers it forked for us."""

    def __init__(self, payload: Path, start_timeout: float = 60.0) -> None:
        self.payload = payload
        self.root = tempfile.mkdtemp(prefix="jaxplay-fork-")
        os.chmod(self.root, 0o711)  # workers, each a user of its own, reach their folder; none lists the others
        self.lost = False
        self.started = time.monotonic()
        self.forks = 0
        """Workers forked so far."""
        self._lock = threading.Lock()
        self._pending: dict[int, dict] = {}  # request id -> what came back so far
        self._by_ns_pid: dict[int, ForkedProcess] = {}
        self._ready = threading.Event()
        self._server_pid = 0  # the server's pid as we see it (from its credentials)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self._sock = ours
        env = child_env(self.root) | {"OPENBLAS_NUM_THREADS": "1"}  # NumPy's BLAS threads would make fork unsafe
        cmd = bwrap.command("forkserver", [str(theirs.fileno())], payload, self.root, size=SCRATCH_ROOT_BYTES,
                            scratch_perms="0711")
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         pass_fds=(theirs.fileno(),), cwd=self.root, env=env,
                                         start_new_session=True, close_fds=True)
        except BaseException:
            ours.close()
            remove_tree(self.root)
            raise
        finally:
            theirs.close()
        self._reader = threading.Thread(target=self._read, name="grader-forkserver", daemon=True)
        self._reader.start()
        if not self._ready.wait(start_timeout) or self.lost or self._server_pid <= 0:
            self.shutdown()
            raise ForkServerError(f"the fork server did not start (exit {self.proc.poll()})")

    # -- requests --------------------------------------------------------------------------------------

    def spawn(self, timeout: float = 10.0, *, warm_up: bool = False) -> Child:
        """A fresh worker, ready soon after (it writes the readiness byte once JAX's backend is up and, with
        ``warm_up``, once it has run the payload's own warm-up job)."""
        if self.lost:
            raise ForkServerError("the fork server is gone")
        with self._lock:
            self.forks += 1
            wid = self.forks
            entry = self._pending[wid] = {"event": threading.Event()}
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        prog_r, prog_w = os.pipe()
        request = {"fork": wid, "uid": users.next_uid(), "warm_up": warm_up}
        try:
            socket.send_fds(self._sock, [json.dumps(request).encode()], [job_r, res_w, out_w, err_w, prog_w])
        except OSError as exc:
            for fd in (job_w, res_r, out_r, err_r, prog_r):
                os.close(fd)
            raise ForkServerError(f"the fork server stopped answering ({exc})") from exc
        finally:
            for fd in (job_r, res_w, out_w, err_w, prog_w):
                os.close(fd)
        ok = entry["event"].wait(timeout)
        with self._lock:
            self._pending.pop(wid, None)
        proc = entry.get("proc")
        if not ok or proc is None:
            if proc is not None:
                killpg(proc.pid)
            for fd in (job_w, res_r, out_r, err_r, prog_r):
                os.close(fd)
            raise ForkServerError(entry.get("error") or "the fork server did not fork a worker in time")
        scratch = f"/proc/{self._server_pid}/root{self.root}/w{wid}"
        return Child(proc, scratch, job_w, res_r, out_r, err_r, prog_r)

    def check(self) -> bool:
        """Whether the server still runs. When it does not (killed, or stopped), it is marked lost at once: its
        workers die with it (PR_SET_PDEATHSIG), their runs end as lost, and the pool starts a new server."""
        if not self.lost and ((self._server_pid > 0 and not _alive(self._server_pid)) or self.proc.poll() is not None):
            self.lost = True
            with self._lock:
                workers = list(self._by_ns_pid.values())
            for w in workers:
                killpg(w.pid)
        return not self.lost

    def live_workers(self) -> int:
        """Workers forked for us that have not exited yet."""
        with self._lock:
            return len(self._by_ns_pid)

    def shutdown(self) -> None:
        """Stop the server and kill every worker it forked for us; idempotent."""
        self.lost = True
        with self._lock:
            workers = list(self._by_ns_pid.values())
        for w in workers:
            killpg(w.pid)
        try:  # the server exits when its socket closes, so bubblewrap exits and is reaped here, in order
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            killpg(self.proc.pid)
            self.proc.wait()
        deadline = time.monotonic() + 5  # not our children: wait until the kernel has taken them away
        for pid in [w.pid for w in workers] + [self._server_pid]:
            while pid > 0 and _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
        remove_tree(self.root)

    # -- the server's messages -------------------------------------------------------------------------

    def _read(self) -> None:
        size = socket.CMSG_SPACE(_UCRED.size)
        while True:
            try:
                data, ancdata, _, _ = self._sock.recvmsg(4096, size)
            except OSError:
                data, ancdata = b"", []
            if not data:
                break
            sender = 0
            for level, kind, payload in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= _UCRED.size:
                    sender = _UCRED.unpack(payload[:_UCRED.size])[0]
            try:
                msg = json.loads(data)
                if isinstance(msg, dict):
                    self._handle(msg, sender)
            except Exception as exc:  # noqa: BLE001 - one bad message must not stop the reader (nor the pool)
                print(f"grader fork server: a message could not be handled ({type(exc).__name__}: {exc})",
                      file=sys.stderr)
        self.lost = True
        self._ready.set()
        with self._lock:
            pending = list(self._pending.values())
            workers = list(self._by_ns_pid.values())
        for entry in pending:
            entry.setdefault("error", "the fork server stopped")
            entry["event"].set()
        for w in workers:  # their exit status is lost with the server: poll() finds them gone
            killpg(w.pid)

    def _handle(self, msg: dict, sender: int) -> None:
        if msg.get("ready"):
            self._server_pid = sender  # 0 only if the kernel sent no credentials: then starting fails
            self._ready.set()
            return
        if "exit" in msg:
            with self._lock:
                proc = self._by_ns_pid.pop(msg["exit"], None)
                for entry in self._pending.values():  # died before it said hello
                    if proc is None and entry.get("ns_pid") == msg["exit"] and "proc" not in entry:
                        entry["error"] = f"a new worker died at once (exit {msg.get('code')})"
                        entry["event"].set()
            if proc is not None:
                proc._exited(int(msg.get("code", -9)), float(msg.get("cpu", 0.0)))
            return
        wid = msg.get("forked", msg.get("hello", msg.get("error")))
        with self._lock:
            entry = self._pending.get(wid)
            if entry is None:
                return
            if "error" in msg:
                entry["error"] = f"the fork server could not fork: {msg.get('message')}"
                entry["event"].set()
                return
            if "hello" in msg:
                if sender <= 0:  # no credentials: never guess (a pid of 0 would name our own process group)
                    entry["error"] = "the new worker's pid could not be read from its credentials"
                    entry["event"].set()
                    return
                entry["host_pid"] = sender
            else:
                entry["ns_pid"] = msg["pid"]
            if "host_pid" in entry and "ns_pid" in entry and "proc" not in entry:
                proc = ForkedProcess(entry["host_pid"], self)
                entry["proc"] = proc
                self._by_ns_pid[entry["ns_pid"]] = proc
                entry["event"].set()

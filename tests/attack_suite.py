"""Grade every hostile submission in ``tests/attacks/`` through ``python -m grader check --json`` and check
that the sandbox held. Meant to run as PID 1 of a private PID namespace (``test_attacks.py`` starts it under
``unshare --pid --fork --mount-proc``), so a broken sandbox cannot reach the machine's other processes.

Each attack file starts with header comments::

    # problem: gradient-accumulation-with-scan
    # expect: runtime_error wrong_answer
    # says: words the verdict's message must contain (optional)
    # within: seconds the whole command line may take (optional)
    # jobs: 2 (optional): grade the attack and the correct submission at once, so the correct one is in
    #   flight on a worker of the same fork server while the attack ends and is cleaned up after
    # what: one line saying what it tries

The grader's source policy (``grader/grading/source_policy.py``), which refuses a dozen of these files before
they run, is switched off here: this suite tests what holds when a payload gets past that first layer.

For each attack, with a canary planted (a file, the grader's environment, the app's secrets file, the
hidden cases' digests) and listeners open on loopback: the verdict is one of ``expect`` (never accepted),
no canary appears anywhere in the CLI's output, nothing was written outside the scratch folder, no listener
saw a connection, no process of the run is left the moment the command line has exited (not even a zombie:
it must reap everything it started), and a correct submission graded right after it by the same CLI
invocation is accepted. Prints one JSON object; exit status 0 when every attack was contained.

Usage: ``python tests/attack_suite.py [ATTACK.py ...]`` (default: all of them).
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = Path(__file__).resolve().parent / "attacks"
CANARY_DIR = Path("/tmp/jaxplay-canary")
TCP_PORT, UDP_PORT = 47471, 47472
UNIX_PATH, ABSTRACT_NAME = CANARY_DIR / "app.sock", b"\0jaxplay-canary"
TIME_LIMIT_S = float(os.environ.get("JAXPLAY_ATTACK_TIME_LIMIT", "15"))
CLI_TIMEOUT_S = 4 * TIME_LIMIT_S + 120
VERDICTS = {"accepted", "wrong_answer", "requirements_not_met", "runtime_error", "syntax_error", "time_limit",
            "memory_limit", "output_limit", "internal_error"}
WATCHED_DIRS = [Path("/tmp"), CANARY_DIR, Path("/var/tmp"), Path("/dev/shm"), Path.home(), ROOT,
                ROOT / "grader", ROOT / "problems", ROOT / "tests"]


def header(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, value = line[2:].split(":", 1)
        out[key.strip()] = value.strip()
    return out


class Listeners:
    """TCP, UDP, unix and abstract unix listeners on loopback that record whoever reaches them."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.socks = []
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("127.0.0.1", TCP_PORT))
        tcp.listen(16)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", UDP_PORT))
        if UNIX_PATH.exists():
            UNIX_PATH.unlink()
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(UNIX_PATH))
        os.chmod(UNIX_PATH, 0o777)
        unix.listen(16)
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract.bind(ABSTRACT_NAME)
        abstract.listen(16)
        for name, s in (("tcp", tcp), ("unix", unix), ("abstract", abstract)):
            threading.Thread(target=self._accept, args=(name, s), daemon=True).start()
        threading.Thread(target=self._recv, args=(udp,), daemon=True).start()
        self.socks = [tcp, udp, unix, abstract]

    def _accept(self, name: str, s: socket.socket) -> None:
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            self.hits.append(name)
            conn.close()

    def _recv(self, s: socket.socket) -> None:
        while True:
            try:
                s.recvfrom(65536)
            except OSError:
                return
            self.hits.append("udp")

    def take(self) -> list[str]:
        hits, self.hits = self.hits, []
        return hits


def snapshot() -> dict[str, set[str]]:
    """Names in the folders an attack might write to (scratch folders are the grader's own)."""
    out = {}
    for d in WATCHED_DIRS:
        try:
            names = set(os.listdir(d))
            if d == Path("/tmp"):
                names = {n for n in names if not n.startswith("jaxplay-") or n == CANARY_DIR.name}
            if d == Path.home():  # shared with other tools on a dev machine (~/.cache, ~/.streamlit...)
                names = {n for n in names if not n.startswith(".") or "pwn" in n}
            out[str(d)] = names
        except OSError:
            out[str(d)] = set()
    out["scratch-left"] = {n for n in os.listdir("/tmp") if n.startswith("jaxplay-") and n != CANARY_DIR.name
                           and n != "jaxplay-bwrap-probe"}
    out["git"] = set(subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True,
                                    text=True).stdout.splitlines())
    return out


def processes_now() -> list[str]:
    """Every process of this PID namespace but this one (we are PID 1), zombies included, with its state."""
    others = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
                others.append(f"{entry} ({state}):{Path(f'/proc/{entry}/cmdline').read_bytes()[:80]!r}")
            except (OSError, IndexError):
                pass
    return others


def leftover_processes(grace_s: float = 3.0) -> list[str]:
    """Processes of this PID namespace other than this one, after reaping zombies (we are PID 1)."""
    deadline = time.monotonic() + grace_s
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        others = processes_now()
        if not others or time.monotonic() > deadline:
            return others
        time.sleep(0.1)


def kill_others() -> None:
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


def plant() -> list[str]:
    """Plant the canaries; return the strings that must never appear in any output."""
    CANARY_DIR.mkdir(exist_ok=True)
    file_token, env_token, app_token = (f"CANARY-{secrets.token_hex(12)}" for _ in range(3))
    (CANARY_DIR / "secret.txt").write_text(file_token + "\n")
    os.chmod(CANARY_DIR / "secret.txt", 0o644)
    os.environ["JAXPLAY_CANARY_SECRET"] = env_token
    os.environ["STREAMLIT_SECRET_API_KEY"] = env_token  # how Streamlit exposes secrets.toml
    secrets_toml = ROOT / ".streamlit" / "secrets.toml"
    if not secrets_toml.exists():
        secrets_toml.parent.mkdir(exist_ok=True)
        secrets_toml.write_text(f'api_key = "{app_token}"\n')
        os.environ["JAXPLAY_PLANTED_SECRETS_TOML"] = str(secrets_toml)
    digests = []
    for f in (ROOT / "problems").glob("*/hidden_expected.json"):
        digests += [c["digest"] for c in json.loads(f.read_text())["cases"]]
    return [file_token, env_token, app_token, *digests]


def unplant() -> None:
    planted = os.environ.pop("JAXPLAY_PLANTED_SECRETS_TOML", None)
    if planted:
        Path(planted).unlink(missing_ok=True)
        try:
            Path(planted).parent.rmdir()
        except OSError:
            pass


def run_attack(path: Path, tokens: list[str], listeners: Listeners) -> dict:
    info = header(path)
    problem, expect = info["problem"], set(info["expect"].split())
    good = ROOT / "problems" / problem / "reference.py"
    before = snapshot()
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "grader", "check", problem, str(path), str(good), "--json",
                               "--examples-only", "--jobs", info.get("jobs", "1"), "--time-limit", str(TIME_LIMIT_S)],
                              cwd=ROOT, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                              # no __pycache__ in the repo; the source policy off, so that the payloads it
                              # would refuse before they run still test the sandbox (test_source_policy.py
                              # tests the policy on these same files)
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", JAXPLAY_SOURCE_POLICY="0"))
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        out, err, code = str(exc.stdout or ""), str(exc.stderr or ""), None
    outlived = processes_now()  # the command line has exited and been reaped: nothing of it may remain
    seconds = time.monotonic() - started
    problems_found = []
    if outlived:
        problems_found.append(f"processes outlived the command line: {outlived[:5]}")
    if "within" in info and seconds > float(info["within"]):
        problems_found.append(f"the command line took {seconds:.0f} s, more than {info['within']} s")
    try:
        reports = json.loads(out)
        verdict, follow_up = reports[0]["verdict"], reports[1]["verdict"]
    except (ValueError, IndexError, KeyError, TypeError):
        verdict, follow_up = None, None
        problems_found.append(f"the CLI did not report (exit {code}): {err[-600:]}")
    if verdict == "accepted":
        problems_found.append("the attack was accepted")
    if verdict is not None and verdict not in expect:
        problems_found.append(f"verdict {verdict}, expected one of {sorted(expect)}")
    if verdict is not None and "says" in info and info["says"].lower() not in reports[0].get("message", "").lower():
        problems_found.append(f"the verdict's message does not say {info['says']!r}: {reports[0].get('message', '')[:200]}")
    if follow_up is not None and follow_up != "accepted":
        problems_found.append(f"the correct submission graded next was {follow_up}")
    leaked = [t[:14] for t in tokens if t in out or t in err]
    if leaked:
        problems_found.append(f"secrets leaked into the output: {leaked}")
    after = snapshot()
    for key in after:
        new = after[key] - before.get(key, set())
        if new:
            problems_found.append(f"written outside scratch: {key}: {sorted(new)[:5]}")
    hits = listeners.take()
    if hits:
        problems_found.append(f"connections reached the listeners: {hits}")
    left = leftover_processes()
    if left:
        problems_found.append(f"processes left behind: {left[:5]}")
        kill_others()
    message = ""
    if reports_ok := (verdict is not None):
        message = reports[0].get("message", "")[:160]
    return {"attack": path.name, "what": info.get("what", ""), "verdict": verdict, "ok": not problems_found,
            "problems": problems_found, "message": message if reports_ok else "",
            "seconds": round(time.monotonic() - started, 1)}


def loopback_up() -> None:
    """Bring the loopback interface up where it is down: in a network namespace of the suite's own
    (``test_attacks.py`` runs the two sandbox modes at once, each suite in its own, so that their listeners
    and the attacks that reach for them never meet), ``lo`` starts down."""
    import fcntl
    import struct
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, siocgifflags, struct.pack("16sH", b"lo", 0))[:18])[1]
        if not flags & iff_up:
            fcntl.ioctl(s, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up))


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted(ATTACKS.glob("*.py"))
    loopback_up()
    tokens = plant()
    listeners = Listeners()
    results = []
    try:
        for path in paths:
            results.append(run_attack(path, tokens, listeners))
            r = results[-1]
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['attack']:40s} {r['verdict']!s:16s} {r['seconds']:5.1f}s "
                  + "; ".join(r["problems"]), file=sys.stderr, flush=True)
    finally:
        unplant()
    print(json.dumps({"pid": os.getpid(), "results": results}, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

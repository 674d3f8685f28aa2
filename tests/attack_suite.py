"""Grade every hostile submission in ``tests/attacks/`` through ``python -m grader check --json`` and check
that the sandbox held. Attacks on one problem are graded by one command line, in batches (``BATCH_SIZE``),
each followed by the correct submission; a batch that goes wrong as a whole is graded again one attack at a
time, to say which attack did it. Meant to run as PID 1 of a private PID namespace (``test_attacks.py`` starts it under
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


def _cli(problem: str, files: list[Path], jobs: str, timeout_s: float) -> tuple[str, str, int | None]:
    """``python -m grader check PROBLEM FILES --json --examples-only`` as the suite runs it."""
    try:
        done = subprocess.run([sys.executable, "-m", "grader", "check", problem, *map(str, files), "--json",
                               "--examples-only", "--jobs", jobs, "--time-limit", str(TIME_LIMIT_S)],
                              cwd=ROOT, capture_output=True, text=True, timeout=timeout_s,
                              # no __pycache__ in the repo; the source policy off, so that the payloads it
                              # would refuse before they run still test the sandbox (test_source_policy.py
                              # tests the policy on these same files)
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", JAXPLAY_SOURCE_POLICY="0"))
        return done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        return str(exc.stdout or ""), str(exc.stderr or ""), None


def _verdict_problems(info: dict[str, str], report: dict | None, follow_up: dict | None) -> list[str]:
    """What is wrong with one attack's report and the correct submission's graded right after it."""
    expect = set(info["expect"].split())
    found = []
    verdict = report.get("verdict") if report else None
    if verdict is None:
        return ["the CLI did not report this file"]
    if verdict == "accepted":
        found.append("the attack was accepted")
    if verdict not in expect:
        found.append(f"verdict {verdict}, expected one of {sorted(expect)}")
    if "says" in info and info["says"].lower() not in report.get("message", "").lower():
        found.append(f"the verdict's message does not say {info['says']!r}: {report.get('message', '')[:200]}")
    if "within" in info and float(report.get("elapsed_s") or 0) > float(info["within"]):
        found.append(f"its grading took {report['elapsed_s']:.0f} s, more than {info['within']} s")
    if follow_up is None or follow_up.get("verdict") != "accepted":
        found.append(f"the correct submission graded next was {None if follow_up is None else follow_up.get('verdict')}")
    return found


def run_batch(paths: list[Path], tokens: list[str], listeners: Listeners) -> tuple[list[dict], list[str]]:
    """Grade the attacks ``paths`` (one problem, one ``jobs`` setting) in one command line, each followed by
    the correct submission: ``check PROBLEM a1 ref a2 ref ...``. Returns each attack's result and what was
    wrong with the batch as a whole (the command line failed to report, something was written outside
    scratch, a listener was reached, processes outlived it or were left behind), which a batch cannot pin on
    one attack."""
    infos = [header(p) for p in paths]
    problem, jobs = infos[0]["problem"], infos[0].get("jobs", "1")
    good = ROOT / "problems" / problem / "reference.py"
    files = [f for p in paths for f in (p, good)]
    before = snapshot()
    started = time.monotonic()
    out, err, code = _cli(problem, files, jobs, len(paths) * (2 * TIME_LIMIT_S + 60) + 120)
    outlived = processes_now()  # the command line has exited and been reaped: nothing of it may remain
    seconds = time.monotonic() - started
    batch: list[str] = []
    if outlived:
        batch.append(f"processes outlived the command line: {outlived[:5]}")
    try:
        reports = json.loads(out)
        assert isinstance(reports, list) and len(reports) == len(files)
    except (ValueError, AssertionError):
        reports = [None] * len(files)
        batch.append(f"the CLI did not report (exit {code}): {err[-600:]}")
    leaked = [t[:14] for t in tokens if t in out or t in err]
    if leaked:
        batch.append(f"secrets leaked into the output: {leaked}")
    after = snapshot()
    for key in after:
        new = after[key] - before.get(key, set())
        if new:
            batch.append(f"written outside scratch: {key}: {sorted(new)[:5]}")
    hits = listeners.take()
    if hits:
        batch.append(f"connections reached the listeners: {hits}")
    left = leftover_processes()
    if left:
        batch.append(f"processes left behind: {left[:5]}")
        kill_others()
    results = []
    for k, (path, info) in enumerate(zip(paths, infos)):
        report, follow_up = reports[2 * k], reports[2 * k + 1]
        found = _verdict_problems(info, report, follow_up)
        results.append({"attack": path.name, "what": info.get("what", ""),
                        "verdict": report.get("verdict") if report else None, "ok": not found, "problems": found,
                        "message": (report.get("message", "") if report else "")[:160],
                        "seconds": round(float(report.get("elapsed_s") or 0), 1) if report else round(seconds, 1)})
    return results, batch


BATCH_SIZE = 16
"""Attacks graded by one command line at most. A batch pays the command line's start (the fork server, the
verifier and the checker importing JAX: a few seconds of CPU) once instead of once per attack; each attack is
still followed by a correct submission graded by the same processes, which must be accepted, so an attack that
leaves anything behind in the fork server, a helper or the pool shows on the next file."""


def batches(paths: list[Path]) -> list[list[Path]]:
    """The attacks grouped by problem and ``jobs`` (each group is one command line's files), in order."""
    groups: dict[tuple[str, str], list[Path]] = {}
    for p in paths:
        info = header(p)
        groups.setdefault((info["problem"], info.get("jobs", "1")), []).append(p)
    out = []
    for members in groups.values():
        out += [members[i:i + BATCH_SIZE] for i in range(0, len(members), BATCH_SIZE)]
    return out


def run_attacks(paths: list[Path], tokens: list[str], listeners: Listeners, log=None) -> list[dict]:
    """Every attack's result: graded in batches, and a batch that went wrong as a whole is graded again one
    attack per command line, so that what went wrong is pinned on the attack that did it (and when every
    attack passes alone, the batch's own problem is reported: one attack reached the next one)."""
    results: dict[str, dict] = {}
    for batch in batches(paths):
        got, wrong = run_batch(batch, tokens, listeners)
        if wrong or (len(batch) > 1 and not all(r["ok"] for r in got)):
            alone = [run_batch([p], tokens, listeners) for p in batch]
            got = []
            for (one,), one_wrong in alone:
                one["problems"] = one["problems"] + one_wrong
                one["ok"] = not one["problems"]
                got.append(one)
            if wrong and all(r["ok"] for r in got):
                got[-1]["ok"] = False
                got[-1]["problems"].append(f"graded together with {[p.name for p in batch]}: {wrong}; each "
                                           "passes alone, so one attack reached a later one")
        for r in got:
            results[r["attack"]] = r
            if log is not None:
                log(r)
    return [results[p.name] for p in paths]


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
    if os.getpid() != 1:  # it kills every other process it can see when one is left behind
        print("attack_suite.py runs as PID 1 of a namespace of its own: python -m pytest tests/test_attacks.py "
              "(or `unshare --pid --fork --mount-proc ...`)", file=sys.stderr)
        return 2
    paths = [Path(a).resolve() for a in argv] or sorted(ATTACKS.glob("*.py"))
    loopback_up()
    tokens = plant()
    listeners = Listeners()
    def log(r: dict) -> None:
        print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['attack']:40s} {r['verdict']!s:16s} {r['seconds']:5.1f}s "
              + "; ".join(r["problems"]), file=sys.stderr, flush=True)

    try:
        results = run_attacks(paths, tokens, listeners, log)
    finally:
        unplant()
    print(json.dumps({"pid": os.getpid(), "results": results}, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Gradings on the RQ queue: a Redis server on a loopback port with a password, two `python -m grader worker`
processes shared by the module's tests, and the contracts of README "More than one machine": the same reports
as the local pool, byte for byte in JSON; a killed worker's job comes back as "the grading worker was lost" while the
other worker keeps serving; a full queue refused kindly; only the grader's own job functions run; everything
in Redis expires. Needs Debian's `redis-server` (.ci/run installs it): without it these tests fail, not skip."""
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a contributor's quick run (-m "not slow") leaves these out

import problems
from grader.queue import settings
from grader.queue.client import QueueRunner, client
from grader.records import Verdict
from grader.sandbox import Limits, PoolBusy


ROOT = Path(__file__).resolve().parents[1]
GA = "gradient-accumulation-with-scan"
GA_DIR = ROOT / "problems" / GA

SPIN = "def grad_accumulation(params, x, y, num_microbatches):\n    while True:\n        pass\n"
CRASH = ("import os\nimport signal\n\ndef grad_accumulation(params, x, y, num_microbatches):\n"
         "    os.kill(os.getpid(), signal.SIGSEGV)\n")  # a crash the source policy lets through (it refuses ctypes)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url():
    """redis-server on a free loopback port, with a password, its files in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="jaxplay-redis-"))
    port, password = _free_port(), secrets.token_hex(16)
    server = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port),
                               "--bind", "127.0.0.1", "--requirepass", password, "--save", "", "--appendonly", "no",
                               "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            settings.connect(url).ping()
            break
        except Exception:  # noqa: BLE001 - not listening yet
            assert server.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


def _start_worker(url: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "grader", "worker", "--queue", url, "--pool-size", "1"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def workers(redis_url):
    """Two worker processes of one warm worker each, serving once both said so on stdout."""
    procs = [_start_worker(redis_url) for _ in range(2)]
    for p in procs:
        line = p.stdout.readline()
        assert '"serving"' in line, f"the worker did not start: {line!r} {p.stderr.read() if p.poll() is not None else ''}"
    yield procs
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _check(*args: str) -> list[dict]:
    res = subprocess.run([sys.executable, "-m", "grader", "check", GA, *args, "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def test_a_mixed_batch_graded_by_two_workers_gives_the_local_pools_reports_byte_for_byte(workers, redis_url, tmp_path):
    files = {"right": GA_DIR / "reference.py",
             "wrong": GA_DIR / "submissions/wrong_answer/sums_instead_of_averaging.py",
             "requirements": GA_DIR / "submissions/requirements_not_met/python_loop.py",
             "crash": tmp_path / "crash.py", "loop": tmp_path / "loop.py"}
    files["crash"].write_text(CRASH)
    files["loop"].write_text(SPIN)
    args = [str(f) for f in files.values()] + ["--examples-only", "--time-limit", "15"]
    local, queued = _check(*args), _check(*args, "--queue", redis_url)
    expected = ["accepted", "wrong_answer", "requirements_not_met", "runtime_error", "time_limit"]
    assert [r["verdict"] for r in local] == [r["verdict"] for r in queued] == expected
    for r in local + queued:
        r["elapsed_s"] = 0
    for mine, theirs in zip(queued, local):
        assert json.dumps(mine) == json.dumps(theirs), mine["file"]


def test_the_cost_tab_measures_on_the_workers_when_the_app_has_a_queue(workers, redis_url, monkeypatch):
    """A cost measurement compiles a dozen programs: with a queue it runs on a grading worker, which loads the
    problem's programs itself (the job is the slug, the code and the size), and comes back as the same report
    the app's own pool gives."""
    from grader.grading.runners import PoolRunner
    from grader.grading.workers import worker_pool
    from pages.services import runs
    monkeypatch.setenv("JAXPLAY_QUEUE", "")
    assert isinstance(runs.get_runner(), PoolRunner)
    monkeypatch.setenv("JAXPLAY_QUEUE", redis_url)
    problem = problems.get("rematerialized-mlp-block")
    runner = runs.get_runner()
    assert isinstance(runner, QueueRunner)
    queued = runner.cost(problem, problem.reference, small=True)
    with worker_pool(1) as pool:
        local = PoolRunner(pool).cost(problem, problem.reference, small=True)
    assert queued.ok and local.ok, (queued.error, local.error)

    def figures(report) -> dict:
        data = report.to_json()
        for key in ("elapsed_s", "jobs"):  # wall and CPU seconds, which differ from run to run
            data.pop(key)
        for program in data["programs"]:
            program.pop("compile_s")
        return data
    assert figures(queued) == figures(local)
    saved = queued.program("learner")
    assert saved.residual_bytes and saved.residuals[0].bytes > 0, "residuals come back as records"
    with pytest.raises(ValueError):  # a cost job is never sent piecemeal (the worker measures it whole)
        runner({"kind": "cost", "code": "x"}, Limits(wall_s=5))


def test_the_isolation_badge_describes_the_workers_when_the_app_has_a_queue(workers, redis_url, monkeypatch):
    """With a queue the workers run the code, so the badge and its details are theirs (each worker's liveness
    key carries its layers), not the app machine's; with no worker serving, the badge says so in red."""
    from grader.queue.client import workers as serving
    from grader.sandbox import doctor
    from pages.views import isolation
    found = serving(redis_url)
    assert len(found) == 2 and all(w["layers"] for w in found), found
    here = doctor.probe()["layers"]
    assert {name for name in here} <= set(found[0]["layers"]), "the workers' deep probe covers the usual layers"
    monkeypatch.setenv("JAXPLAY_QUEUE", redis_url)
    isolation._queue_isolation.clear()
    colour, words = isolation.status()
    info = isolation._info()
    assert info["workers"] == 2 and "2 grading worker processes" in info["note"]
    all_on = all(v["ok"] for w in found for v in w["layers"].values())
    assert (colour, words) == (("green", "Sandboxed (2 grading workers)") if all_on else ("orange", words))
    assert all("grading workers" in v["detail"] or "off on" in v["detail"] for v in info["layers"].values())
    empty = f"{redis_url.rsplit('/', 1)[0]}/5"  # another database of the same server: no worker there
    monkeypatch.setenv("JAXPLAY_QUEUE", empty)
    assert isolation.status() == ("red", "No grading workers")


def test_a_custom_run_goes_to_the_workers_when_the_app_has_a_queue(workers, redis_url, monkeypatch):
    from pages.views import custom_input
    from pages.services import runs
    from grader.grading.runners import PoolRunner
    monkeypatch.delenv("JAXPLAY_QUEUE", raising=False)
    assert isinstance(runs.get_runner(), PoolRunner), "unset, nothing changes"
    monkeypatch.setenv("JAXPLAY_QUEUE", redis_url)
    seen: list[int] = []
    runner = runs.get_runner(on_position=seen.append)
    assert isinstance(runner, QueueRunner)
    problem = problems.get(GA)
    result = custom_input.run_custom(problem, problem.reference, problem.examples[0].inputs, runner,
                                     custom_input.ONE_CASE)
    assert result.yours.ok and result.reference.ok and result.matches
    report = runner.grade(problem, problem.reference, examples_only=True)
    assert report.verdict is Verdict.ACCEPTED and report.file == "<editor>"
    assert seen and seen[-1] == 0, "the place in line is told, and ends at 0"


def test_jobs_carry_only_code_slug_and_case_inputs_and_everything_expires(workers, redis_url):
    problem = problems.get(GA)
    report = QueueRunner(redis_url).grade(problem, problem.reference, examples_only=True)
    assert report.verdict is Verdict.ACCEPTED
    redis = client(redis_url)
    from rq.job import Job
    from rq.serializers import JSONSerializer
    jobs = [k for k in redis.scan_iter("rq:job:*") if b":" not in k[len("rq:job:"):]]
    assert jobs
    for key in jobs:
        job = Job.fetch(key.decode().split(":")[-1], connection=redis, serializer=JSONSerializer)
        # (target: a cost measurement's target, a name such as cpu or tpu-v5e)
        assert set(job.kwargs) <= {"slug", "code", "examples_only", "wall_s", "cases", "small", "target"}, job.kwargs
        assert "expected" not in json.dumps(job.kwargs)
    for key in list(redis.scan_iter("rq:job:*")) + list(redis.scan_iter("rq:results:*")):
        assert 0 < redis.ttl(key) <= settings.FAILURE_TTL_S, (key, redis.ttl(key))


def test_a_job_naming_any_other_function_runs_nothing(workers, redis_url, tmp_path):
    from grader.queue.client import grading_queue
    from rq.results import Result
    from rq.serializers import JSONSerializer
    marker = tmp_path / "ran"
    job = grading_queue(redis_url).enqueue_call("os.system", args=[f"touch {marker}"], ttl=30, result_ttl=30,
                                                failure_ttl=30)
    result = Result.fetch_latest(job, serializer=JSONSerializer, timeout=30)
    assert result is not None and result.type == Result.Type.FAILED
    assert "RefusedJob" in result.exc_string
    assert not marker.exists()


def test_a_full_queue_is_refused_kindly(redis_url, monkeypatch):
    monkeypatch.setattr(settings, "MAX_QUEUED", 0)
    problem = problems.get(GA)
    with pytest.raises(PoolBusy):
        QueueRunner(redis_url).grade(problem, problem.reference, examples_only=True)


def test_a_worker_refuses_to_serve_without_the_layers_required(redis_url):
    env = dict(os.environ, JAXPLAY_REQUIRE_SANDBOX="all", JAXPLAY_BWRAP="0")
    proc = _start_worker(redis_url, env)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1 and "not serving" in err and '"serving"' not in out


BESIDE_ATTACKS = sorted(p for p in (ROOT / "tests" / "attacks").glob("*.py")
                        if "# jobs: 2" in p.read_text().split("import", 1)[0])
"""The attacks graded beside a right answer in flight (deep trees, every kind of entry): sent to the workers too."""


def test_attacks_sent_to_every_worker_then_right_answers_are_accepted(workers, redis_url):
    """Issue 20's queue attack, by class: each attack that is graded beside a right answer in the attack suite
    (1,500 nested folders, nesting past the caps, every kind of entry) is sent to both workers at once, beside
    a right answer (the fork server's cleanup of a deep tree used to die of RecursionError, then every job
    timed out). Each attacker gets its own verdict, never an exception's name; then right answers on both
    workers are accepted within their limits."""
    from attack_suite import header
    assert len(BESIDE_ATTACKS) >= 3
    problem = problems.get("rematerialized-mlp-block")
    for path in BESIDE_ATTACKS:
        info = header(path)
        assert info["problem"] == problem.slug
        got: dict[str, object] = {}
        codes = {"a": path.read_text(), "b": path.read_text(), "right": problem.reference}
        threads = [threading.Thread(target=lambda k=k, code=code: got.__setitem__(k, QueueRunner(redis_url).grade(
            problem, code, examples_only=True, limits=Limits(wall_s=20)))) for k, code in codes.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert got["right"].verdict is Verdict.ACCEPTED, (path.name, got["right"].message)
        for k in ("a", "b"):
            assert got[k].verdict.value in info["expect"].split(), (path.name, got[k].verdict, got[k].message)
    right: dict[int, object] = {}
    started = time.monotonic()
    graders = [threading.Thread(target=lambda i=i: right.__setitem__(i, QueueRunner(redis_url).grade(
        problem, problem.reference, examples_only=True, limits=Limits(wall_s=20)))) for i in range(4)]
    for t in graders:
        t.start()
    for t in graders:
        t.join(timeout=120)
    assert [r.verdict for r in right.values()] == [Verdict.ACCEPTED] * 4, [r.message for r in right.values()]
    assert time.monotonic() - started < 60
    assert all(p.poll() is None for p in workers)


def test_liveness_means_the_pool_answered_recently(workers, redis_url):
    """Each worker's liveness key says how long ago its pool answered a run (probe jobs keep an idle one
    answering); a pool that stops answering lets the key lapse, and a probe is what tells the two apart."""
    from grader.queue.client import workers as serving
    from grader.queue.worker import Liveness
    found = serving(redis_url)
    assert len(found) == 2
    assert all(0 <= w["answered_s_ago"] <= settings.SERVED_WITHIN_S for w in found), found

    class Pool:
        def __init__(self, answers: bool) -> None:
            self.answers, self.last_answer, self.jobs = answers, time.monotonic(), []

        def run(self, job, limits):
            self.jobs.append(job)
            if not self.answers:
                time.sleep(5)  # stuck: never answers
                return None
            self.last_answer = time.monotonic()

    stuck, fine = Pool(False), Pool(True)
    checks = {pool: Liveness(pool, {"probe": 1}, probe_every_s=0.2, served_within_s=0.6) for pool in (stuck, fine)}
    seen = {stuck: [], fine: []}
    for _ in range(12):
        for pool, liveness in checks.items():
            seen[pool].append(liveness.fresh())
        time.sleep(0.1)
    assert all(seen[fine]) and fine.jobs, "an idle pool that answers its probes stays alive"
    assert seen[stuck][0] and not seen[stuck][-1], "a pool that answers nothing lets its key lapse"
    assert len(stuck.jobs) == 1, "one probe at a time"


def test_a_job_past_its_own_timeout_is_lost_honestly_and_the_next_is_graded(workers, redis_url):
    """RQ stops a job that outlives its timeout with JobTimeoutException in the worker's thread, mid-run: the
    learner hears that the grading worker was lost (run again), never the exception's name; that worker's
    pool frees the slot and grades the next jobs."""
    from grader.queue.client import GraderLost, grading_queue
    slow = "import time\ntime.sleep(6)\n" + GA_DIR.joinpath("reference.py").read_text()
    problem = problems.get(GA)
    case = problem.examples[0]
    job = grading_queue(redis_url).enqueue_call(
        "grader.queue.tasks.run", kwargs={"slug": GA, "code": slow, "wall_s": 30,
                                         "cases": [{"name": case.name, "args": case.inputs}]},
        timeout=2, ttl=60, result_ttl=60, failure_ttl=60)
    with pytest.raises(GraderLost) as lost:
        QueueRunner(redis_url)._wait(job, 2)
    assert "grading worker was lost" in str(lost.value) and "Exception" not in str(lost.value)
    right: dict[int, object] = {}
    graders = [threading.Thread(target=lambda i=i: right.__setitem__(i, QueueRunner(redis_url).grade(
        problem, problem.reference, examples_only=True))) for i in range(4)]
    for t in graders:
        t.start()
    for t in graders:
        t.join(timeout=120)
    assert [r.verdict for r in right.values()] == [Verdict.ACCEPTED] * 4, [r.message for r in right.values()]


def test_a_killed_worker_comes_back_as_lost_and_the_other_keeps_serving(workers, redis_url):
    """Last in the module: it kills one of the two workers."""
    problem = problems.get(GA)
    got: list = []
    spinning = threading.Thread(target=lambda: got.append(QueueRunner(redis_url).grade(
        problem, SPIN, examples_only=True, file="spin.py")))
    spinning.start()
    from rq import Queue
    redis = client(redis_url)
    started = Queue(settings.QUEUE_NAME, connection=redis).started_job_registry
    deadline = time.monotonic() + 60
    owner = None
    while owner is None:
        assert time.monotonic() < deadline, "no worker took the job"
        for job_id in started.get_job_ids():
            name = (redis.hget(f"rq:job:{job_id}", "worker_name") or b"").decode()
            if name:
                pid = int(name.split("/")[0].rsplit(".", 2)[-2])
                owner = next((p for p in workers if p.pid == pid), None)
        time.sleep(0.2)
    time.sleep(1.0)  # the child is spinning now
    owner.kill()
    owner.wait()
    killed = time.monotonic()
    spinning.join(timeout=settings.ALIVE_TTL_S + 20)
    assert got, "the learner's result came back"
    waited = time.monotonic() - killed
    report = got[0]
    assert report.verdict is Verdict.INTERNAL_ERROR and "grading worker was lost" in report.message and "run again" in report.message
    assert waited <= settings.ALIVE_TTL_S + 5, waited
    assert all(c.message == "not run" for c in report.cases)

    survivor = next(p for p in workers if p is not owner)
    assert survivor.poll() is None
    again = QueueRunner(redis_url).grade(problem, problem.reference, examples_only=True)
    assert again.verdict is Verdict.ACCEPTED, again.message

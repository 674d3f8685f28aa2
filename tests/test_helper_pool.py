"""The grader's helper pools are bounded: a burst of gradings waits for a helper instead of starting one each.

Thirty Runs at once had started thirty verifier processes (each importing JAX) and thirty checkers on two cores;
``HelperPool(limit=...)`` keeps at most ``limit`` alive and hands a freed one to the next request in line.
These tests use the checker's real helper (it imports no JAX, so it starts in well under a second)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from grader.grading import checker
from grader.grading.helpers import LONG_GROUP_NICE, HelperPool

SERVE = "grader.grading.checker:serve"


@pytest.fixture
def pool():
    p = HelperPool(SERVE, checker.CheckerBroke, "test helper", idle=2, limit=1)
    yield p
    p.shutdown()
    for helper in list(p._live):
        helper.kill()


def test_a_request_past_the_limit_waits_for_the_helper_in_use(pool):
    first = pool.take()
    first.wait_ready()
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(pool.take()))
    waiter.start()
    time.sleep(0.4)
    assert not got, "a second helper was started past the limit"
    assert len(pool._live) == 1
    pool.give_back(first)
    waiter.join(5)
    assert got == [first], "the freed helper goes to the request that waited"


def test_a_killed_helper_frees_its_place(pool):
    first = pool.take()
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(pool.take()))
    waiter.start()
    time.sleep(0.2)
    assert not got
    first.kill()  # what a caller does with a helper past its deadline
    waiter.join(5)
    assert got and got[0] is not first and got[0].proc.poll() is None
    got[0].kill()
    assert not pool._live


def test_a_helper_that_died_by_itself_is_not_counted(pool):
    first = pool.take()
    first.wait_ready()
    first.proc.kill()
    first.proc.wait(5)
    second = pool.take(deadline=time.monotonic() + 2)  # no wait: the dead one is pruned
    assert second is not first
    second.kill()


def test_waiting_stops_at_the_deadline(pool):
    first = pool.take()
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        pool.take(deadline=started + 0.3)
    assert 0.25 < time.monotonic() - started < 2
    first.kill()


def test_the_verifier_and_checker_pools_are_bounded():
    from grader.verifier import service
    assert service._helpers.limit is not None and service._helpers.limit >= service.IDLE_HELPERS
    assert checker._helpers.limit is not None


def test_requests_waiting_for_a_helper_are_served_in_the_order_they_came(pool):
    """A class's Runs reach the verifier in the order the pool served them: the helpers keep that order, so
    the first to press Run is not overtaken by a later request that happened to wake first."""
    held = pool.take()
    held.wait_ready()
    order: list[int] = []

    def request(i: int) -> None:
        helper = pool.take()
        order.append(i)
        time.sleep(0.05)
        pool.give_back(helper)

    threads = []
    for i in range(5):
        threads.append(threading.Thread(target=request, args=(i,)))
        threads[-1].start()
        time.sleep(0.15)  # each is waiting before the next comes
    assert order == []
    pool.give_back(held)
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]
    assert not pool._waiting


def test_each_helper_has_a_session_of_its_own(pool):
    """With scheduler autogroups the kernel shares the CPU between sessions first: helpers in the server's
    session got one share among them all against each grading worker's, and a class's Runs piled up in front
    of the verifier. Each helper starts its own."""
    import os
    helper = pool.take()
    helper.wait_ready()
    assert os.getsid(helper.proc.pid) == helper.proc.pid != os.getsid(0)
    pool.give_back(helper)


def test_a_request_goes_back_to_the_idle_helper_that_served_its_key():
    """A verifier's compiled programs and probes are its own: the same programs go to the helper that has them,
    among the idle ones, whichever was given back last; a key none has seen takes any idle helper."""
    p = HelperPool(SERVE, checker.CheckerBroke, "test helper", idle=3, limit=3)
    try:
        a, b, c = p.take(prefer="one"), p.take(prefer="two"), p.take()
        for helper in (a, b, c):
            helper.wait_ready()
        for helper in (a, b, c):  # ``a`` first: a plain take pops the last given back
            p.give_back(helper)
        assert p.take(prefer="one") is a
        p.give_back(a)
        assert p.take(prefer="two") is b
        p.give_back(b)
        assert p.take(prefer="unseen") is b, "no helper has it: the last given back, as before"
        assert "unseen" in b.seen and list(b.seen)[-1] == "unseen"
    finally:
        p.shutdown()
        for helper in list(p._live):
            helper.kill()


def test_warm_up_starts_one_helper_per_idle_place_and_none_while_they_work():
    p = HelperPool(SERVE, checker.CheckerBroke, "test helper", idle=2, limit=3)
    try:
        p.warm_up(1)  # a command line grading one file: one helper, not two
        assert len(p._live) == 1
        p.warm_up()
        assert len(p._live) == 2
        _wait(lambda: len(p._idle) == 2)
        a, b = p.take(), p.take()
        p.warm_up()  # every grading calls it: with both at work it starts none (the spare is take's to start)
        assert len(p._live) == 2
        p.give_back(a)
        p.give_back(b)
    finally:
        p.shutdown()
        for helper in list(p._live):
            helper.kill()


def test_the_helper_past_the_idle_count_starts_only_for_a_request_that_waited():
    """In a burst the warm helpers serve everyone; the spare (JAX imported, a cold cache) is for a request held
    up by a helper on a long answer."""
    p = HelperPool(SERVE, checker.CheckerBroke, "test helper", idle=1, limit=2, spare_after_s=1.0)
    try:
        first = p.take()
        started = time.monotonic()
        second = p.take()
        waited = time.monotonic() - started
        assert second is not first and len(p._live) == 2
        assert 1.0 <= waited < 3.0, waited
        p.give_back(first)
        quick = threading.Thread(target=lambda: (time.sleep(0.2), p.give_back(second)))
        quick.start()
        started = time.monotonic()
        third = p.take()  # ``first`` is idle: taken at once
        assert third is first and time.monotonic() - started < 0.5
        quick.join()
    finally:
        p.shutdown()
        for helper in list(p._live):
            helper.kill()


SERVES = """
import os, sys, time

def slow():  # starts after SLOW_START_S, then answers every request with {}
    time.sleep(float(os.environ.get("SLOW_START_S", "0")))
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    for _ in sys.stdin:
        sys.stdout.write("{}\\n")
        sys.stdout.flush()

def broken():  # dies before it is ready
    sys.exit(3)
"""


@pytest.fixture
def serves(tmp_path, monkeypatch):
    """Helpers of a module of the test's own (on PYTHONPATH, which a helper inherits)."""
    (tmp_path / "jaxplay_test_serves.py").write_text(SERVES)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    pools = []

    def make(serve: str, **options) -> HelperPool:
        pools.append(HelperPool(f"jaxplay_test_serves:{serve}", checker.CheckerBroke, "test helper", **options))
        return pools[-1]
    yield make
    for p in pools:
        p.shutdown()
        for helper in list(p._live):
            helper.kill()


@pytest.mark.slow
def test_a_request_takes_the_helper_freed_first_not_the_one_it_started(serves, monkeypatch):
    """A helper starts in seconds (Python, JAX): a request that found every helper busy starts one in the
    background and takes whichever comes first, here the busy one given back; the started one stays, idle."""
    p = serves("slow", idle=2, limit=2)
    first = p.take()
    assert first.ready, "take hands out ready helpers"
    monkeypatch.setenv("SLOW_START_S", "4")
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(p.take()))
    waiter.start()
    _wait(lambda: len(p._live) == 2, 5)  # it started one
    time.sleep(0.3)
    assert not got
    started = time.monotonic()
    p.give_back(first)
    waiter.join(5)
    assert got == [first] and time.monotonic() - started < 1.0, "it waited for the start, not the freed helper"
    _wait(lambda: len(p._idle) == 1, 10)  # the started helper, once ready, is kept for the next request
    assert p._idle[0] is not first and p._idle[0].ready


def test_a_request_waits_for_the_busy_helper_on_its_key_before_starting_one(serves):
    """The verifier's helper on the same programs will keep its compile and probes: a second request for them
    waits for it (up to ``spare_after_s``) instead of starting a helper to compile them again; another key
    starts one at once."""
    p = serves("slow", idle=2, limit=3, spare_after_s=1.5)
    first = p.take(prefer="programs")
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(p.take(prefer="programs")))
    waiter.start()
    time.sleep(0.5)
    assert len(p._live) == 1 and not got, "a helper was started for programs a busy one is on"
    p.give_back(first)
    waiter.join(5)
    assert got == [first]
    p.give_back(first)
    other = threading.Thread(target=lambda: got.append(p.take(prefer="other programs")))
    held = p.take(prefer="programs")
    other.start()
    _wait(lambda: len(p._live) == 2, 0.5)  # no wait for another key
    other.join(10)
    assert got[-1] is not held
    p.give_back(held)
    p.give_back(got[-1])
    started = time.monotonic()
    a, b = p.take(prefer="programs"), p.take(prefer="slow programs")
    c = p.take(prefer="slow programs")  # b holds it (a program at its time limit): a third starts after the wait
    assert c not in (a, b) and 1.5 <= time.monotonic() - started < 5


def test_a_helper_that_cannot_start_fails_the_request_that_started_it(serves):
    p = serves("broken", idle=1, limit=1)
    started = time.monotonic()
    with pytest.raises(checker.CheckerBroke, match="stopped \\(exit 3\\)"):
        p.take(deadline=started + 30)
    assert time.monotonic() - started < 10
    assert not p._live


def _wait(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _group_nice(helper) -> int | None:
    text = Path(f"/proc/{helper.proc.pid}/autogroup").read_text().split() if AUTOGROUPS else []
    return int(text[2]) if text else None


AUTOGROUPS = Path("/proc/self/autogroup").exists()


def test_a_helper_on_a_long_answer_gives_up_its_place_and_its_priority_until_it_answers():
    """A learner's endless `lax.while_loop` runs only in the verifier (the child only traces). Past the pool's
    `long_after_s` of CPU on one answer, the helper's autogroup is niced and it stops counting against the
    limit: the next request gets a helper at once instead of waiting behind it for its time limit. Once it
    answers, its priority is back and it serves again."""
    pool = HelperPool("tests.spin_helper:serve", RuntimeError, "spinning helper", idle=1, limit=1,
                      long_after_s=0.3, spare_after_s=60.0)
    try:
        spinning = pool.take()
        spinning.wait_ready()
        done = threading.Event()
        pool.watch(spinning, done)
        answers: list = []
        asker = threading.Thread(target=lambda: answers.append(
            spinning.ask(b'{"spin": 3.0}', time.monotonic() + 60)))
        asker.start()
        deadline = time.monotonic() + 20
        while not spinning.long and time.monotonic() < deadline:
            time.sleep(0.05)
        assert spinning.long, "not marked long past long_after_s of CPU"
        if _group_nice(spinning) is not None:
            assert _group_nice(spinning) == LONG_GROUP_NICE
        started = time.monotonic()
        other = pool.take(deadline=time.monotonic() + 20)  # limit 1, spare only after 60 s: only a long one frees it
        assert other is not spinning and time.monotonic() - started < 15
        other.wait_ready()
        assert other.ask(b'{"spin": 0.01}', time.monotonic() + 20) == {"spun": 0.01}
        asker.join(30)
        done.set()
        assert answers == [{"spun": 3.0}]
        pool.give_back(spinning)  # (first: the one idle place is its)
        if AUTOGROUPS:
            assert not spinning.long and spinning.proc.poll() is None and spinning in pool._idle
            assert _group_nice(spinning) == 0, "its priority is given back with its answer"
        else:  # nothing to give back: a helper whose priority could not be restored is not kept
            assert spinning.proc.poll() is not None
        pool.give_back(other)
    finally:
        pool.shutdown()
        for helper in list(pool._live):
            helper.kill()

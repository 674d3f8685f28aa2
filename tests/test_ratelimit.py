"""The gate: one run at a time per session, a rate limit per client address, a global cap, kind refusals."""
from __future__ import annotations

import threading

import pytest

from pages.services.ratelimit import RunGate, RunRefused, client_address


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_second_run_of_the_same_session_is_refused_while_the_first_runs():
    gate = RunGate(clock=FakeClock())
    with gate.run("a"):
        with pytest.raises(RunRefused) as refused:
            gate.start("a")
        assert "still going" in refused.value.message
        with gate.run("b"):  # another session is not affected
            pass
    with gate.run("a"):  # finished: runs again
        pass


def test_the_gate_is_released_when_the_run_raises():
    gate = RunGate(clock=FakeClock())
    with pytest.raises(ValueError):
        with gate.run("a"):
            raise ValueError("grading failed")
    with gate.run("a"):
        pass


def test_runs_beyond_the_rate_are_refused_until_the_window_passes():
    clock = FakeClock()
    gate = RunGate(max_runs=3, window_s=60, clock=clock)
    for _ in range(3):
        with gate.run("a"):
            clock.now += 1
    with pytest.raises(RunRefused) as refused:
        gate.start("a")
    assert refused.value.retry_after_s == pytest.approx(57)
    assert "try again in 57 s" in refused.value.message
    with gate.run("b"):
        pass
    clock.now += 57
    with gate.run("a"):
        pass


def test_refused_starts_do_not_count_against_the_rate():
    clock = FakeClock()
    gate = RunGate(max_runs=2, window_s=10, clock=clock)
    gate.start("a")
    for _ in range(5):
        with pytest.raises(RunRefused):
            gate.start("a")
    gate.finish("a")
    with gate.run("a"):
        pass


def test_concurrent_starts_of_one_session_let_exactly_one_through():
    gate = RunGate(max_runs=100)
    barrier, wins = threading.Barrier(8), []

    def attempt():
        barrier.wait(timeout=10)
        try:
            gate.start("a")
            wins.append(1)
        except RunRefused:
            pass
    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(wins) == 1


def test_idle_sessions_are_forgotten_past_the_cap():
    clock = FakeClock()
    gate = RunGate(max_runs=1, window_s=10, max_sessions=5, clock=clock)
    for i in range(5):
        with gate.run(f"s{i}"):
            pass
    clock.now += 11
    with gate.run("new"):
        pass
    assert set(gate._starts) == {"new"}


def test_a_new_session_from_the_same_client_gets_no_fresh_quota():
    clock = FakeClock()
    gate = RunGate(max_runs=2, window_s=60, clock=clock)
    for session in ("tab-1", "tab-1"):
        with gate.run(session, "203.0.113.7"):
            pass
    with pytest.raises(RunRefused, match="runs in the last 60 seconds"):
        gate.start("after-reload", "203.0.113.7")  # a reload is a new session, same client
    with gate.run("other", "198.51.100.2"):  # another client is not affected
        pass


def test_the_global_cap_holds_for_all_clients_together():
    clock = FakeClock()
    gate = RunGate(max_runs=100, window_s=60, max_total=3, clock=clock)
    for i in range(3):
        with gate.run(f"s{i}", f"10.0.0.{i}"):
            clock.now += 1
    with pytest.raises(RunRefused, match="for everyone") as refused:
        gate.start("s9", "10.0.0.9")
    assert refused.value.retry_after_s == pytest.approx(57)
    clock.now += 57
    with gate.run("s9", "10.0.0.9"):
        pass


def test_the_client_is_the_forwarded_address_only_behind_a_trusted_proxy():
    forwarded, nginx = {"X-Real-IP": "203.0.113.7"}, ("127.0.0.1", "::1")  # nginx on loopback, listed (issue 42)
    assert client_address(None, forwarded) == "local", "no proxy is trusted unless the operator lists it"
    assert client_address(None, forwarded, trusted=nginx) == "203.0.113.7"  # nginx on loopback sets it
    assert client_address(None, {"x-real-ip": "10.1.1.1, 203.0.113.9"}, trusted=nginx) == "203.0.113.9"  # its own entry
    assert client_address("198.51.100.2", forwarded) == "198.51.100.2"  # a direct client cannot choose its address
    assert client_address(None, {}) == "local"
    assert client_address("10.0.0.5", {"X-Forwarded-For": "1.2.3.4"}, header="X-Forwarded-For",
                          trusted=frozenset({"10.0.0.5"})) == "1.2.3.4"

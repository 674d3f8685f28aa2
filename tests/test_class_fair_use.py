"""Fair use for a class (issue 42): the join and run limits believe a forwarded address only from a proxy the
operator lists (``JAXPLAY_TRUSTED_PROXIES``, none by default), so a client cannot pick a fresh address per
request by sending ``X-Real-IP`` itself."""
from __future__ import annotations

import pytest

from pages.services.ratelimit import RunGate, RunRefused, client_address, request_client, trusted_proxies


def _joins_admitted(env: dict, peer: str | None, tries: int = 200) -> int:
    gate, admitted = RunGate(max_runs=60, window_s=60.0), 0
    for i in range(tries):
        client = request_client(peer, {"X-Real-IP": f"203.0.{i // 250}.{i % 250 + 1}"}, env)
        try:
            gate.start(f"join-{i}", client)
        except RunRefused:
            continue
        gate.finish(f"join-{i}")
        admitted += 1
    return admitted


def test_a_header_changed_on_every_join_buys_no_fresh_quota_by_default():
    """The issue's attack: 200 joins from a loopback peer, X-Real-IP changed each time, were all admitted."""
    assert _joins_admitted({}, None) == 60
    assert _joins_admitted({}, "198.51.100.7") == 60


def test_the_proxy_the_operator_lists_is_believed_and_no_other():
    nginx = {"JAXPLAY_TRUSTED_PROXIES": "127.0.0.1,::1"}  # docs/deploying.md: nginx on the same machine
    assert _joins_admitted(nginx, None) == 200, "behind the listed proxy each learner is their own client"
    assert _joins_admitted(nginx, "198.51.100.7") == 60, "a peer that is not the proxy: its header is ignored"
    lan = {"JAXPLAY_TRUSTED_PROXIES": "10.0.0.0/8"}
    assert request_client("10.2.3.4", {"x-real-ip": "198.51.100.1, 192.0.2.9"}, lan) == "192.0.2.9", \
        "the right-most entry, which the proxy wrote"
    assert request_client("10.2.3.4", {"X-Real-IP": "not an address"}, lan) == "10.2.3.4"
    assert request_client(None, {"X-Real-IP": "192.0.2.9"}, lan) == "local", "loopback is not in 10.0.0.0/8"
    assert request_client("10.2.3.4", {"X-Forwarded-For": "192.0.2.9"},
                          {**lan, "JAXPLAY_PROXY_HEADER": "X-Forwarded-For"}) == "192.0.2.9"


@pytest.mark.parametrize("spec, inside, outside", [
    ("", [], ["127.0.0.1", "::1", "10.0.0.1"]),
    ("loopback", ["127.0.0.1", "127.1.2.3", "::1"], ["10.0.0.1"]),
    ("127.0.0.1, ::1, junk, 10.0.0.0/8", ["127.0.0.1", "::1", "10.9.9.9"], ["127.0.0.2", "11.0.0.1"]),
])
def test_trusted_proxies_are_addresses_and_networks(spec, inside, outside):
    import ipaddress
    nets = trusted_proxies(spec)
    assert all(any(ipaddress.ip_address(a) in n for n in nets) for a in inside)
    assert not any(any(ipaddress.ip_address(a) in n for n in nets) for a in outside)
    assert client_address(None, {"X-Real-IP": "192.0.2.1"}, trusted=nets) == (
        "192.0.2.1" if any(ipaddress.ip_address("127.0.0.1") in n for n in nets) else "local")

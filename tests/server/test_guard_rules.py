"""The guard's rules on their own: which Host and Origin are this server's, the failed
sign-in windows (a clock of the test's own), whose failures count together, the lifetimes
`tokens create --expires` takes and the allowed-hosts setting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from shirabe.server.guard import Hosts, SignInLimiter, client_key, host_name
from shirabe.settings import ServerSettings, Settings, parse_lifetime


@pytest.mark.parametrize(
    ("authority", "name"),
    [
        ("localhost:8000", "localhost"),
        ("LOCALHOST", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("docs.example.com.", "docs.example.com"),
        ("docs.example.com:443", "docs.example.com"),
        ("", None),
        (":8000", None),
        ("[::1", None),
        ("localhost:80x", None),
        ("localhost:²", None),  # a digit to str.isdigit, no port
        ("evil.example.com@localhost", None),
        ("a b", None),
    ],
)
def test_host_names(authority: str, name: str | None) -> None:
    assert host_name(authority) == name


def test_only_local_names_and_the_listen_address_by_default() -> None:
    hosts = Hosts.of(ServerSettings(host="10.0.0.5"))
    for allowed in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "10.0.0.5:8000"):
        assert hosts.allows(allowed), allowed
    for refused in ("evil.example.com", "evil.example.com:8000", "10.0.0.6", "", "0.0.0.0"):
        assert not hosts.allows(refused), refused
    # listening on every address names none of them
    assert not Hosts.of(ServerSettings(host="0.0.0.0")).allows("0.0.0.0:8000")


def test_listed_names_and_any() -> None:
    hosts = Hosts.of(ServerSettings(allowed_hosts=["docs.example.com", "10.0.0.5"]))
    assert hosts.allows("docs.example.com") and hosts.allows("DOCS.example.com:8443")
    assert hosts.allows("10.0.0.5:8000") and hosts.allows("localhost")
    assert not hosts.allows("docs.example.com.evil.example") and not hosts.allows("example.com")
    anything = Hosts.of(ServerSettings(allowed_hosts=["*"]))
    assert anything.allows("whatever.example:1") and not anything.allows("a b")


def test_the_own_origin_is_the_host_the_request_names() -> None:
    hosts = Hosts.of(ServerSettings())
    assert hosts.same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert hosts.same_origin("http://LOCALHOST:8000", "localhost:8000")
    assert hosts.same_origin("https://localhost:8000", "localhost:8000")  # a TLS proxy
    for other in (
        "http://evil.example.com",
        "http://127.0.0.1:9000",  # another program on this machine
        "http://localhost:8000",  # a page of another name reaching 127.0.0.1
        "null",
        "file://",
        "http://127.0.0.1:8000/page",
        "http://127.0.0.1:8000?x",  # browsers never send these: not an origin
        "http://127.0.0.1:8000#x",
        "",
    ):
        assert not hosts.same_origin(other, "127.0.0.1:8000"), other
    # a proxy that passes on another Host: the names of allowed_hosts are this server's
    proxied = Hosts.of(ServerSettings(allowed_hosts=["docs.example.com"]))
    assert proxied.same_origin("https://docs.example.com", "127.0.0.1:8000")
    assert not proxied.same_origin("https://evil.example.com", "127.0.0.1:8000")
    # '*' takes any Host, but a page must still be of the host the request names
    anything = Hosts.of(ServerSettings(allowed_hosts=["*"]))
    assert anything.same_origin("http://a.example", "a.example")
    assert not anything.same_origin("http://evil.example.com", "a.example")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failed_sign_ins_wait_for_the_end_of_their_window() -> None:
    clock = Clock()
    limiter = SignInLimiter(3, window=60, clock=clock)
    assert [limiter.failed("a") for _ in range(2)] == [1, 2]
    assert limiter.wait("a") == 0  # under the limit
    clock.now += 10
    assert limiter.failed("a") == 3
    assert limiter.wait("a") == 50  # the window began at the first failure
    assert limiter.wait("b") == 0  # per address
    clock.now += 49.5
    assert limiter.wait("a") == 0.5
    clock.now += 0.5
    assert limiter.wait("a") == 0
    assert limiter.failed("a") == 1  # a new window


def test_the_limiter_remembers_a_bounded_number_of_addresses() -> None:
    clock = Clock()
    limiter = SignInLimiter(1, window=60, clock=clock, addresses=3)
    for address in "abcd":
        limiter.failed(address)
    assert limiter.wait("a") == 0  # the longest quiet was forgotten
    assert all(limiter.wait(address) == 60 for address in "bcd")


def test_whose_failures_count_together() -> None:
    assert client_key("192.0.2.7") == "192.0.2.7"
    assert client_key("2001:db8:1:2:3:4:5:6") == client_key("2001:db8:1:2:ffff::1")
    assert client_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("testclient") == "testclient"


def test_lifetimes() -> None:
    assert parse_lifetime("90d") == timedelta(days=90)
    assert parse_lifetime("12h") == timedelta(hours=12)
    assert parse_lifetime(" 8W ") == timedelta(weeks=8)
    for bad in ("", "90", "d", "0d", "-1d", "1.5d", "3m", "90 d", "3651d"):
        with pytest.raises(ValueError, match="lifetime"):
            parse_lifetime(bad)


def test_the_allowed_hosts_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().server.allowed_hosts == []
    name = "SHIRABE_SERVER__ALLOWED_HOSTS"
    monkeypatch.setenv(name, "Docs.Example.com, 10.0.0.5,[FD00::5]")
    assert Settings().server.allowed_hosts == ["docs.example.com", "10.0.0.5", "fd00::5"]
    monkeypatch.setenv(name, '["docs.example.com", "*"]')
    assert Settings().server.allowed_hosts == ["docs.example.com", "*"]
    for bad in ("https://docs.example.com", "docs.example.com:8443", "docs.example.com/x"):
        monkeypatch.setenv(name, bad)
        with pytest.raises(ValidationError, match="without scheme, port or path"):
            Settings()
    monkeypatch.delenv(name)
    with pytest.raises(ValidationError, match="lifetime"):
        ServerSettings(token_lifetime="forever")

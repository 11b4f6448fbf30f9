"""A trusted reverse proxy in front of a real ``shirabe serve`` process, spoken to over sockets
from two loopback addresses: the proxy's (127.0.0.2, listed in sign_in.proxy_addresses) and
another program's on the same machine (127.0.0.1). The headers that name a user count from the
proxy's connection only, whatever ``X-Forwarded-For`` claims; the proxy's
``X-Forwarded-Proto: https`` makes the session cookie https-only."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import httpx2
import pytest

from shirabe.server.process import free_port, running

pytestmark = pytest.mark.slow

PROXY = "127.0.0.2"
NAMED = {"X-Forwarded-User": "sato", "X-Forwarded-Groups": "jinji-all"}


@dataclass(frozen=True)
class Served:
    url: str
    token: str

    def client(self, address: str) -> httpx2.Client:
        """A client whose connections come from ``address``."""
        transport = httpx2.HTTPTransport(local_address=address)
        return httpx2.Client(base_url=self.url, transport=transport, timeout=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("proxied")
    (base / "groups.yaml").write_text("jinji-all: [hr]\n", encoding="utf-8")
    env = dict(
        os.environ,
        SHIRABE_SERVER__ANONYMOUS="off",
        SHIRABE_SIGN_IN__PROXY_ADDRESSES=PROXY,
        SHIRABE_SIGN_IN__GROUP_MAP=str(base / "groups.yaml"),
    )
    env.pop("FORWARDED_ALLOW_IPS", None)  # uvicorn's default: this machine's forwarding trusted
    home = ["--index", str(base / "index")]
    made = [sys.executable, "-m", "shirabe", "users", "add", "root", *home]
    subprocess.run(made, check=True, env=env, capture_output=True)
    create = [sys.executable, "-m", "shirabe", "tokens", "create", "root", *home]
    token = subprocess.run(create, check=True, env=env, capture_output=True, text=True).stdout
    port = free_port()
    command = [sys.executable, "-m", "shirabe", "serve", "--index", str(base / "index"),
               "--port", str(port)]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/healthz", log=base / "serve.log", env=env):
        yield Served(url, token.strip())


def test_the_proxys_headers_count_from_its_connection_only(served: Served) -> None:
    with served.client(PROXY) as proxy:
        forwarded = NAMED | {"X-Forwarded-For": "10.9.9.9"}  # the client behind the proxy
        status = proxy.get("/api/status", headers=forwarded)
        assert status.status_code == 200, status.text
        assert status.json()["user"] == "sato"
    with served.client("127.0.0.1") as other:
        # another program here, claiming to forward for the proxy: its own address decides
        claimed = NAMED | {"X-Forwarded-For": PROXY}
        refused = other.get("/api/status", headers=claimed)
        assert refused.status_code == 401, refused.text
        assert other.get("/auth/session", headers=claimed).json()["user"] is None


def test_https_at_the_proxy_makes_the_cookie_https_only(served: Served) -> None:
    bearer = {"Authorization": f"Bearer {served.token}"}
    with served.client(PROXY) as proxy:
        https = proxy.post("/api/session", headers=bearer | {"X-Forwarded-Proto": "https"})
        assert https.status_code == 200, https.text
        assert "secure" in https.headers["set-cookie"].lower()
        plain = proxy.post("/api/session", headers=bearer)
        assert "secure" not in plain.headers["set-cookie"].lower()

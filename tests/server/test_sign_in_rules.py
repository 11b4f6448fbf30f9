"""The rules of signing in on their own: which ID tokens are the provider's for this sign-in
(keys made here, tokens signed here), the signed cookie a sign-in keeps between leaving for the
provider and coming back, which addresses a proxy is trusted from, and the sign_in settings."""

from __future__ import annotations

import base64
import json
from itertools import repeat
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey
from pydantic import ValidationError

from shirabe.server.oidc import (
    Flow,
    OidcError,
    directory_groups,
    flow_cookie,
    read_flow,
    verify_id_token as verify,
)
from shirabe.server.proxy import trusted
from shirabe.settings import SignInSettings

ISSUER = "https://login.example.com"
CLIENT = "shirabe"
NONCE = "n-0S6_WzA2Mj"
NOW = 1_900_000_000
KEY = RSAKey.generate_key(2048, parameters={"kid": "k1"})
KEYS: dict[str, Any] = dict(KeySet([KEY]).as_dict())


def token(
    changes: dict[str, Any] | None = None,
    *,
    key: Any = KEY,
    header: dict[str, Any] | None = None,
) -> str:
    claims = {
        "iss": ISSUER,
        "sub": "248289761001",
        "aud": CLIENT,
        "iat": NOW,
        "exp": NOW + 300,
        "nonce": NONCE,
        "groups": ["jinji-all"],
    }
    for name, value in (changes or {}).items():
        if value is None:
            claims.pop(name)
        else:
            claims[name] = value
    return jwt.encode(header or {"alg": "RS256", "kid": "k1"}, claims, key)


def test_a_token_of_the_provider_for_this_sign_in_is_accepted() -> None:
    claims = verify(token(), KEYS, issuer=ISSUER, client_id=CLIENT, nonce=NONCE, now=NOW)
    assert claims["sub"] == "248289761001" and claims["groups"] == ["jinji-all"]
    several = token({"aud": [CLIENT, "other"], "azp": CLIENT})
    assert verify(several, KEYS, issuer=ISSUER, client_id=CLIENT, nonce=NONCE, now=NOW)
    late = NOW + 300 + 30  # within the leeway for clocks that differ
    assert verify(token(), KEYS, issuer=ISSUER, client_id=CLIENT, nonce=NONCE, now=late)


OTHER_KEY = RSAKey.generate_key(2048, parameters={"kid": "k1"})
UNKNOWN_KEY = RSAKey.generate_key(2048, parameters={"kid": "k9"})
UNKNOWN = {"alg": "RS256", "kid": "k9"}
SHARED = OctKey.import_key(b"s" * 32, parameters={"kid": "k1"})
HMAC = {"alg": "HS256", "kid": "k1"}


def _unsigned() -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    claims = {"iss": ISSUER, "sub": "1", "aud": CLIENT, "iat": NOW, "exp": NOW + 300}
    return f"{part({'alg': 'none'})}.{part(claims | {'nonce': NONCE})}."


@pytest.mark.parametrize(
    ("case", "sent", "reason"),
    [
        ("another nonce (a replay)", token({"nonce": "n-other"}), "nonce"),
        ("no nonce", token({"nonce": None}), "nonce"),
        ("another client's", token({"aud": "other-client"}), "id_token"),
        ("another audience, naming us", token({"aud": "other", "azp": CLIENT}), "id_token"),
        ("several audiences, no azp", token({"aud": [CLIENT, "other"]}), "id_token"),
        ("another party's azp", token({"aud": [CLIENT, "x"], "azp": "x"}), "id_token"),
        ("another issuer's", token({"iss": "https://evil.example.com"}), "id_token"),
        ("expired", token({"exp": NOW - 120}), "id_token"),
        ("no subject", token({"sub": None}), "id_token"),
        ("signed by another key", token(key=OTHER_KEY), "id_token"),
        ("a key the provider does not list", token(key=UNKNOWN_KEY, header=UNKNOWN), "key"),
        ("signed with a shared secret", token(key=SHARED, header=HMAC), "id_token"),
        ("not signed", _unsigned(), "id_token"),
        ("not a token", "abc.def.ghi", "id_token"),
    ],
)
def test_tokens_that_are_not_for_this_sign_in_are_refused(
    case: str, sent: str, reason: str
) -> None:
    with pytest.raises(OidcError) as refused:
        verify(sent, KEYS, issuer=ISSUER, client_id=CLIENT, nonce=NONCE, now=NOW)
    assert refused.value.reason == reason, (case, str(refused.value))


def test_the_access_token_hash_must_match() -> None:
    from authlib.oidc.core.util import create_half_hash

    at_hash = create_half_hash("access-1", "RS256").decode()
    sent = token({"at_hash": at_hash})

    def verified(access_token: str) -> dict[str, Any]:
        return verify(
            sent, KEYS, issuer=ISSUER, client_id=CLIENT, nonce=NONCE, access_token=access_token,
            now=NOW,
        )  # fmt: skip

    assert verified("access-1")["sub"] == "248289761001"
    with pytest.raises(OidcError, match="at_hash"):
        verified("access-2")


@pytest.mark.parametrize(
    ("claims", "groups"),
    [
        ({"groups": ["a", "b"]}, ("a", "b")),
        ({"groups": "a"}, ("a",)),
        ({"groups": ["a", {"b": 1}, 3]}, ("a", "3")),
        ({"groups": {"a": 1}}, ()),
        ({}, ()),
    ],
)
def test_the_groups_claim(claims: dict[str, Any], groups: tuple[str, ...]) -> None:
    assert directory_groups(claims, "groups") == groups


def sign(payload: str) -> str:
    return f"mac-of-{len(payload)}-{payload[:8]}"


def test_a_sign_in_keeps_its_flow_in_a_signed_cookie() -> None:
    flow = Flow.new(clock=lambda: 1000.0)
    assert 43 <= len(flow.verifier) <= 128 and flow.state != flow.nonce
    value = flow_cookie(flow, sign)
    assert read_flow(value, sign, clock=lambda: 1599.0) == flow
    payload, _, mac = value.partition(".")
    changed = json.loads(base64.urlsafe_b64decode(payload + "=="))
    forged = base64.urlsafe_b64encode(json.dumps(changed | {"state": "x"}).encode()).decode()
    refused = {
        "no cookie": None,
        "empty": "",
        "another signature": f"{payload}.{mac}x",
        "another state, the old signature": f"{forged.rstrip('=')}.{mac}",
        "signed, but not a flow": f"e30.{sign('e30')}",  # {}
        "not base64": f"@@@.{sign('@@@')}",
    }
    for case, sent in refused.items():
        with pytest.raises(OidcError) as error:
            read_flow(sent, sign, clock=lambda: 1001.0)
        assert error.value.reason == "flow", case
    for late in (1601.0, 999.0):  # over ten minutes, or from the future
        with pytest.raises(OidcError, match="longer than 600 s"):
            read_flow(value, sign, clock=repeat(late).__next__)


@pytest.mark.parametrize(
    ("address", "entries", "expected"),
    [
        ("10.0.0.5", ["10.0.0.5/32"], True),
        ("10.0.0.77", ["10.0.0.0/24"], True),
        ("10.0.1.5", ["10.0.0.0/24"], False),
        ("::ffff:10.0.0.5", ["10.0.0.0/24"], True),  # IPv4 by way of IPv6
        ("fd00::1", ["fd00::/64"], True),
        ("fd00:0:0:1::1", ["fd00::/64"], False),
        ("127.0.0.1", [], False),
        ("testclient", ["10.0.0.0/8"], False),
        ("", ["0.0.0.0/0"], False),
    ],
)
def test_which_addresses_a_proxy_is_trusted_from(
    address: str, entries: list[str], expected: bool
) -> None:
    assert trusted(address, entries) is expected


def test_the_sign_in_settings() -> None:
    settings = SignInSettings(
        oidc_issuer="https://login.example.com/realms/staff/",
        oidc_client_id="shirabe",
        proxy_addresses="10.0.0.5, 10.1.0.0/16",  # type: ignore[arg-type]
        admin_groups="shirabe-admins,it-admins",  # type: ignore[arg-type]
        redirect_base_url="http://docs.intranet.example/",
    )
    assert settings.oidc and settings.oidc_issuer == "https://login.example.com/realms/staff"
    assert settings.proxy_addresses == ["10.0.0.5/32", "10.1.0.0/16"]
    assert settings.admin_groups == ["shirabe-admins", "it-admins"]
    assert settings.redirect_base_url == "http://docs.intranet.example"
    assert not SignInSettings().oidc
    local = SignInSettings(oidc_issuer="http://localhost:9400/", oidc_client_id="shirabe")
    assert local.oidc_issuer == "http://localhost:9400"
    for wrong in (
        {"oidc_issuer": "http://login.example.com", "oidc_client_id": "s"},  # over https
        {"oidc_issuer": "login.example.com", "oidc_client_id": "s"},
        {"oidc_issuer": "https://login.example.com/?x=1", "oidc_client_id": "s"},
        {"oidc_issuer": ISSUER},  # without a client id
        {"oidc_client_id": "shirabe"},  # without an issuer
        {"proxy_addresses": ["10.0.0.300"]},
        {"proxy_addresses": ["proxy.example.com"]},
        {"session_lifetime": "30m"},
        {"proxy_user_header": "X-User: admin"},
    ):
        with pytest.raises(ValidationError):
            SignInSettings(**wrong)

"""Signing in with the company's OpenID Connect provider (Authlib): the authorization code flow
with PKCE (S256), ``state`` and ``nonce``, and the ID token verified against the provider's keys.

The provider's endpoints and keys come from ``<issuer>/.well-known/openid-configuration``,
whose ``issuer`` must be the configured one. A sign-in begins at ``/auth/login``: the browser
is sent to the provider with a fresh ``state``, ``nonce`` and PKCE challenge, and keeps them in
a cookie the server signs (:func:`flow_cookie`). The provider sends it back to
``/auth/callback``: the ``state`` must be the cookie's, the code is exchanged (with the PKCE
verifier and the client secret) for tokens, and the ID token must be signed by one of the
provider's keys (fetched again once for a key it does not know), with an asymmetric algorithm,
issued by the issuer for this client, not expired, and carry the cookie's ``nonce``.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, cast

from shirabe.records import Identity
from shirabe.settings import SignInSettings

logger = logging.getLogger(__name__)

FLOW_SECONDS = 600
"""How long a sign-in may take between leaving for the provider and coming back."""
LEEWAY = 60
"""Seconds of clock difference with the provider an ID token's times may show."""
ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""Signatures an ID token may carry: the provider's private key only (never ``none``, never a
key shared with the client)."""
DISCOVERY = "/.well-known/openid-configuration"


class OidcError(Exception):
    """A sign-in with the provider that did not sign anyone in: ``reason`` is a short code
    (``state``, ``nonce``, ``id_token``, ``key``, ``provider``, ``flow``), the message says
    why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Flow:
    """What a sign-in keeps in the browser between leaving for the provider and coming back."""

    state: str
    nonce: str
    verifier: str
    started: float

    @classmethod
    def new(cls, clock: Callable[[], float] = time.time) -> Flow:
        return cls(
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(48),  # 64 characters: within PKCE's 43-128
            clock(),
        )


def flow_cookie(flow: Flow, sign: Callable[[str], str]) -> str:
    """``flow`` as a cookie's value, signed with ``sign`` (an HMAC under the server's key)."""
    payload = base64.urlsafe_b64encode(json.dumps(asdict(flow)).encode()).decode().rstrip("=")
    return f"{payload}.{sign(payload)}"


def read_flow(
    value: str | None,
    sign: Callable[[str], str],
    clock: Callable[[], float] = time.time,
) -> Flow:
    """The flow a cookie's value holds, if the server signed it less than
    :data:`FLOW_SECONDS` ago; :class:`OidcError` otherwise."""
    payload, dot, mac = (value or "").partition(".")
    if not dot or not hmac.compare_digest(mac.encode(), sign(payload).encode()):
        raise OidcError("flow", "no sign-in was started from this browser")
    try:
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        flow = Flow(str(data["state"]), str(data["nonce"]), str(data["verifier"]), data["started"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise OidcError("flow", "the sign-in cookie cannot be read") from None
    if not 0 <= clock() - float(flow.started) <= FLOW_SECONDS:
        raise OidcError("flow", f"the sign-in took longer than {FLOW_SECONDS} s")
    return flow


def verify_id_token(
    id_token: str,
    keys: Mapping[str, Any],
    *,
    issuer: str,
    client_id: str,
    nonce: str,
    algorithms: frozenset[str] = ALGORITHMS,
    access_token: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """The claims of ``id_token`` once it is shown to be the provider's, for this client and
    this sign-in: signed by one of ``keys`` (a JWKS) with one of ``algorithms``; ``iss`` the
    issuer, ``aud`` naming the client (and ``azp`` when there are others), not expired, issued
    with ``nonce``; ``at_hash`` matching the access token when it has one.
    :class:`OidcError` saying why otherwise."""
    from authlib.oidc.core import CodeIDToken
    from joserfc import jwt
    from joserfc.errors import InvalidKeyIdError, JoseError
    from joserfc.jwk import KeySet

    try:
        key_set = KeySet.import_key_set(cast(Any, dict(keys)))
        token = jwt.decode(id_token, key_set, algorithms=algorithms)
    except InvalidKeyIdError:
        raise OidcError(
            "key", "the ID token is signed by a key the provider does not list"
        ) from None
    except (JoseError, ValueError, TypeError) as exc:
        raise OidcError("id_token", f"the ID token's signature: {exc}") from None
    options = {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": client_id},
        "sub": {"essential": True},
    }
    params = {"nonce": nonce, "client_id": client_id, "access_token": access_token}
    claims = CodeIDToken(token.claims, token.header, options, params)
    try:
        claims.validate(now=now, leeway=LEEWAY)
    except JoseError as exc:
        reason = "nonce" if "nonce" in str(exc) else "id_token"
        raise OidcError(reason, f"the ID token: {exc}") from None
    return dict(token.claims)


def directory_groups(claims: Mapping[str, Any], claim: str) -> tuple[str, ...]:
    """The directory groups a claim lists: a list of names, or one name."""
    value = claims.get(claim)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str | int))
    return ()


class Provider:
    """The company's OpenID Connect provider, as the settings name it; its configuration and
    keys are fetched when first needed and kept."""

    def __init__(self, settings: SignInSettings, *, timeout: float = 10.0) -> None:
        assert settings.oidc_issuer and settings.oidc_client_id
        self.settings = settings
        self.issuer: str = settings.oidc_issuer
        self.client_id: str = settings.oidc_client_id
        self.timeout = timeout
        self._metadata: dict[str, Any] | None = None
        self._keys: dict[str, Any] | None = None

    def _client(self, redirect_uri: str) -> Any:
        from authlib.integrations.httpx_client import OAuth2Client

        scopes = dict.fromkeys(["openid", *self.settings.oidc_scopes])
        secret = os.environ.get(self.settings.oidc_client_secret_env) or None
        return OAuth2Client(
            client_id=self.client_id,
            client_secret=secret,
            scope=" ".join(scopes),
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=self.timeout,
        )

    def _get(self, url: str) -> dict[str, Any]:
        import httpx2

        try:
            response = httpx2.get(url, timeout=self.timeout, follow_redirects=False)
            response.raise_for_status()
            found = response.json()
        except (httpx2.HTTPError, ValueError) as exc:
            raise OidcError("provider", f"{url}: {exc}") from None
        if not isinstance(found, dict):
            raise OidcError("provider", f"{url}: not a JSON object")
        return found

    def metadata(self) -> dict[str, Any]:
        """The provider's configuration; its ``issuer`` must be the configured issuer."""
        if self._metadata is None:
            found = self._get(self.issuer + DISCOVERY)
            named = found.get("issuer")
            if named != self.issuer:
                message = f"the provider names itself {named!r}, not {self.issuer!r}"
                raise OidcError("provider", message + " (SHIRABE_SIGN_IN__OIDC_ISSUER)")
            for needed in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(found.get(needed), str):
                    raise OidcError("provider", f"the provider's configuration has no {needed}")
            self._metadata = found
        return self._metadata

    def keys(self, *, again: bool = False) -> dict[str, Any]:
        """The provider's signing keys (a JWKS); ``again`` fetches them anew."""
        if self._keys is None or again:
            self._keys = self._get(str(self.metadata()["jwks_uri"]))
        return self._keys

    def algorithms(self) -> frozenset[str]:
        listed = self.metadata().get("id_token_signing_alg_values_supported") or ["RS256"]
        return ALGORITHMS.intersection(str(a) for a in listed)

    def begin(self, redirect_uri: str, flow: Flow) -> str:
        """Where to send the browser to sign in: the provider's authorization endpoint with
        the flow's ``state``, ``nonce`` and PKCE challenge."""
        with self._client(redirect_uri) as client:
            url, _ = client.create_authorization_url(
                self.metadata()["authorization_endpoint"],
                state=flow.state,
                code_verifier=flow.verifier,
                nonce=flow.nonce,
            )
        return str(url)

    def finish(self, flow: Flow, params: Mapping[str, str], redirect_uri: str) -> Identity:
        """Who the provider says signed in, from the parameters it sent the browser back
        with: the same ``state``, a code that exchanges for an ID token that passes
        :func:`verify_id_token` with the flow's ``nonce``."""
        if params.get("error"):
            error = params.get("error_description") or params["error"]
            raise OidcError("provider", f"the provider refused: {error[:200]}")
        if not hmac.compare_digest(params.get("state", "").encode(), flow.state.encode()):
            raise OidcError("state", "the state sent back is not this browser's sign-in")
        code = params.get("code", "")
        if not code:
            raise OidcError("provider", "the provider sent no code")
        token = self._exchange(code, flow, redirect_uri)
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError("id_token", "the provider sent no ID token")
        claims = self._verified(id_token, flow.nonce, token.get("access_token"))
        return self._identity(claims)

    def _exchange(self, code: str, flow: Flow, redirect_uri: str) -> dict[str, Any]:
        from authlib.integrations.base_client import OAuthError
        from httpx2 import HTTPError

        try:
            with self._client(redirect_uri) as client:
                token = client.fetch_token(
                    self.metadata()["token_endpoint"], code=code, code_verifier=flow.verifier
                )
        except (OAuthError, HTTPError, ValueError) as exc:
            raise OidcError("provider", f"the code was not exchanged: {exc}") from None
        return dict(token)

    def _verified(self, id_token: str, nonce: str, access_token: object) -> dict[str, Any]:
        def verify(keys: Mapping[str, Any]) -> dict[str, Any]:
            return verify_id_token(
                id_token,
                keys,
                issuer=self.issuer,
                client_id=self.client_id,
                nonce=nonce,
                algorithms=self.algorithms(),
                access_token=access_token if isinstance(access_token, str) else None,
            )

        try:
            return verify(self.keys())
        except OidcError as exc:
            if exc.reason != "key":
                raise
        return verify(self.keys(again=True))  # the provider may have rotated its keys

    def _identity(self, claims: Mapping[str, Any]) -> Identity:
        settings = self.settings
        name = next(
            (
                str(claims[c])
                for c in (settings.oidc_name_claim, "email", "name")
                if isinstance(claims.get(c), str) and str(claims[c]).strip()
            ),
            str(claims["sub"]),
        )
        groups = directory_groups(claims, settings.oidc_groups_claim)
        return Identity(self.issuer, str(claims["sub"]), name, groups)

"""The ``sign_in`` section: how people sign in to the page besides an API token. The company's
OpenID Connect provider (``oidc_*``), a reverse proxy that signs them in and names them in
headers (``proxy_*``), how directory groups become shirabe's groups, and how long a browser's
session lasts."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Annotated, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import NoDecode

from shirabe.settings.files import parse_lifetime
from shirabe.settings.sections import Section

_HEADER = r"^[A-Za-z0-9-]{1,64}$"


def _listed(value: object) -> object:
    """A list, a JSON list, or a comma-separated string (``a,b``)."""
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            return json.loads(value)
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class SignInSettings(Section):
    """Sign-in to the page by the company's accounts: OpenID Connect or a trusted reverse
    proxy; both are off until configured. API tokens work as they do without them."""

    name_in_settings: ClassVar[str] = "sign_in"

    session_lifetime: str = Field(
        default="12h",
        description="How long a browser stays signed in (a session cookie, whichever way it "
        "signed in: the company's account or an API token typed into the page): 12h, 7d, 2w.",
    )
    oidc_issuer: str | None = Field(
        default=None,
        description="The OpenID Connect provider's issuer URL (https://login.example.com/realms/"
        "staff); its settings are read from <issuer>/.well-known/openid-configuration. With "
        "oidc_client_id set, the page offers 「会社のアカウントでサインイン」.",
    )
    oidc_client_id: str | None = Field(
        default=None, description="shirabe's client id, as registered with the provider."
    )
    oidc_client_secret_env: str = Field(
        default="SHIRABE_OIDC_CLIENT_SECRET",
        description="Name of the environment variable holding the client secret (read when "
        "needed, never shown); unset: a public client (PKCE only).",
    )
    oidc_scopes: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["openid", "profile", "email"],
        description="Scopes asked for ('openid' is always added); add the one that brings the "
        "groups claim if the provider needs one (groups).",
    )
    oidc_groups_claim: str = Field(
        default="groups",
        description="The ID token claim that lists the user's directory groups.",
    )
    oidc_name_claim: str = Field(
        default="preferred_username",
        description="The claim a new user is named after (then email, then name); only the "
        "name shown: users are known by the issuer and subject, never by a name.",
    )
    redirect_base_url: str | None = Field(
        default=None,
        description="The address people open the page at (https://docs.example.com): the "
        "provider sends them back to <it>/auth/callback, which must be registered with it. "
        "Default: the address of the request that started the sign-in.",
    )
    group_map: Path | None = Field(
        default=None,
        description="YAML file mapping directory groups to shirabe groups (jinji-all: [hr]); "
        "only the groups it lists count. Without one, a directory group is the shirabe group "
        "of the same name.",
    )
    admin_groups: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Directory groups whose members are admins (before any mapping). Empty: "
        "no claim or header ever grants admin; a user's admin role is left as the CLI set it.",
    )
    proxy_addresses: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Addresses of reverse proxies trusted to name the user in headers "
        "(CIDRs or addresses: 10.0.0.5, 10.1.0.0/16); from any other address the headers are "
        "ignored. Empty: off.",
    )
    proxy_user_header: str = Field(
        default="X-Forwarded-User",
        pattern=_HEADER,
        description="The header in which a trusted proxy names the user.",
    )
    proxy_groups_header: str = Field(
        default="X-Forwarded-Groups",
        pattern=_HEADER,
        description="The header in which a trusted proxy lists the user's directory groups, "
        "comma-separated.",
    )

    @property
    def oidc(self) -> bool:
        """Whether OpenID Connect sign-in is configured."""
        return bool(self.oidc_issuer and self.oidc_client_id)

    @model_validator(mode="after")
    def _both(self) -> Self:
        """An issuer without a client id, or the other way round, is a mistake: said so."""
        if bool(self.oidc_issuer) != bool(self.oidc_client_id):
            raise ValueError(
                "OpenID Connect sign-in needs both oidc_issuer and oidc_client_id "
                "(SHIRABE_SIGN_IN__OIDC_ISSUER, SHIRABE_SIGN_IN__OIDC_CLIENT_ID)"
            )
        return self

    @field_validator("oidc_scopes", "admin_groups", "proxy_addresses", mode="before")
    @classmethod
    def _lists(cls, value: object) -> object:
        return _listed(value)

    @field_validator("session_lifetime")
    @classmethod
    def _lifetime(cls, value: str) -> str:
        parse_lifetime(value)
        return value

    @field_validator("oidc_issuer", "redirect_base_url")
    @classmethod
    def _url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An http(s) URL without query or fragment, without its trailing slash; the issuer
        over https, or plain http on this machine only (a provider on the same host)."""
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
            raise ValueError(f"{value!r}: an http(s):// URL without query")
        local = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if info.field_name == "oidc_issuer" and parts.scheme == "http" and not local:
            raise ValueError(f"{value!r}: the issuer must use https (plain http: localhost only)")
        return url

    @field_validator("proxy_addresses")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        networks = []
        for entry in value:
            try:
                networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
            except ValueError:
                raise ValueError(
                    f"proxy address {entry!r}: an address or CIDR (10.0.0.5, 10.1.0.0/16)"
                ) from None
        return networks

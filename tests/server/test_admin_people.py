"""Users, groups and tokens managed through the API as the admin page does it (in-process,
real index and accounts): each change is audited as the admin who made it, a removed user's
tokens stop at once, the last admin stays, and a token's secret is given once and kept
nowhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.admin_served import Served, error, served

pytestmark = pytest.mark.slow


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path) as found:
        yield found


def test_a_user_added_with_a_token_reads_as_their_groups_say(api: Served) -> None:
    client, root = api.client, api.bearer("root")
    added = client.post("/api/admin/users", json={"name": "kenji", "groups": []}, headers=root)
    assert added.status_code == 201, added.text
    assert added.json() == {"name": "kenji", "groups": [], "admin": False}
    made = client.post(
        "/api/admin/tokens", json={"user": "kenji", "label": "pc", "expires": "30d"}, headers=root
    )
    assert made.status_code == 201, made.text
    secret = made.json()["token"]
    api.tokens["kenji"] = secret
    assert secret.startswith("shb_") and made.json()["expires_at"]
    assert api.paths("kenji") == {"製品/仕様書.md", "製品/取扱説明書.md", "総務/壊れた議事録.docx"}
    changed = client.patch("/api/admin/users/kenji", json={"groups": ["hr"]}, headers=root)
    assert changed.json()["groups"] == ["hr"]
    assert "人事/給与規程.md" in api.paths("kenji")  # the next request reads with hr
    listed = api.get("/api/admin/tokens", user="kenji")["items"]
    assert [(t["user"], t["label"], t["revoked"]) for t in listed] == [("kenji", "pc", False)]
    assert "token" not in listed[0] and secret not in json.dumps(listed)
    assert client.delete("/api/admin/users/kenji", headers=root).status_code == 200
    error(client.get("/api/status", headers=api.bearer("kenji")), 401, "unauthorized")
    log = api.audit(path="kenji")
    assert [e["action"] for e in reversed(log)] == [
        "user_add",
        "token_create",
        "user_change",
        "user_remove",
    ]
    assert {e["actor"] for e in log} == {"root"}
    assert "groups - -> groups hr" in log[1]["detail"]
    assert secret not in json.dumps(api.audit()) and secret[4:] not in json.dumps(api.audit())


def test_the_last_admin_can_be_neither_removed_nor_demoted(api: Served) -> None:
    client, root = api.client, api.bearer("root")
    message = error(client.delete("/api/admin/users/root", headers=root), 409, "last_admin")
    assert "last admin" in message
    error(
        client.patch("/api/admin/users/root", json={"admin": False}, headers=root),
        409,
        "last_admin",
    )
    assert api.get("/api/status")["admin"] is True  # still an admin, still signed in
    promoted = client.patch("/api/admin/users/hana", json={"admin": True}, headers=root)
    assert promoted.json()["admin"] is True
    demoted = client.patch("/api/admin/users/root", json={"admin": False}, headers=root)
    assert demoted.status_code == 200 and demoted.json()["admin"] is False
    error(client.get("/api/admin/users", headers=root), 403, "forbidden")  # at once
    hana = api.bearer("hana")
    error(client.delete("/api/admin/users/hana", headers=hana), 409, "last_admin")
    error(client.delete("/api/admin/users/nobody", headers=hana), 404, "not_found")
    error(client.post("/api/admin/users", json={"name": "root"}, headers=hana), 409, "conflict")
    error(
        client.post("/api/admin/users", json={"name": "x", "groups": ["h r"]}, headers=hana),
        422,
        "invalid_request",
    )


def test_tokens_are_revoked_at_once_and_held_to_the_site_lifetime(
    api: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, root = api.client, api.bearer("root")
    made = client.post("/api/admin/tokens", json={"user": "taro"}, headers=root).json()
    assert made["expires_at"] is None  # no site limit: never, unless asked
    taro = {"Authorization": f"Bearer {made['token']}"}
    assert client.get("/api/status", headers=taro).json()["user"] == "taro"
    revoked = client.delete(f"/api/admin/tokens/{made['id']}", headers=root)
    assert revoked.json() == {"revoked": made["id"], "user": "taro"}
    error(client.get("/api/status", headers=taro), 401, "unauthorized")
    listed = {t["id"]: t for t in api.get("/api/admin/tokens")["items"]}
    assert listed[made["id"]]["revoked"] is True
    error(client.delete("/api/admin/tokens/999999", headers=root), 404, "not_found")
    wrong = client.post(
        "/api/admin/tokens", json={"user": "taro", "expires": "3 months"}, headers=root
    )
    assert "12h, 90d or 8w" in error(wrong, 422, "invalid_request")
    error(client.post("/api/admin/tokens", json={"user": "nobody"}, headers=root), 404, "not_found")
    people = api.shirabe.people
    monkeypatch.setattr(people, "_longest", people.lifetime("7d"))
    monkeypatch.setattr(people, "_most", "7d")
    longer = client.post("/api/admin/tokens", json={"user": "taro", "expires": "30d"}, headers=root)
    assert "longer than" in error(longer, 422, "invalid_request")
    default = client.post("/api/admin/tokens", json={"user": "taro"}, headers=root).json()
    assert default["expires_at"] is not None  # the site's longest is the default
    actions = [(e["action"], e["path"]) for e in api.audit(actor="root")]
    assert ("token_revoke", "taro") in actions and ("token_create", "taro") in actions


def test_groups_list_their_members(api: Served) -> None:
    api.client.post(
        "/api/admin/users",
        json={"name": "mika", "groups": ["hr", "sales"]},
        headers=api.bearer("root"),
    )
    groups = {g["name"]: g for g in api.get("/api/admin/groups")["items"]}
    assert groups["hr"]["members"] == ["hana", "mika"]
    assert groups["sales"]["members"] == ["mika"]
    assert groups["public"]["everyone"] is True
    assert groups["hr"]["documents"] == 2

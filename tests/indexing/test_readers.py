"""What a new access map would do to the documents' readers: a pure function, checked against
a table worked out by hand."""

from __future__ import annotations

import json

from shirabe.access.map import parse_access_map
from shirabe.indexing.readers import preview
from shirabe.records import GroupChange, ReaderChange, SourceInfo

MAP = parse_access_map(
    {"人事/**": ["hr"], "経理/**": ["finance", "executives"], "総務/機密*": ["hr"]},
    "test",
    ["public"],
)
DOCUMENTS = [  # (key, groups now, path below its area)
    ("/d/人事/給与.md", ["hr"], "人事/給与.md"),  # unchanged
    ("/d/経理/予算.md", ["finance"], "経理/予算.md"),  # executives gain
    ("/d/総務/機密メモ.md", ["public"], "総務/機密メモ.md"),  # hr gains, public loses
    ("/d/総務/FAQ.md", ["public"], "総務/FAQ.md"),  # unchanged
    ("/d/営業/案件.md", ["sales"], "営業/案件.md"),  # sales loses, public gains
    ("/u/経理/精算.md", ["public"], "経理/精算.md"),  # an upload: finance, executives gain
]
# by hand: changed 4; executives +2, finance +1, hr +1, public +1 -2, sales -1


def source(key: str, groups: list[str]) -> SourceInfo:
    tags = {"groups": json.dumps(groups)}
    return SourceInfo(key, "", 0, 0.0, "ok", None, 1, "", metadata=tags)


def documents() -> list[tuple[SourceInfo, str]]:
    return [(source(key, groups), relative) for key, groups, relative in DOCUMENTS]


def test_a_preview_counts_what_each_group_gains_and_loses() -> None:
    found = preview(documents(), MAP)
    assert (found.documents, found.changed) == (6, 4)
    assert found.changes == [
        ReaderChange("/d/営業/案件.md", ("sales",), ("public",)),
        ReaderChange("/d/経理/予算.md", ("finance",), ("finance", "executives")),
        ReaderChange("/d/総務/機密メモ.md", ("public",), ("hr",)),
        ReaderChange("/u/経理/精算.md", ("public",), ("finance", "executives")),
    ]
    assert found.groups == [
        GroupChange("executives", 2, 0),
        GroupChange("finance", 1, 0),
        GroupChange("hr", 1, 0),
        GroupChange("public", 1, 2),
        GroupChange("sales", 0, 1),
    ]


def test_a_limited_preview_keeps_whole_counts() -> None:
    found = preview(documents(), MAP, limit=1)
    assert [c.path for c in found.changes] == ["/d/営業/案件.md"]
    assert found.changed == 4 and sum(g.gains for g in found.groups) == 5


def test_the_same_readers_in_another_order_are_no_change() -> None:
    reordered = [(source("/d/経理/a.md", ["executives", "finance"]), "経理/a.md")]
    assert preview(reordered, MAP).changed == 0

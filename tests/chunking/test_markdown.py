"""Markdown chunking: hand-computed chunk tables, splitting rules, summaries and properties."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings, strategies as st

from shirabe.chunking.markdown import MarkdownChunker, parse_blocks, summary_texts
from shirabe.chunking.protocol import Chunker
from shirabe.chunking.registry import make_chunker
from shirabe.records import Chunk, Document, Part
from shirabe.settings import IngestSettings
from shirabe.text.markdown import escape_line, starts_structure

NESTED = """前書き。

# 製品
概要です。

## 仕様
AQ-300 の仕様。

## 保守
### 点検
ERR-101 を確認。

# 付録
おわり。
"""


def chunk(
    text: str | list[str], *, size: int = 400, overlap: int = 0, summaries: bool = True
) -> list[Chunk]:
    texts = [text] if isinstance(text, str) else text
    parts = [Part(t, {"page": i + 1}) for i, t in enumerate(texts)]
    chunker = MarkdownChunker(size=size, overlap=overlap, summaries=summaries)
    return chunker.chunk(Document("docs/manual.md", parts))


def table(chunks: list[Chunk]) -> list[tuple[tuple[str, ...], str, bool]]:
    return [(c.heading_path, c.text, c.is_summary) for c in chunks]


def ordinary(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if not c.is_summary]


def test_nested_document_chunks_exactly() -> None:
    assert table(chunk(NESTED)) == [
        ((), "前書き。", False),
        (("製品",), "概要です。", False),
        (("製品", "仕様"), "AQ-300 の仕様。", False),
        (("製品", "保守", "点検"), "ERR-101 を確認。", False),
        (
            ("製品", "保守"),
            "「保守」の項目（1件）: 点検\n記載されているコード（1件）: ERR-101",
            True,
        ),
        (
            ("製品",),
            "「製品」の項目（2件）: 仕様、保守\n記載されているコード（2件）: AQ-300、ERR-101",
            True,
        ),
        (("付録",), "おわり。", False),
        (
            (),
            "「manual.md」の項目（2件）: 製品、付録\n記載されているコード（2件）: AQ-300、ERR-101",
            True,
        ),
    ]


def test_nested_document_without_summaries() -> None:
    assert table(chunk(NESTED, summaries=False)) == [
        ((), "前書き。", False),
        (("製品",), "概要です。", False),
        (("製品", "仕様"), "AQ-300 の仕様。", False),
        (("製品", "保守", "点検"), "ERR-101 を確認。", False),
        (("付録",), "おわり。", False),
    ]


def test_chunk_fields_positions_and_offsets() -> None:
    chunks = chunk(NESTED)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert c.source == "docs/manual.md"
        assert c.locator == {"page": 1}
        assert c.metadata == {}
        assert c.id is None
    for c in ordinary(chunks):
        assert NESTED[c.start : c.end] == c.text
    summary = next(c for c in chunks if c.heading_path == ("製品",) and c.is_summary)
    assert NESTED[summary.start : summary.end].startswith("# 製品")
    assert NESTED[summary.start : summary.end].endswith("ERR-101 を確認。")
    document_summary = chunks[-1]
    assert (document_summary.start, document_summary.end) == (0, len(NESTED.rstrip()))


def test_chunks_never_cross_a_heading() -> None:
    text = "# A\n短い。\n\n## B\n短い。\n\n# C\n短い。"
    chunks = chunk(text, size=400, summaries=False)
    assert table(chunks) == [
        (("A",), "短い。", False),
        (("A", "B"), "短い。", False),
        (("C",), "短い。", False),
    ]


def test_heading_level_replaces_deeper_levels() -> None:
    text = "# A\n## B\n### C\nx\n## D\ny\n### E\nz\n# F\nw"
    paths = [c.heading_path for c in chunk(text, summaries=False)]
    assert paths == [("A", "B", "C"), ("A", "D"), ("A", "D", "E"), ("F",)]


def test_heading_only_sections_produce_no_ordinary_chunk() -> None:
    assert chunk("# A\n\n# B\n", summaries=False) == []
    assert table(chunk("# 親\n## 子1\n## 子2\n")) == [
        (("親",), "「親」の項目（2件）: 子1、子2", True),
    ]


def test_empty_and_blank_documents() -> None:
    assert MarkdownChunker().chunk(Document("empty.md", [])) == []
    assert chunk("") == []
    assert chunk(["  \n\n", "\n"]) == []


def test_escaped_hash_and_closing_hashes() -> None:
    text = "# 見出し ##\n\\# これは見出しではない\n\n#タグ"
    assert table(chunk(text)) == [(("見出し",), "\\# これは見出しではない\n\n#タグ", False)]
    assert [b.kind for b in parse_blocks(text)] == ["heading", "paragraph", "paragraph"]


def test_paragraphs_and_lists_pack_greedily() -> None:
    text = "# T\n段落一。\n\n- 項目1\n- 項目2\n\n段落三。"
    assert [c.text for c in chunk(text, size=400)] == ["段落一。\n\n- 項目1\n- 項目2\n\n段落三。"]
    assert [c.text for c in chunk(text, size=12)] == ["段落一。", "- 項目1\n- 項目2", "段落三。"]


def test_long_paragraph_splits_at_sentence_ends() -> None:
    sentence = "一二三四五六七八。"
    text = sentence * 5
    chunks = chunk(text, size=20)
    assert [c.text for c in chunks] == [sentence * 2, sentence * 2, sentence]
    assert [(c.start, c.end) for c in chunks] == [(0, 18), (18, 36), (36, 45)]


def test_single_long_sentence_is_hard_cut() -> None:
    text = "前文。" + "あ" * 50 + "。"
    chunks = chunk(text, size=20)
    assert [c.text for c in chunks] == ["前文。", "あ" * 20, "あ" * 20, "あ" * 10 + "。"]
    for c in chunks:
        assert text[c.start : c.end] == c.text


TABLE = "| 項目 | 値 |\n|---|---|\n" + "\n".join(f"| r{i} | 値{i} |" for i in range(6))


def test_table_that_fits_is_kept_whole() -> None:
    text = f"前の段落です。\n\n{TABLE}\n\n後の段落。"
    chunks = chunk(text, size=len(TABLE) + 2)
    assert [c.text for c in chunks] == ["前の段落です。", TABLE, "後の段落。"]
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_long_table_splits_between_rows_repeating_the_header() -> None:
    header = "| 項目 | 値 |\n|---|---|"
    chunks = chunk(TABLE, size=45)
    assert [c.text for c in chunks] == [
        f"{header}\n| r0 | 値0 |\n| r1 | 値1 |",
        f"{header}\n| r2 | 値2 |\n| r3 | 値3 |",
        f"{header}\n| r4 | 値4 |\n| r5 | 値5 |",
    ]
    assert TABLE[chunks[0].start : chunks[0].end] == chunks[0].text
    assert [TABLE[c.start : c.end] for c in chunks[1:]] == [
        "| r2 | 値2 |\n| r3 | 値3 |",
        "| r4 | 値4 |\n| r5 | 値5 |",
    ]
    assert all(len(c.text) <= 45 for c in chunks)


def test_hash_inside_code_block_is_not_a_heading() -> None:
    text = "# 設定\n説明。\n\n```bash\n# コメント\necho ok\n```\n\n続き。"
    chunks = chunk(text)
    assert table(chunks) == [
        (("設定",), "説明。\n\n```bash\n# コメント\necho ok\n```\n\n続き。", False),
    ]
    assert [b.kind for b in parse_blocks(text)] == ["heading", "paragraph", "code", "paragraph"]


def test_long_code_block_splits_between_lines_reopening_the_fence() -> None:
    code = "```py\n" + "\n".join(f"x = {i}" for i in range(6)) + "\n```"
    chunks = chunk(code, size=30)
    assert [c.text for c in chunks] == [
        "```py\nx = 0\nx = 1\nx = 2\n```",
        "```py\nx = 3\nx = 4\nx = 5\n```",
    ]
    assert code[chunks[0].start : chunks[0].end] == "```py\nx = 0\nx = 1\nx = 2"
    assert code[chunks[1].start : chunks[1].end] == "x = 3\nx = 4\nx = 5\n```"


def test_tilde_fence_and_unclosed_fence() -> None:
    blocks = parse_blocks("~~~\n# a\n```\n~~~\n\n```\n# b\n")
    assert [b.kind for b in blocks] == ["code", "code"]


def test_multi_part_document_carries_headings_but_never_crosses_parts() -> None:
    pages = ["# 第1章\n本文1。", "続き。\n\n## 第1節\n本文2。"]
    chunks = chunk(pages)
    assert [(c.heading_path, c.text, c.locator, c.is_summary) for c in chunks] == [
        (("第1章",), "本文1。", {"page": 1}, False),
        (("第1章",), "続き。", {"page": 2}, False),
        (("第1章", "第1節"), "本文2。", {"page": 2}, False),
        (("第1章",), "「第1章」の項目（1件）: 第1節", {"page": 1}, True),
    ]
    for c in ordinary(chunks):
        page = pages[int(c.locator["page"]) - 1]
        assert page[c.start : c.end] == c.text
    summary = chunks[-1]
    assert (summary.start, summary.end) == (0, len(pages[0]))


def test_overlap_repeats_trailing_sentences_of_the_previous_chunk() -> None:
    sentence = "一二三四五六七八。"
    text = "# T\n" + sentence * 2 + "九十。" + sentence
    chunks = chunk(text, size=24, overlap=10)
    assert [c.text for c in chunks] == [
        sentence * 2 + "九十。",
        "九十。" + sentence,
    ]
    assert all(text[c.start : c.end] == c.text for c in chunks)
    wider = chunk(text, size=24, overlap=13)
    assert [c.text for c in wider] == [sentence * 2 + "九十。", sentence + "九十。" + sentence]


def test_overlap_never_crosses_a_heading() -> None:
    text = "# A\n一二三。\n# B\n四五六。"
    assert [c.text for c in chunk(text, overlap=100, summaries=False)] == ["一二三。", "四五六。"]


def test_summary_lists_direct_sub_sections_and_every_code_beneath() -> None:
    codes = [f"ERR-{n}" for n in range(101, 109)]
    body = "\n".join(f"## {code} 障害{i}\n対処は手順書を参照。" for i, code in enumerate(codes))
    text = f"# エラーコード一覧\n{body}\n### 詳細\nINC-2024-0004 と ERR-101 を参照。"
    summaries = [c for c in chunk(text, summaries=True) if c.is_summary]
    assert len(summaries) == 2
    titles = "、".join(f"{code} 障害{i}" for i, code in enumerate(codes))
    listed = "、".join([*codes, "INC-2024-0004"])
    assert summaries[1].heading_path == ("エラーコード一覧",)
    assert summaries[1].text == (
        f"「エラーコード一覧」の項目（8件）: {titles}\n記載されているコード（9件）: {listed}"
    )
    assert summaries[0].heading_path == ("エラーコード一覧", "ERR-108 障害7")
    assert summaries[0].text == (
        "「ERR-108 障害7」の項目（1件）: 詳細\n記載されているコード（2件）: INC-2024-0004、ERR-101"
    )


def test_summary_goes_right_after_its_section() -> None:
    text = "# A\n## A1\nx\n# B\ny\n## B1\nz"
    assert [(c.heading_path, c.is_summary) for c in chunk(text)] == [
        (("A", "A1"), False),
        (("A",), True),
        (("B",), False),
        (("B", "B1"), False),
        (("B",), True),
        ((), True),
    ]


def test_document_summary_needs_two_top_level_sections() -> None:
    assert not any(c.heading_path == () for c in chunk("# A\n## A1\nx") if c.is_summary)
    document = Document("a/b.md", [Part("# A\nERR-1\n# B\nx")], title="手引き")
    chunks = MarkdownChunker().chunk(document)
    assert chunks[-1].text == "「手引き」の項目（2件）: A、B\n記載されているコード（1件）: ERR-1"


def test_long_summary_is_split_repeating_the_prefix() -> None:
    children = "\n".join(f"## 子{i:02d}" for i in range(12))
    chunks = chunk(f"# 親\n{children}", size=10)
    summaries = [c for c in chunks if c.is_summary]
    assert len(summaries) > 1
    for c in summaries:
        assert c.text.startswith("「親」の項目（12件）")
        assert len(c.text) <= 40
        assert c.heading_path == ("親",)
    listed = [t for c in summaries for t in c.text.split(": ", 1)[1].split("、")]
    assert listed == [f"子{i:02d}" for i in range(12)]


def test_summary_texts_continuation_without_titles() -> None:
    texts = summary_texts("親", ["子"], ["AB-1", "AB-2", "AB-3"], 36)
    assert texts == [
        "「親」の項目（1件）: 子\n記載されているコード（3件）: AB-1",
        "「親」の項目（1件）\n記載されているコード（3件）: AB-2、AB-3",
    ]


def test_an_edit_leaves_the_chunks_of_other_sections_alone() -> None:
    """Embeddings are cached by heading path and text, so a re-ingested file re-embeds only
    what an edit touched: every other section must chunk exactly as before."""
    before = chunk(NESTED, size=10)
    assert [c.text for c in before if c.heading_path == ("付録",)] == ["おわり。"]
    at_the_end = chunk(NESTED.replace("おわり。", "おわりです。付録は以上。"), size=10)
    assert at_the_end[:10] == before[:10]  # everything up to 付録, offsets included
    assert [(c.heading_path, c.text) for c in at_the_end[10:]] == [
        (("付録",), "おわりです。"),
        (("付録",), "付録は以上。"),
        *[(c.heading_path, c.text) for c in before[11:]],  # the document summaries
    ]
    at_the_start = chunk(NESTED.replace("前書き。", "この文書の前書きです。"), size=10)
    assert [c.text for c in at_the_start[:2]] == ["この文書の前書きです", "。"]
    assert [(c.heading_path, c.text) for c in at_the_start[2:]] == [
        (c.heading_path, c.text) for c in before[1:]
    ]
    longer = len("この文書の前書きです。") - len("前書き。")
    assert [(c.start - longer, c.end - longer) for c in ordinary(at_the_start)[2:]] == [
        (c.start, c.end) for c in ordinary(before)[1:]
    ]


def test_the_settings_shape_the_chunks() -> None:
    a = "有給休暇は勤怠システムから申請する。"
    b = "申請は取得日の前日までに行う。"
    c = "急病のときは当日の朝に上長へ電話で連絡する。"
    d = "半日単位でも取得できる。"
    e = "上長が承認する。ERR-101 が出たら再申請する。"
    rules = f"# 休暇規程\n\n## 申請\n{a}{b}{c}{d}\n\n## 承認\n{e}\n"
    document = Document("docs/休暇規程.md", [Part(rules)])

    def chunks_with(settings: IngestSettings) -> list[tuple[tuple[str, ...], str, bool]]:
        chunker: Chunker = make_chunker(settings)
        return table(chunker.chunk(document))

    approve = (("休暇規程", "承認"), e, False)
    summary = (
        ("休暇規程",),
        "「休暇規程」の項目（2件）: 申請、承認\n記載されているコード（1件）: ERR-101",
        True,
    )

    def section(text: str) -> tuple[tuple[str, ...], str, bool]:
        return (("休暇規程", "申請"), text, False)

    assert chunks_with(IngestSettings()) == [section(a + b + c + d), approve, summary]
    # smaller chunks: more of them, each within the size, cut between sentences
    assert chunks_with(IngestSettings(chunk_size=50)) == [
        section(a + b),
        section(c + d),
        approve,
        summary,
    ]
    # overlap: the next chunk repeats the last sentence that fits in it
    assert chunks_with(IngestSettings(chunk_size=50, chunk_overlap=20)) == [
        section(a + b),
        section(b + c + d),
        approve,
        summary,
    ]
    # no summaries: the same ordinary chunks, nothing else
    assert chunks_with(IngestSettings(section_summaries=False)) == [
        section(a + b + c + d),
        approve,
    ]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, -1)])
def test_invalid_options_are_rejected(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        MarkdownChunker(size=size, overlap=overlap)


# --- properties on random Markdown-ish documents -------------------------------------------

_LINE = st.text(alphabet="あい漢字AB12 -。！？、", min_size=1, max_size=30)
_PARAGRAPH = st.lists(_LINE, min_size=1, max_size=4).map(lambda lines: ("p", "\n".join(lines)))
_HEADING = st.tuples(st.integers(1, 4), st.text(alphabet="見出AB1", min_size=1, max_size=8)).map(
    lambda h: ("h", "#" * h[0] + " " + h[1])
)
_TABLE = st.lists(st.text(alphabet="値1A ", min_size=1, max_size=8), min_size=1, max_size=6).map(
    lambda cells: ("t", "| 項目 | 値 |\n|---|---|\n" + "\n".join(f"| {c} | x |" for c in cells))
)
_CODE = st.lists(st.text(alphabet="#x= 1", max_size=10), max_size=6).map(
    lambda lines: ("c", "```\n" + "\n".join(lines) + "\n```")
)
_ELEMENT = st.one_of(_PARAGRAPH, _HEADING, _TABLE, _CODE)
_PARTS = st.lists(st.lists(_ELEMENT, max_size=6), min_size=1, max_size=3)


def _is_subsequence(needle: str, haystack: str) -> bool:
    remaining: Iterator[str] = iter(haystack)
    return all(char in remaining for char in needle)


@settings(deadline=None)
@given(parts=_PARTS, size=st.integers(8, 80))
def test_random_markdown_properties(parts: list[list[tuple[str, str]]], size: int) -> None:
    texts = ["\n\n".join(text for _, text in elements) for elements in parts]
    chunks = chunk(texts, size=size)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for c in ordinary(chunks):
        page = texts[int(c.locator["page"]) - 1]
        assert len(c.text) <= size
        assert page[c.start : c.end] in c.text
        if not c.text.startswith(("| 項目 | 値 |", "```")):
            assert page[c.start : c.end] == c.text
    produced = "".join(c.text for c in ordinary(chunks))
    expected = "".join(text for elements in parts for kind, text in elements if kind != "h")
    visible = "".join(char for char in expected if not char.isspace())
    assert _is_subsequence(visible, "".join(char for char in produced if not char.isspace()))


_STRUCTURE_LINE = st.text(
    st.sampled_from([" ", "\t", "\u3000", "#", "|", "`", "~", "-", "\\", "a", "見"]), min_size=1
).filter(str.strip)


@given(_STRUCTURE_LINE)
def test_the_chunker_reads_structure_exactly_where_escaping_guards_it(line: str) -> None:
    """The chunker and the loaders' escaping share one grammar: a line the chunker reads as a
    heading, fence or table is what escaping changes, and an escaped line is a paragraph."""
    kinds = [block.kind for block in parse_blocks(line)]
    assert (kinds != ["paragraph"]) is starts_structure(line)
    assert [block.kind for block in parse_blocks(escape_line(line))] == ["paragraph"]

"""The answer stage's question: its terms respelled as the passages write them, by the
tokenizer's synonym dictionary (the real SudachiDict core) and the words documents write for
an attribute."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from shirabe.answering import features, stage
from shirabe.embedders.protocol import Matrix, Vector
from shirabe.records import Chunk, Hit
from shirabe.retrieval.query import Query
from shirabe.tokenizers.sudachi import SudachiTokenizer


class NoVectors:
    """The spellings never embed anything."""

    name = "none"
    dim = 1

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        raise AssertionError("embedded")

    def embed_query(self, text: str) -> Vector:
        raise AssertionError("embedded")


@pytest.fixture(scope="module")
def tokenizer() -> SudachiTokenizer:
    return SudachiTokenizer(mode="C", bigrams=False)


def _spellings(tokenizer: SudachiTokenizer, asked: str, *texts: str) -> dict[str, tuple[str, ...]]:
    query = Query(asked, tokenizer=tokenizer, embedder=NoVectors())
    q = features.question(query.text, query.words())
    hits = [
        Hit(Chunk(text=t, source=f"docs/{i}.md", heading_path=("手続き",)), 1.0)
        for i, t in enumerate(texts)
    ]
    return stage.spellings(query, q, hits)


def test_a_question_word_is_found_as_the_passage_writes_it(tokenizer: SudachiTokenizer) -> None:
    got = _spellings(
        tokenizer,
        "実印として登録できるはんこの大きさは？",
        "登録できる印鑑は、一辺の長さが8mmから25mmの正方形に収まるものです。",
        "サイズの合わないものは登録できません。",
    )
    assert got == {"はんこ": ("印鑑",), "大きさ": ("サイズ",)}


def test_an_abbreviation_is_found_in_its_full_form(tokenizer: SudachiTokenizer) -> None:
    got = _spellings(tokenizer, "国保の保険料は年に何回払いますか", "国民健康保険の納期は年10回")
    assert got["国保"] == ("国民健康保険",)


def test_an_attribute_is_found_as_a_spec_table_writes_it(tokenizer: SudachiTokenizer) -> None:
    # no synonym group holds 重さ and 質量; the words documents write for an attribute do
    got = _spellings(
        tokenizer, "AQ-300の重さは何kgですか？", "| 質量 | 約9.2kg |", "| 幅 | 390mm |"
    )
    assert got == {"重さ": ("質量",)}


def test_words_of_another_meaning_are_not_spellings(tokenizer: SudachiTokenizer) -> None:
    # 年休 (annual paid leave) shares no group with 年末年始 (the new-year holidays)
    assert _spellings(tokenizer, "年休は何日ありますか", "年末年始の休業は6日間です。") == {}
    assert _spellings(tokenizer, "はんこの大きさは？") == {}


def test_the_tokenizer_gives_every_word_of_a_group(tokenizer: SudachiTokenizer) -> None:
    groups = dict(tokenizer.synonym_groups("はんこ"))["はんこ"]
    assert {"印鑑", "判子", "ハンコ"} <= set(tokenizer.synonyms(groups))
    assert tokenizer.synonyms([]) == []

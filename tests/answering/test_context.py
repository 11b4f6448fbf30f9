"""What a candidate sentence says beyond the question (Sudachi, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.answering.context import restates
from shirabe.retrieval.query import Query
from shirabe.tokenizers.sudachi import SudachiTokenizer


class NoVectors:
    name = "none"
    dim = 1

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("no vector is needed")


@pytest.fixture(scope="module")
def tokenizer() -> SudachiTokenizer:
    return SudachiTokenizer()


@pytest.mark.parametrize(
    ("question", "sentence", "again"),
    [
        (
            "INC-2024-0002でフロアスイッチの電源ユニットが故障したのはなぜですか？",
            "原因：フロアスイッチの電源ユニットの故障。",
            True,
        ),
        (
            "INC-2024-0002で会議システムがつながらなかったのはなぜですか？",
            "原因：フロアスイッチの電源ユニットの故障。",
            False,
        ),
        (
            "証明書の期限切れに誰も気づかなかったのはなぜですか？",
            "更新担当者の異動時に引き継ぎが漏れたため。",
            False,
        ),
        ("なぜ故障したのですか？", "故障のため。", True),
    ],
)
def test_a_reason_that_only_says_the_question_again(
    tokenizer: SudachiTokenizer, question: str, sentence: str, again: bool
) -> None:
    query = Query(question, tokenizer=tokenizer, embedder=NoVectors())  # type: ignore[arg-type]
    assert restates(query, sentence) is again

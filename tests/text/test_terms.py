"""Query term weights: which terms are codes, and hand-computed weights for token lists."""

from __future__ import annotations

import pytest

from shirabe.text.terms import as_weights, is_code, query_weights, searchable

# Terms as the tokenizer emits them: lower-case, normalised, n-grams prefixed with "~".
IS_CODE: list[tuple[str, bool]] = [
    # letters and digits together
    ("err-107", True),
    ("aq-300", True),
    ("mc-1200", True),
    ("inc-2024-0004", True),
    ("v2", True),
    ("v2.3", True),
    ("v2.3.1", True),
    ("170ml", True),
    ("1.5ml", True),
    ("9.2kg", True),
    ("5g", True),
    ("a4", True),
    ("iso9001", True),
    ("x86_64", True),
    # alphanumeric parts joined by separators, letters or digits only
    ("wi-fi", True),
    ("a+b", True),
    ("example.com/docs", True),
    ("0120-123-456", True),
    ("2024-04-01", True),
    ("2024/04/01", True),
    ("10:30", True),
    # plain numbers and words
    ("2024", False),
    ("1200", False),
    ("api", False),
    ("err", False),
    ("https", False),
    ("有給休暇", False),
    # not one whole code
    ("err-", False),
    ("-107", False),
    ("err--107", False),
    ("err 107", False),
    ("c++", False),
    ("東京-1", False),
    ("", False),
    # not a term the tokenizer emits: upper case and full width are normalised first
    ("ERR-107", False),
    ("ｅｒｒ-107", False),
    ("ｖ２", False),
    # n-grams are never codes
    ("~東京", False),
    ("~a1", False),
]


@pytest.mark.parametrize(("term", "expected"), IS_CODE)
def test_is_code(term: str, expected: bool) -> None:
    assert is_code(term) is expected


@pytest.mark.xfail(strict=True, reason="known gap: a decimal counts as a code (2024 does not)")
@pytest.mark.parametrize("term", ["1.5", "3.14"])
def test_a_decimal_number_is_not_a_code(term: str) -> None:
    assert not is_code(term)


@pytest.mark.parametrize(
    ("tokens", "options", "expected"),
    [
        ([], {}, {}),
        (["有給休暇", "申請"], {}, {"有給休暇": 1.0, "申請": 1.0}),
        # by default a code counts three times, per occurrence
        (["err-107", "出る", "err-107"], {}, {"err-107": 6.0, "出る": 1.0}),
        (
            ["aq-300", "容量", "1200ml", "1200", "ml"],
            {},
            {"aq-300": 3.0, "容量": 1.0, "1200ml": 3.0, "1200": 1.0, "ml": 1.0},
        ),
        # n-grams count once per occurrence by default, less when asked
        (
            ["有給休暇", "~有給", "~給休", "~休暇", "~有給"],
            {},
            {"有給休暇": 1.0, "~有給": 2.0, "~給休": 1.0, "~休暇": 1.0},
        ),
        (
            ["有給休暇", "~有給", "~給休", "~休暇", "~有給"],
            {"ngram_weight": 0.25},
            {"有給休暇": 1.0, "~有給": 0.5, "~給休": 0.25, "~休暇": 0.25},
        ),
        # the n-gram prefix wins over a code-like body
        (["~a1", "a1"], {"ngram_weight": 0.5}, {"~a1": 0.5, "a1": 3.0}),
        (
            ["v2.3.1", "v2.3.1", "更新", "~更新"],
            {"code_weight": 2.0, "ngram_weight": 0.5},
            {"v2.3.1": 4.0, "更新": 1.0, "~更新": 0.5},
        ),
        # weights of zero are kept: the term is still part of the query
        (
            ["err-107", "~出た"],
            {"code_weight": 0.0, "ngram_weight": 0.0},
            {"err-107": 0.0, "~出た": 0.0},
        ),
    ],
)
def test_query_weights(
    tokens: list[str], options: dict[str, float], expected: dict[str, float]
) -> None:
    assert query_weights(tokens, **options) == expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (["申請", "申請", "err-107"], {"申請": 2.0, "err-107": 1.0}),
        ({"申請": 2, "err-107": 0.5}, {"申請": 2.0, "err-107": 0.5}),
        ({"申請": 1.0, "休暇": 0.0, "~有給": -1.0}, {"申請": 1.0}),
        ([], {}),
        ({}, {}),
    ],
)
def test_as_weights(terms: list[str] | dict[str, float], expected: dict[str, float]) -> None:
    assert as_weights(terms) == expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ([], False),  # "", "？？？", "😀😀" tokenize to nothing
        (["or", "1", "1"], False),  # ' OR 1=1 --
        (["1"], False),
        (["20240401-001"], True),  # a contract number
        (["12345"], True),
        (["the"], False),
        (["~です", "~すか"], False),  # n-grams only
        (["何", "~何で"], True),
        (["vpn"], True),
        (["aq-300"], True),
        (["drop", "table", "users"], True),
    ],
)
def test_a_query_is_searchable_when_it_has_a_word(terms: list[str], expected: bool) -> None:
    assert searchable(terms) is expected

"""Garbage detection in extracted text: a golden table of real text and noise."""

from __future__ import annotations

import pytest

from shirabe.loaders.pdf.quality import glued_figures, looks_garbled, text_quality

GOOD_JA = "化粧品に配合される防腐剤は、別表第3に掲げる物でなければならない。"
GOOD_EN = "Dense passage retrieval outperforms BM25 on open-domain question answering."

QUALITY = [
    ("good Japanese", GOOD_JA, True),
    ("good English", GOOD_EN, True),
    ("good Korean", "적립 혜택은 매출전표 접수 시점 기준으로 적용", True),
    ("good Czech", "Peněžní prostředky na účtech", True),
    ("cid runs", "(cid:12)(cid:40)(cid:7) (cid:88)(cid:3)", False),
    ("cid in a good page", GOOD_JA * 3 + "(cid:1)", True),
    ("replacement chars", "\ufffd\ufffd\ufffdテスト\ufffd\ufffd", False),
    ("private use", "\ue000\ue001\ue002\ue003abc", False),
    ("control chars", "3HQČåQt\x03SURVWĜHGN\\\x03QD\x03~þWHFK", False),
    ("utf-8 read as latin-1", "ã\x81\x82ã\x81\x84ã\x81\x86ã\x81\x88", False),
    ("utf-8 read as cp1252", "æ—¥æœ¬èªžã®æ–‡æ›¸", False),
    ("glyph ids as code points", "ίϯύϥϒϧͳ৽ฉࣄه͔Βͷݻ༗දݱͷൃݟ", False),
    ("rare symbol run", "平成™—年›月™œ日" * 2 + "™—›œŸ˜" * 3, False),
    ("a few odd glyphs", GOOD_EN * 2 + " ™ § ¶", True),
    ("accented Latin-1 prose", "Café déjà vu à la carte, naïve façade.", True),
    ("empty", "   \n ", False),
]


@pytest.mark.parametrize(("name", "text", "usable"), QUALITY, ids=[q[0] for q in QUALITY])
def test_text_quality_golden_table(name: str, text: str, usable: bool) -> None:
    quality = text_quality(text)
    assert quality.usable is usable, (name, quality)


def test_text_quality_names_its_reasons() -> None:
    assert "cid" in text_quality("(cid:1)(cid:2)").reasons
    assert "mixed scripts" in text_quality("ίϯύϥϒϧͳ৽ฉࣄه͔Βͷݻ༗දݱ").reasons
    assert text_quality(GOOD_JA).reasons == ()


GLUED = [
    # (name, text, glued figures counted by hand, reads as garbled)
    ("columns read across", "カルバニリド ○ 0.30 0.30パラクロル 0.25 0.25ハロカルバン", 2, True),
    ("numbered items glued", "m－ジオキサン2 アミノエーテル型の剤3 エストラジオール", 2, True),
    ("rows in one cell", "| 成分 | 量 |\n|---|---|\n| アラントイン | 1.0g 1.0g 2.0g |", 2, True),
    ("katakana units", "重さは約9.2キロ、保証は12ヶ月、距離は3メートルです。", 0, False),
    ("article numbers", "第3 条の規定により、第12 項を適用する。", 0, False),
    ("times in a table", "| 窓口 | 受付時間 |\n|---|---|\n| 市民課 | 8:30〜17:15 |", 0, False),
    ("one glued figure in prose", "価格は3000円です。" * 10 + "型番2 モデル", 1, False),
    ("a date with spaces", "令和6年4 月1 日から平成30 年度まで", 0, False),
    ("an address and a telephone", "千代田区1ー2ー3 電話 03ー1234ー5678", 0, False),
    ("katakana counters", "3パターン 2タイプ、10カ条 3カ年計画、1リッター", 0, False),
    ("codes and names", "A4サイズ、第3セクター、COVID-19ワクチン、Windows10パソコン", 0, False),
    ("a reference to a table", "詳しくは表2 参照、図3 参照のこと。", 0, False),
]


@pytest.mark.parametrize(("name", "text", "glued", "garbled"), GLUED, ids=[g[0] for g in GLUED])
def test_glued_figures_golden_table(name: str, text: str, glued: int, garbled: bool) -> None:
    assert glued_figures(text) == glued, name
    assert looks_garbled(text) is garbled, name

"""HTML loader: encodings, main-content extraction, Markdown structure and heading paths."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.loaders.html import HtmlLoader
from shirabe.loaders.html.charset import declared_charset
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

from tests.support import SAMPLE_DOCS

SAMPLE_PAGE = SAMPLE_DOCS / "総務" / "社内ポータル_お知らせ.html"

NOISY_PAGE = """<!DOCTYPE html>
<html><head><title>経費精算のお知らせ｜ポータル</title>
<style>.x { color: red }</style>
<script>var banner = "スクリプトの文字列";</script></head>
<body>
<header><h1>社内ポータル</h1><p>ようこそ ゲスト さん</p></header>
<nav><ul><li>ホーム</li><li>規程集</li></ul></nav>
<aside><p>人気の記事：サイドバーの文字列</p></aside>
<form><label>検索</label><input value="フォームの文字列"></form>
<main>
<h1>経費精算の締め日変更</h1>
<p>10月から締め日が<strong>毎月10日</strong>に変わります。</p>
<div style="display: none">隠しテキスト</div>
<p hidden>hidden属性の文字列</p>
<span aria-hidden="true">アイコンの文字列</span>
<noscript>JavaScriptを有効にしてください</noscript>
</main>
<footer><p>Copyright 株式会社ミナモ電機 フッターの文字列</p></footer>
</body></html>
"""


def _load(tmp_path: Path, html: str | bytes, name: str = "page.html") -> Document:
    path = tmp_path / name
    path.write_bytes(html.encode("utf-8") if isinstance(html, str) else html)
    return HtmlLoader().load(path, LoadOptions())


# --- encodings -----------------------------------------------------------------------------


def test_shift_jis_page_with_meta_charset(tmp_path: Path) -> None:
    html = (
        '<html><head><meta charset="Shift_JIS"><title>障害のお知らせ</title></head>'
        "<body><h1>障害のお知らせ</h1><p>髙橋さんが①番の端末で復旧を確認しました。</p></body></html>"
    )
    document = _load(tmp_path, html.encode("cp932"))
    assert document.title == "障害のお知らせ"
    assert "髙橋さんが①番の端末で復旧を確認しました。" in document.parts[0].text
    assert document.warnings == []


def test_euc_jp_page_with_http_equiv(tmp_path: Path) -> None:
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'
        "</head><body><p>社内規程の改定について</p></body></html>"
    )
    assert declared_charset(html.encode("euc_jp")) == "euc_jp"
    document = _load(tmp_path, html.encode("euc_jp"))
    assert "社内規程の改定について" in document.parts[0].text


def test_binary_file_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "image.html"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    with pytest.raises(LoadError) as info:
        HtmlLoader().load(path, LoadOptions())
    assert "binary" in info.value.reason


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="file not found"):
        HtmlLoader().load(tmp_path / "missing.html", LoadOptions())
    folder = tmp_path / "folder.html"
    folder.mkdir()
    with pytest.raises(LoadError, match="directory"):
        HtmlLoader().load(folder, LoadOptions())


def test_missing_beautifulsoup_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bs4", None)
    with pytest.raises(LoadError) as info:
        _load(tmp_path, "<p>本文</p>")
    assert "pip install 'shirabe[html]'" in info.value.reason


# --- main content --------------------------------------------------------------------------


def test_chrome_scripts_forms_and_hidden_elements_are_dropped(tmp_path: Path) -> None:
    document = _load(tmp_path, NOISY_PAGE)
    text = document.parts[0].text
    assert text.startswith("# 経費精算の締め日変更\n")
    assert "10月から締め日が毎月10日に変わります。" in text
    for noise in (
        "スクリプトの文字列",
        "color",
        "社内ポータル",
        "ホーム",
        "サイドバーの文字列",
        "フォームの文字列",
        "フッターの文字列",
        "隠しテキスト",
        "hidden属性の文字列",
        "アイコンの文字列",
        "JavaScript",
    ):
        assert noise not in text, noise
    assert document.title == "経費精算のお知らせ｜ポータル"


def test_page_without_semantic_markup_drops_conventional_chrome(tmp_path: Path) -> None:
    html = (
        "<body><div id='header'><ul><li>ホーム</li><li>サイトマップ</li></ul></div>"
        "<div class='menu'><a href='#'>メニュー項目</a></div>"
        "<div id='contents'><h1>休暇の申請</h1><p>3営業日前までに申請する。</p></div>"
        "<div id='footer'>フッターの文字列</div></body>"
    )
    text = _load(tmp_path, html).parts[0].text
    assert text == "# 休暇の申請\n\n3営業日前までに申請する。\n"


def test_article_header_and_footer_are_content(tmp_path: Path) -> None:
    html = (
        "<body><header>サイトのロゴ</header><article><header><h1>記事の題名</h1></header>"
        "<p>本文。</p><footer>担当：総務部</footer></article></body>"
    )
    text = _load(tmp_path, html).parts[0].text
    assert "サイトのロゴ" not in text
    assert "# 記事の題名" in text
    assert "担当：総務部" in text


def test_content_left_in_an_unclosed_head_is_kept(tmp_path: Path) -> None:
    document = _load(tmp_path, "<html><head><title>題名</title><p>閉じていないheadの本文")
    assert document.parts[0].text == "閉じていないheadの本文\n"
    assert document.title == "題名"


def test_page_saved_from_word(tmp_path: Path) -> None:
    html = (
        '<html xmlns:o="urn:schemas-microsoft-com:office:office">'
        '<head><meta http-equiv=Content-Type content="text/html; charset=shift_jis">'
        "<!--[if gte mso 9]><xml><o:DocumentProperties><o:Author>作成者</o:Author>"
        "</o:DocumentProperties></xml><![endif]--></head>"
        "<body lang=JA><div class=WordSection1><h1>出張旅費規程</h1>"
        "<p class=MsoNormal>第1条　この規程は出張旅費を定める。<o:p></o:p></p>"
        "<p class=MsoListParagraph><![if !supportLists]>・<![endif]>日当は1,000円</p>"
        "</div></body></html>"
    )
    text = _load(tmp_path, html.encode("cp932")).parts[0].text
    assert text == "# 出張旅費規程\n\n第1条　この規程は出張旅費を定める。\n\n・日当は1,000円\n"


def test_title_falls_back_to_first_h1(tmp_path: Path) -> None:
    document = _load(tmp_path, "<h2>小見出し</h2><h1>ページの題名</h1><p>本文</p>")
    assert document.title == "ページの題名"


def test_empty_page_warns(tmp_path: Path) -> None:
    document = _load(tmp_path, "<html><head><script>x()</script></head><body></body></html>")
    assert document.parts[0].text == ""
    assert document.warnings == ["no text content"]


def test_deeply_nested_page_does_not_crash(tmp_path: Path) -> None:
    depth = 5000
    html = "<div>" * depth + "<p>深い本文</p>" + "</div>" * depth
    document = _load(tmp_path, html)
    assert "深い本文" in document.parts[0].text


# --- Markdown structure --------------------------------------------------------------------


def test_lists_breaks_and_preformatted_text(tmp_path: Path) -> None:
    html = (
        "<p>一行目<br>二行目</p>"
        "<ul><li>りんご<li>みかん<ul><li>温州みかん</li></ul><li>ぶどう</ul>"
        "<ol start='3'><li>三番目</li><li>四番目</li></ol>"
        "<pre>def f():\n    return 1</pre>"
    )
    text = _load(tmp_path, html).parts[0].text
    assert "一行目\n二行目" in text
    assert "- りんご\n- みかん\n  - 温州みかん\n- ぶどう" in text
    assert "3. 三番目\n4. 四番目" in text
    assert "```\ndef f():\n    return 1\n```" in text


def test_tables_become_pipe_tables_with_spans_expanded(tmp_path: Path) -> None:
    html = (
        "<table><caption>宿泊費の上限</caption>"
        "<tr><th>職位<th>上限</tr>"
        "<tr><td>部長<td rowspan=2>14,000円</tr>"
        "<tr><td>課長</tr>"
        "<tr><td colspan=2>東京23区は2,000円加算</td></tr></table>"
    )
    text = _load(tmp_path, html).parts[0].text
    assert text == (
        "宿泊費の上限\n\n"
        "| 職位 | 上限 |\n|---|---|\n"
        "| 部長 | 14,000円 |\n| 課長 | 14,000円 |\n"
        "| 東京23区は2,000円加算 | 東京23区は2,000円加算 |\n"
    )


def test_layout_tables_are_read_as_blocks(tmp_path: Path) -> None:
    html = (
        "<table><tr><td><h1>規程集</h1><p>本文の段落。</p></td>"
        "<td><table><tr><th>項目</th><th>値</th></tr><tr><td>A</td><td>1</td></tr></table>"
        "</td></tr></table>"
    )
    text = _load(tmp_path, html).parts[0].text
    assert "# 規程集\n\n本文の段落。" in text
    assert "| 項目 | 値 |\n|---|---|\n| A | 1 |" in text


def test_definition_lists(tmp_path: Path) -> None:
    html = "<dl><dt>日時<dd>9月1日<dt>持ち物<dd>社員証<dd>ヘルメット</dl>"
    text = _load(tmp_path, html).parts[0].text
    assert text == "日時: 9月1日\n持ち物: 社員証 / ヘルメット\n"


def test_text_that_looks_like_markdown_is_escaped(tmp_path: Path) -> None:
    text = _load(tmp_path, "<p># 番号</p><p>| 縦棒で始まる行</p><p>```</p>").parts[0].text
    assert text == "\\# 番号\n\n\\| 縦棒で始まる行\n\n\\```\n"


# --- heading paths through the chunker -----------------------------------------------------


def test_headings_become_chunk_heading_paths(tmp_path: Path) -> None:
    html = (
        "<title>規程</title><nav><h2>ナビの見出し</h2></nav><main>"
        "<h1>休暇規程</h1><p>前文。</p>"
        "<h2>第1章 総則</h2><h3>目的</h3><p>休暇の事項を定める。</p>"
        "<h2>第2章 年次有給休暇</h2><h3>付与日数</h3>"
        "<table><tr><th>勤続</th><th>日数</th></tr><tr><td>6か月</td><td>10日</td></tr></table>"
        "</main>"
    )
    document = _load(tmp_path, html)
    chunks = [c for c in MarkdownChunker().chunk(document) if not c.is_summary]
    paths = {c.heading_path for c in chunks}
    assert ("休暇規程", "第1章 総則", "目的") in paths
    assert ("休暇規程", "第2章 年次有給休暇", "付与日数") in paths
    [table_chunk] = [c for c in chunks if "10日" in c.text]
    assert table_chunk.heading_path == ("休暇規程", "第2章 年次有給休暇", "付与日数")
    assert all("ナビの見出し" not in c.heading for c in chunks)
    assert all(c.locator == {} for c in chunks)


# --- the sample corpus page and the factory ------------------------------------------------


def test_sample_portal_page() -> None:
    document = HtmlLoader().load(SAMPLE_PAGE, LoadOptions())
    [part] = document.parts
    assert part.locator == {}
    assert document.title is not None
    assert "社内ポータル" in document.title
    text = part.text
    assert "| 8月14日（木） | 架空 次郎（総務部） | 9:00～17:00 |" in text
    assert "避難場所: みなと第二公園（本社ビル北側）" in text
    for noise in ("portalConfig", "ポータル内を検索", "規程集", "よく見られているページ", "©"):
        assert noise not in text, noise
    chunks = MarkdownChunker().chunk(document)
    flow = [c for c in chunks if "避難誘導係" in c.text and not c.is_summary]
    assert flow
    assert flow[0].heading_path[-2:] == ("本社ビル 防災訓練の実施について", "当日の流れ")


def test_factory_finds_the_html_loader() -> None:
    for name in ("a.html", "b.HTM"):
        assert isinstance(loader_for(Path(name)), HtmlLoader)

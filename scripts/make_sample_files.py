"""Write the generated files of the fictional sample corpus in sample_docs/.

株式会社ミナモ電機 is invented, and so is everyone in these files. The Markdown and text files of
the corpus are written by hand; this script writes the formats that need a library (CSV as Excel
saves it, xlsx, pptx, docx, pdf). Output is deterministic: fixed dates and document properties,
fixed zip timestamps and no randomness, so running it again gives byte-identical files.

Run from the project root: ``.venv/bin/python scripts/make_sample_files.py``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

logger = logging.getLogger("make_sample_files")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = ROOT / "sample_docs"
COMPANY = "株式会社ミナモ電機"
FIXED_TIME = dt.datetime(2025, 4, 1, 9, 0, 0)
ZIP_TIME = (2025, 4, 1, 9, 0, 0)
_CORE = "docProps/core.xml"
_MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")

# --- 情報システム/障害一覧.csv -------------------------------------------------------------

INCIDENT_HEADER = ("管理番号", "発生日", "重大度", "システム", "概要", "影響", "対応状況", "担当")
INCIDENTS: tuple[tuple[str, ...], ...] = (
    # The 2024 rows agree with 情報システム/障害記録.md; the 2025 rows are only in this list.
    (
        "INC-2024-0001",
        "2024/1/15",
        "S1",
        "ミナモ勤怠",
        "OS定期更新後にデータベースサービスが自動起動せず、ログインできない",
        "全社（出勤打刻不可）",
        "完了",
        "例田 次郎",
    ),
    (
        "INC-2024-0002",
        "2024/2/7",
        "S2",
        "本社ネットワーク",
        "本社5階フロアスイッチの電源ユニット故障",
        "本社5階 経理部・人事部の有線LAN",
        "完了",
        "仮野 一郎",
    ),
    (
        "INC-2024-0003",
        "2024/3/27",
        "S1",
        "ミナモVPN",
        "同時接続数が上限の300に達し接続できない",
        "在宅勤務者 約150名",
        "完了",
        "仮野 一郎",
    ),
    (
        "INC-2024-0004",
        "2024/4/22",
        "S1",
        "社内メールサーバー",
        "サーバー証明書の期限切れでメール送受信が停止",
        "全社（社外メールを含む）",
        "完了",
        "例田 次郎",
    ),
    (
        "INC-2024-0005",
        "2024/6/18",
        "S2",
        "共有ファイルサーバー",
        "ディスク使用率100%で新規保存・上書き保存ができない",
        "共有ファイルサーバーの全利用者",
        "完了",
        "模擬 真一",
    ),
    (
        "INC-2024-0006",
        "2024/9/3",
        "S1",
        "ミナモリンク",
        "クラウドの負荷分散装置の設定誤りでアプリから操作できない（ERR-107）",
        "お客様のAQ-300 約4,800台",
        "完了",
        "試作 三郎",
    ),
    (
        "INC-2024-0007",
        "2024/10/10",
        "S2",
        "ミナモ精算",
        "精算期限日のアクセス集中でメモリ不足、画面表示が遅延",
        "ミナモ精算の全利用者",
        "完了",
        "模擬 真一",
    ),
    (
        "INC-2024-0008",
        "2024/11/20",
        "S2",
        "出荷検査装置",
        "OS自動更新で校正データが旧版に戻りERR-104を誤検出",
        "富山工場 AQ-300出荷検査工程",
        "完了",
        "試作 三郎",
    ),
    (
        "INC-2025-0001",
        "2025/1/14",
        "S3",
        "ミナモ予約",
        "会議室入口タブレットのチェックインが反映されず、予約が自動取消された",
        "本社7階の会議室 予約12件",
        "完了",
        "仮野 一郎",
    ),
    (
        "INC-2025-0002",
        "2025/2/4",
        "S2",
        "社内ポータル",
        "CMS更新後に「申請・届出」メニューが表示されない",
        "全社（約2時間、申請・届出の提出不可）",
        "完了",
        "例田 次郎",
    ),
    (
        "INC-2025-0003",
        "2025/2/26",
        "S3",
        "ミナモ精算",
        "適格請求書の登録番号チェックがタイムアウトし、申請が保存できない",
        "申請の一部（約40件）、再申請で回避可",
        "完了",
        "模擬 真一",
    ),
    (
        "INC-2025-0004",
        "2025/3/11",
        "S3",
        "共有ファイルサーバー",
        "設計部フォルダの使用率が85%を超え容量警告",
        "設計部（保存は可能）",
        "完了",
        "模擬 真一",
    ),
    (
        "INC-2025-0005",
        "2025/3/24",
        "S1",
        "ミナモVPN",
        "認証サーバーの時刻ずれでワンタイムコードが認証されない",
        "在宅勤務者 約210名",
        "対応中（時刻同期の監視を追加予定）",
        "仮野 一郎",
    ),
)


def write_incident_csv(path: Path) -> None:
    """UTF-8 with BOM and CRLF line ends, quoted only where needed: what Excel writes."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(INCIDENT_HEADER)
    writer.writerows(INCIDENTS)
    path.write_bytes(buffer.getvalue().encode("utf-8-sig"))


# --- 情報システム/利用者台帳.xlsx ----------------------------------------------------------

USER_TITLE = "社内システム利用者台帳（2025年4月1日現在）"
USER_NOTE = "※ 情報システム部 インフラグループ管理。退職者は除く。VPNの利用には所属長の承認が必要。"
USER_HEADER = (
    "社員番号",
    "氏名",
    "部署",
    "役職",
    "アカウント種別",
    "利用開始日",
    "VPN",
    "備考",
)
NEW_HIRE = "2025年度新入社員"
USERS: tuple[tuple[str, str, str, str, str, dt.date, str, str], ...] = (
    ("M10021", "見本 太郎", "総務部", "部長", "一般", dt.date(2008, 4, 1), "可", ""),
    ("M10045", "見本 花子", "総務部", "主任", "一般", dt.date(2012, 4, 1), "可", "夏季休業当番"),
    ("M10112", "架空 次郎", "総務部", "一般", "一般", dt.date(2019, 4, 1), "不可", ""),
    ("M10133", "雛形 美咲", "人事部", "部長", "一般", dt.date(2010, 4, 1), "可", ""),
    ("M10158", "雛形 健太", "人事部", "一般", "一般", dt.date(2021, 10, 1), "可", ""),
    ("M10201", "手本 一郎", "経理部", "部長", "一般", dt.date(2009, 4, 1), "可", ""),
    ("M10227", "手本 陽菜", "経理部", "一般", "一般", dt.date(2023, 4, 1), "不可", ""),
    ("M10300", "試験 良子", "情報システム部", "部長", "管理者", dt.date(2007, 4, 1), "可", ""),
    ("M10311", "例田 次郎", "情報システム部", "課長", "管理者", dt.date(2011, 4, 1), "可", ""),
    ("M10324", "仮野 一郎", "情報システム部", "主任", "管理者", dt.date(2015, 4, 1), "可", ""),
    ("M10339", "模擬 真一", "情報システム部", "一般", "管理者", dt.date(2020, 4, 1), "可", ""),
    (
        "M10342",
        "試作 三郎",
        "情報システム部",
        "一般",
        "管理者",
        dt.date(2018, 7, 1),
        "可",
        "ミナモリンク担当を兼務",
    ),
    ("M10405", "下書 翔", "品質保証部", "課長", "一般", dt.date(2014, 4, 1), "可", ""),
    ("M10418", "下書 舞", "品質保証部", "一般", "一般", dt.date(2022, 4, 1), "不可", ""),
    ("M10502", "仮名 大輔", "設計部", "課長", "一般", dt.date(2013, 4, 1), "可", "CAD端末"),
    ("M10611", "名無 権兵衛", "お客様相談室", "室長", "一般", dt.date(2006, 4, 1), "不可", ""),
    ("M10725", "見本 七海", "富山工場 製造課", "主任", "一般", dt.date(2016, 4, 1), "不可", ""),
    (
        "M10950",
        "新人 一花",
        "営業部",
        "一般",
        "一般",
        dt.date(2025, 4, 1),
        "不可",
        "2025年度新入社員",
    ),
    (
        "M10951",
        "新人 二葉",
        "経理部",
        "一般",
        "一般",
        dt.date(2025, 4, 1),
        "不可",
        "2025年度新入社員",
    ),
    (
        "G90012",
        "外部 委託",
        "情報システム部",
        "委託",
        "閲覧のみ",
        dt.date(2024, 10, 1),
        "可",
        "ヘルプデスク委託。利用期限2025年9月30日",
    ),
)
PERMISSION_HEADER = ("システム", "一般", "管理者", "閲覧のみ", "利用申請の承認者")
PERMISSIONS: tuple[tuple[str, ...], ...] = (
    ("ミナモ勤怠", "打刻・休暇申請", "全社員の勤怠データの修正", "自分の勤怠の閲覧", "人事部長"),
    ("ミナモ精算", "経費の申請", "支払処理・勘定科目マスタの設定", "利用不可", "経理部長"),
    ("ミナモVPN", "社外からの接続", "接続ログの閲覧・接続枠の設定", "社外からの接続", "所属長"),
    ("ミナモ予約", "会議室の予約", "全会議室の予約取消", "空き状況の閲覧", "総務部長"),
    (
        "共有ファイルサーバー",
        "部署フォルダの読み書き",
        "全フォルダの読み書き・容量設定",
        "部署フォルダの閲覧",
        "情報システム部長",
    ),
    ("ミナモ文庫", "文書の登録・閲覧", "保存期間の設定・廃棄の承認", "文書の閲覧", "総務部長"),
)


def write_user_ledger(path: Path) -> None:
    """A title row merged across the table, a note row, then the header and one row a person."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    book = Workbook()
    sheet = book.active
    sheet.title = "利用者一覧"
    last_column = len(USER_HEADER)
    sheet.cell(row=1, column=1, value=USER_TITLE).font = Font(bold=True, size=14)
    sheet.merge_cells(start_row=1, start_column=1, end_row=1, end_column=last_column)
    sheet.cell(row=1, column=1).alignment = Alignment(horizontal="center")
    sheet.cell(row=2, column=1, value=USER_NOTE)
    for column, name in enumerate(USER_HEADER, start=1):
        sheet.cell(row=3, column=column, value=name).font = Font(bold=True)
    for row, user in enumerate(USERS, start=4):
        for column, value in enumerate(user, start=1):
            cell = sheet.cell(row=row, column=column, value=value if value != "" else None)
            if isinstance(value, dt.date):
                cell.number_format = "yyyy/m/d"
    for letter, width in zip("ABCDEFGH", (10, 14, 18, 8, 14, 12, 6, 36), strict=True):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "A4"

    rights = book.create_sheet("権限一覧")
    rights.append(PERMISSION_HEADER)
    for permission in PERMISSIONS:
        rights.append(permission)
    for letter, width in zip("ABCDE", (20, 24, 30, 20, 18), strict=True):
        rights.column_dimensions[letter].width = width

    book.properties.creator = "情報システム部"
    book.properties.lastModifiedBy = "情報システム部"
    book.properties.title = USER_TITLE
    book.properties.created = FIXED_TIME
    book.properties.modified = FIXED_TIME
    book.save(path)


# --- 製品/AQ-300_製品紹介.pptx -------------------------------------------------------------

SLIDES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "ミナモ AQ-300 製品紹介",
        ("販売店様向け説明資料", "2024年1月 株式会社ミナモ電機 営業部"),
        "社外向け資料。ノートは説明者用のメモで、販売店様には配布しない。",
    ),
    (
        "製品コンセプト",
        (
            "加湿と空気清浄を1台で：リビングの主役になる加湿空気清浄機",
            "空気清浄の適用床面積は〜31畳、最大加湿量は700mL/h",
            "アプリ「ミナモリンク」で外出先から運転・湿度を確認",
            "静音運転は19dB、寝室でも使える「おやすみ」モード",
        ),
        "開発コードネームは「しずく」。企画段階から子育て世帯をメインターゲットに設定した。",
    ),
    (
        "主な特長",
        (
            "ホコリ・ニオイセンサーが汚れを検知して風量を自動調整",
            "クリーンサインで空気の汚れを3色表示（青・橙・赤）",
            "給水タンクは約3.6L、右側面から引き出して給水",
            "専用除菌液「ミナモクリア」に対応",
        ),
        "初年度（2024年度）の販売目標は年間12,000台。うち3割をミナモリンク対応の"
        "アプリ経由の登録で確認する計画。",
    ),
    ("従来機種との比較", (), ""),
    (
        "販売スケジュール",
        (
            "2024年2月1日：予約受付開始",
            "2024年2月15日：店頭デモ機の配送開始",
            "2024年3月1日：発売",
            "2024年4月以降：販売店様向け操作説明会を順次開催",
        ),
        "デモ機の貸出は1店舗につき2台まで。申込先は営業部 営業推進課（内線2620）。",
    ),
    (
        "お問い合わせ",
        (
            "製品の仕様・在庫：営業部 営業推進課（内線2620）",
            "お客様からの使い方・故障のご相談：お客様相談室（9:00〜18:00）",
            "販売店様向けの最新資料は販売店ポータルに掲載",
        ),
        "AQ-250の在庫は2024年2月末で出荷終了。以降の問い合わせはAQ-300への案内を基本とする。",
    ),
)
COMPARISON: tuple[tuple[str, str, str], ...] = (
    ("項目", "AQ-300（新製品）", "AQ-250（従来機種）"),
    ("発売", "2024年3月1日", "2021年9月"),
    ("空気清浄の適用床面積", "〜31畳", "〜25畳"),
    ("最大加湿量", "700mL/h", "500mL/h"),
    ("給水タンク容量", "約3.6L", "約2.8L"),
    ("運転音", "19〜52dB", "22〜55dB"),
    ("スマートフォン操作", "ミナモリンク対応", "非対応"),
    ("メーカー希望小売価格（税込）", "54,780円", "43,780円"),
)
COMPARISON_NOTES = (
    "比較表の数値は各機種の製品仕様書による。AQ-250からの買い替えでは"
    "「タンクが大きくなり給水の回数が減る」点を最初に説明する。"
)


def write_product_deck(path: Path) -> None:
    """Six slides: a title slide, bullet slides, one comparison table, notes on most."""
    from pptx import Presentation
    from pptx.util import Emu, Pt

    deck = Presentation()
    title_layout = deck.slide_layouts[0]
    bullet_layout = deck.slide_layouts[1]
    title_only_layout = deck.slide_layouts[5]
    for index, (title, lines, slide_notes) in enumerate(SLIDES):
        notes = slide_notes
        if index == 0:
            slide = deck.slides.add_slide(title_layout)
            slide.shapes.title.text = title
            slide.placeholders[1].text = "\n".join(lines)
        elif title == "従来機種との比較":
            slide = deck.slides.add_slide(title_only_layout)
            slide.shapes.title.text = title
            rows, columns = len(COMPARISON), len(COMPARISON[0])
            left, top = Emu(457200), Emu(1600200)
            width, height = Emu(8229600), Emu(370840 * rows)
            table = slide.shapes.add_table(rows, columns, left, top, width, height).table
            for r, row in enumerate(COMPARISON):
                for c, value in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = value
                    for paragraph in cell.text_frame.paragraphs:
                        for run in paragraph.runs:
                            run.font.size = Pt(14)
            notes = COMPARISON_NOTES
        else:
            slide = deck.slides.add_slide(bullet_layout)
            slide.shapes.title.text = title
            body = slide.placeholders[1].text_frame
            body.text = lines[0]
            for line in lines[1:]:
                body.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    properties = deck.core_properties
    properties.title = "ミナモ AQ-300 製品紹介"
    properties.author = "営業部"
    properties.last_modified_by = "営業部"
    properties.revision = 1
    properties.created = FIXED_TIME
    properties.modified = FIXED_TIME
    properties.last_printed = FIXED_TIME
    deck.save(str(path))


# --- 総務/文書管理規程.docx ----------------------------------------------------------------

RULES_TITLE = "文書管理規程"
RULES_META = (
    "制定：2016年4月1日",
    "最終改定：2024年10月1日",
    "所管：総務部",
)
RULES_HEADER = f"{COMPANY} 社内規程"
RULES_FOOTER = "社外秘 無断複製禁止"
# (chapter, [(article heading, [paragraphs]) ...]); a paragraph starting with "・" is a bullet.
RULES: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    (
        "第1章 総則",
        (
            (
                "第1条（目的）",
                (
                    "この規程は、会社の業務で作成し、または受け取った文書の作成、保存および廃棄に"
                    "ついて定め、文書を適切に管理することを目的とする。",
                ),
            ),
            (
                "第2条（定義）",
                (
                    "この規程において「文書」とは、紙の書類のほか、電子メール、電子ファイル、"
                    "図面その他の記録媒体に記録された情報をいう。",
                ),
            ),
            (
                "第3条（文書管理責任者）",
                (
                    "各部の部長を文書管理責任者とする。文書管理責任者は、部内の文書の保存状況を"
                    "毎年3月に点検し、結果を総務部へ報告する。",
                ),
            ),
        ),
    ),
    (
        "第2章 文書の作成と保存",
        (
            (
                "第4条（機密区分）",
                (
                    "文書には、作成時に次のいずれかの機密区分を表示する。",
                    "・極秘：役員および指名された者のみが閲覧できる",
                    "・社外秘：社員のみが閲覧できる",
                    "・部外秘：所管部署の社員のみが閲覧できる",
                    "・公開：社外に公開してよい",
                    "区分の表示がない文書は、社外秘として取り扱う。",
                ),
            ),
            (
                "第5条（保存場所）",
                (
                    "電子文書は、文書管理システム「ミナモ文庫」に登録して保存する。個人のPCや"
                    "私物の記録媒体に保存してはならない。",
                    "紙の文書は、各部の鍵付き書庫に保存し、保存期間が3年を超えるものは年度末に"
                    "本社地下1階の文書保管庫へ移す。",
                ),
            ),
            (
                "第6条（保存期間）",
                (
                    "文書の保存期間は、次の保存期間表のとおりとする。保存期間は、文書の作成日"
                    "または受領日の属する年度の翌年度4月1日から起算する。",
                ),
            ),
        ),
    ),
    (
        "第3章 廃棄",
        (
            (
                "第7条（廃棄の手続）",
                (
                    "保存期間を満了した文書は、文書管理責任者の承認を得て廃棄する。",
                    "極秘および社外秘の紙の文書は、総務部が契約する専門業者による溶解処理とする。"
                    "廃棄後、業者が発行する溶解証明書を総務部が5年間保管する。",
                    "電子文書は「ミナモ文庫」上で廃棄し、廃棄の記録を残す。",
                ),
            ),
            (
                "第8条（保存期間の延長）",
                (
                    "訴訟、監査その他の理由で必要な文書は、文書管理責任者の判断で保存期間を"
                    "延長できる。延長する場合は、延長の理由と期限を「ミナモ文庫」に記録する。",
                ),
            ),
        ),
    ),
    (
        "第4章 雑則",
        (
            (
                "第9条（問い合わせ）",
                ("この規程に関する問い合わせは、総務部（内線2110）まで。",),
            ),
        ),
    ),
)
RETENTION: tuple[tuple[str, str, str], ...] = (
    ("文書の種類", "保存期間", "所管部署"),
    ("株主総会議事録・取締役会議事録", "永久", "総務部"),
    ("契約書", "契約終了後10年", "各部"),
    ("経費精算の証憑（領収書の画像を含む）", "7年", "経理部"),
    ("労働者名簿・賃金台帳", "退職後5年", "人事部"),
    ("障害記録", "5年", "情報システム部"),
    ("製品の検査記録", "出荷後10年", "品質保証部"),
    ("社内通知・お知らせ", "1年", "各部"),
)


def write_rule_book(path: Path) -> None:
    """Title and Heading 1/2 styles, bulleted list, the retention table, header and footer."""
    from docx import Document
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    document = Document()
    section = document.sections[0]
    section.header.paragraphs[0].text = RULES_HEADER
    footer = section.footer.paragraphs[0]
    footer.text = RULES_FOOTER + "　"
    # a PAGE field, so the printed footer carries the page number as Word shows it
    field = OxmlElement("w:fldSimple")
    field.set(qn("w:instr"), "PAGE")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "1"
    run.append(text)
    field.append(run)
    footer._p.append(field)

    document.add_paragraph(RULES_TITLE, style="Title")
    for line in RULES_META:
        document.add_paragraph(line)
    for chapter, articles in RULES:
        document.add_heading(chapter, level=1)
        for heading, paragraphs in articles:
            document.add_heading(heading, level=2)
            for paragraph in paragraphs:
                if paragraph.startswith("・"):
                    document.add_paragraph(paragraph[1:], style="List Bullet")
                else:
                    document.add_paragraph(paragraph)
            if heading.startswith("第6条"):
                table = document.add_table(rows=len(RETENTION), cols=len(RETENTION[0]))
                table.style = "Table Grid"
                for r, row in enumerate(RETENTION):
                    for c, value in enumerate(row):
                        table.cell(r, c).text = value
                        if r == 0:
                            for cell_run in table.cell(r, c).paragraphs[0].runs:
                                cell_run.font.bold = True
                                cell_run.font.size = Pt(10.5)
    document.add_paragraph("附則　この規程は、2024年10月1日から施行する。")
    properties = document.core_properties
    properties.title = RULES_TITLE
    properties.author = "総務部"
    properties.last_modified_by = "総務部"
    properties.revision = 3
    properties.created = FIXED_TIME
    properties.modified = FIXED_TIME
    properties.last_printed = FIXED_TIME
    document.save(str(path))


# --- 製品/AQ-300_かんたんガイド.pdf --------------------------------------------------------

GUIDE_TITLE = "ミナモ AQ-300 かんたんガイド"
# (section heading, paragraphs, optional table)
GUIDE_PAGES: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = (
    (
        "1. 箱の中身を確かめる",
        (
            "このたびはミナモ AQ-300をお買い上げいただき、ありがとうございます。",
            "このガイドでは、箱から出して最初の運転を始めるまでの手順を説明します。",
            "詳しい使い方やエラーコードは、取扱説明書をご覧ください。",
            "箱の中には次のものが入っています。",
            "・本体（給水タンク、加湿フィルター、集じんフィルター、脱臭フィルターはセット済み）",
            "・取扱説明書、かんたんガイド（本書）、保証書",
            "・ミナモクリアお試し用ボトル（30mL）1本",
            "保証書は販売店の印と購入日の記入を確認し、大切に保管してください。",
            "保証書は再発行できません。",
        ),
        (),
    ),
    (
        "2. 設置する",
        (
            "本体を箱から出したら、輸送用のオレンジ色の固定テープ（4か所）をはがしてください。",
            "固定テープは、給水タンクの上面、後面パネルの左右、加湿トレイの手前にあります。",
            "テープをはがさずに運転すると、ERR-103が表示されることがあります。",
            "本体の背面と側面は壁から30cm以上離し、平らで安定した床に置いてください。",
            "エアコンの風が直接当たる場所や、直射日光の当たる場所は避けてください。",
        ),
        (),
    ),
    (
        "3. はじめての運転",
        (
            "給水タンクに水道水を入れ、電源ボタンを押すと「自動」モードで運転を始めます。",
            "初回の運転では、新しいフィルターのにおいがすることがあります。",
            "においは2〜3日ほどで消えます。",
            "季節や場面に合わせて、次のモードがおすすめです。",
        ),
        (
            ("場面", "おすすめのモード", "ポイント"),
            ("花粉の季節", "花粉", "帰宅後30分は風量が強になります"),
            ("冬の乾燥", "のど・肌", "目標湿度は60%がおすすめ"),
            ("就寝時", "おやすみ", "表示部が消灯し風量が最小"),
            ("来客前", "自動", "汚れを検知すると風量が上がります"),
        ),
    ),
    (
        "4. スマートフォンとつなぐ",
        (
            "アプリ「ミナモリンク」は、iOS 16以降またはAndroid 10以降のスマートフォンで使えます。",
            "本体の「Wi-Fi」ボタンを5秒長押しして接続モードにし、アプリの案内に従います。",
            "本機は2.4GHz帯の無線LANにのみ対応しています。",
            "1つのアカウントに登録できる本体は最大10台で、家族5人まで操作を共有できます。",
            "接続できないときは、ルーターの近くで設定をやり直してください。",
        ),
        (),
    ),
    (
        "5. 困ったときの連絡先",
        (
            "使い方や故障のご相談は、お客様相談室で受け付けています。",
            "受付時間は9:00〜18:00です（年末年始を除く）。",
            "お問い合わせの前に、本体底面の銘板にある製造番号（12桁）をご用意ください。",
            "修理を依頼するときは、給水タンクと加湿トレイの水を捨ててから梱包してください。",
        ),
        (),
    ),
)


def write_quick_guide(path: Path) -> None:
    """Five A4 pages: running header, a section heading per page, a printed page number."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    gothic, mincho = "HeiseiKakuGo-W5", "HeiseiMin-W3"
    pdfmetrics.registerFont(UnicodeCIDFont(gothic))
    pdfmetrics.registerFont(UnicodeCIDFont(mincho))
    width, height = A4
    margin = 60.0
    # invariant=1 fixes the creation date and document id, so the bytes do not change
    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    pdf.setTitle(GUIDE_TITLE)
    pdf.setAuthor(COMPANY)
    total = len(GUIDE_PAGES)
    for number, (heading, paragraphs, table) in enumerate(GUIDE_PAGES, start=1):
        pdf.setFont(mincho, 9)
        pdf.drawString(margin, height - 40, GUIDE_TITLE)
        pdf.line(margin, height - 46, width - margin, height - 46)
        pdf.setFont(gothic, 16)
        pdf.drawString(margin, height - 90, heading)
        y = height - 125
        pdf.setFont(mincho, 11)
        for paragraph in paragraphs:
            for line in wrap(paragraph, mincho, 11, width - 2 * margin):
                pdf.drawString(margin, y, line)
                y -= 20
        if table:
            y -= 10
            _draw_table(pdf, table, margin, y, width - 2 * margin, mincho, gothic)
        pdf.setFont(mincho, 9)
        pdf.drawCentredString(width / 2, 30, f"- {number} / {total} -")
        pdf.showPage()
    pdf.save()


def wrap(text: str, font: str, size: float, width: float) -> list[str]:
    """``text`` broken into lines no wider than ``width`` (Japanese breaks between any chars)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines: list[str] = []
    line = ""
    for char in text:
        if line and stringWidth(line + char, font, size) > width:
            lines.append(line)
            line = ""
        line += char
    if line:
        lines.append(line)
    return lines


def _draw_table(
    pdf: object,
    rows: Sequence[Sequence[str]],
    left: float,
    top: float,
    width: float,
    font: str,
    bold: str,
) -> None:
    """A ruled table, so text extractors (pdfplumber) can find the cells by their lines."""
    from reportlab.pdfgen.canvas import Canvas

    assert isinstance(pdf, Canvas)
    widths = (width * 0.25, width * 0.3, width * 0.45)
    row_height = 24.0
    bottom = top - row_height * len(rows)
    x_positions = [left]
    for w in widths:
        x_positions.append(x_positions[-1] + w)
    for r in range(len(rows) + 1):
        pdf.line(left, top - r * row_height, left + width, top - r * row_height)
    for x in x_positions:
        pdf.line(x, top, x, bottom)
    for r, row in enumerate(rows):
        pdf.setFont(bold if r == 0 else font, 10)
        for c, value in enumerate(row):
            pdf.drawString(x_positions[c] + 6, top - r * row_height - 16, value)


# --- zip normalisation ---------------------------------------------------------------------


def normalise_zip(path: Path) -> None:
    """Rewrite an OOXML package with fixed entry timestamps (libraries stamp the current time)."""
    with zipfile.ZipFile(path) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist()]
    stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    entries = [
        # openpyxl stamps the save time as "modified" whatever the properties say
        (name, _MODIFIED.sub(rb"\g<1>" + stamp + rb"\g<2>", data) if name == _CORE else data)
        for name, data in entries
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            target.writestr(info, data)
    path.write_bytes(buffer.getvalue())


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    outputs = {
        "情報システム/障害一覧.csv": write_incident_csv,
        "情報システム/利用者台帳.xlsx": write_user_ledger,
        "製品/AQ-300_製品紹介.pptx": write_product_deck,
        "総務/文書管理規程.docx": write_rule_book,
        "製品/AQ-300_かんたんガイド.pdf": write_quick_guide,
    }
    for relative, write in outputs.items():
        path = SAMPLE_DOCS / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path)
        if path.suffix in (".xlsx", ".pptx", ".docx"):
            normalise_zip(path)
        logger.info("wrote %s (%d bytes)", path.relative_to(ROOT), path.stat().st_size)


if __name__ == "__main__":
    main()

"""The units and counters a 何X question asks for (何kg, 何人, 何か月), each with the spellings
its answer may use (kg of 何キロ, 名 of 何人)."""

from __future__ import annotations

from typing import Final

WEIGHT = r"kg|g|t|キロ|キログラム|グラム|トン"
LENGTH = r"mm|cm|km|m|ミリ|センチ|メートル|キロ"
VOLUME = r"ml|l|cc|ミリリットル|リットル"
MONTHS = r"か月|ヶ月|カ月|箇月|ケ月|ヵ月"
PLACES = r"か所|カ所|箇所|ヶ所|ケ所"
UNITS: Final[dict[str, str]] = {
    "円": r"円",
    "万円": r"円",
    **dict.fromkeys(["kg", "キログラム", "グラム", "g", "トン"], WEIGHT),
    "キロ": WEIGHT + "|km|キロメートル",
    **dict.fromkeys(["cm", "センチ", "mm", "m", "メートル", "km", "キロメートル"], LENGTH),
    "ミリ": LENGTH + "|" + VOLUME,
    **dict.fromkeys(["ml", "ミリリットル", "l", "リットル", "cc"], VOLUME),
    **dict.fromkeys(["℃", "°c", "度"], r"℃|°c|度|°"),
    "畳": r"畳",
    **dict.fromkeys(["平方メートル", "平米", "㎡", "m2"], r"平方メートル|平米|㎡|m2|m²"),
    **dict.fromkeys(["%", "パーセント", "割"], r"%|割|パーセント"),
    **dict.fromkeys(["w", "ワット"], r"w|ワット"),
    "時": r"時|:\d\d",
    "時間": r"時間",
    "分": r"分",
    "秒": r"秒",
    **dict.fromkeys(["日", "日間", "営業日"], r"(?:営業)?日"),
    **dict.fromkeys(["週", "週間"], r"週"),
    **dict.fromkeys(["か月", "ヶ月", "カ月"], MONTHS),
    "月": r"月",
    **dict.fromkeys(["年", "年間", "年度"], r"年"),
    **dict.fromkeys(["歳", "才"], r"歳|才"),
    **dict.fromkeys(["人", "名"], r"人|名"),
    "件": r"件",
    "回": r"回|度|刊",
    "台": r"台",
    "個": r"個|つ",
    "枚": r"枚|通",
    "本": r"本",
    "冊": r"冊",
    "通": r"通|枚",
    "社": r"社",
    **dict.fromkeys(["店", "店舗"], r"店|店舗"),
    **dict.fromkeys(["か所", "カ所", "箇所", "ヶ所"], PLACES),
    "階": r"階",
    **dict.fromkeys(["文字", "字"], r"文字|字|桁"),
    "桁": r"桁",
    "種類": r"種類|種|件|個|つ",
    "泊": r"泊",
    "倍": r"倍",
    "点": r"点",
    "番": r"\d{2,}",
    "号": r"号",
    "コース": r"コース",
    "ページ": r"ページ|頁|p",
    "ポイント": r"ポイント|pt",
    "組": r"組",
    "席": r"席",
    "棟": r"棟",
    "軒": r"軒",
    **dict.fromkeys(["頭", "匹"], r"頭|匹"),
    "位": r"位",
    "駅": r"駅",
    "袋": r"袋",
    "箱": r"箱",
}

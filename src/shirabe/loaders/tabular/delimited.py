"""The field delimiter of CSV-like text, found with the real CSV grammar."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

DELIMITERS = (",", "\t", ";", "|")
_SNIFF_RECORDS = 50


def sniff_delimiter(
    sample: str, candidates: Sequence[str] = DELIMITERS, *, complete: bool = True
) -> str:
    """The field delimiter of delimited text, from a sample of its first lines.

    Each candidate splits the sample with the real CSV grammar (quotes, doubled quotes,
    quoted line breaks); the winner gives the most records with the commonest field count
    (more than one field), then the most fields; the earlier candidate (comma) wins ties,
    and also a sample no candidate splits. Unless ``complete`` (the sample is the whole
    file), the sample's last record may be cut short and is not counted.
    """
    import csv
    import io

    best = (0, 0)
    winner = candidates[0] if candidates else ","
    for delimiter in candidates:
        reader = csv.reader(io.StringIO(sample), delimiter=delimiter)
        try:
            counts = [len(r) for _, r in zip(range(_SNIFF_RECORDS + 1), reader, strict=False) if r]
        except csv.Error:
            continue
        if len(counts) > _SNIFF_RECORDS or (not complete and len(counts) > 1):
            counts.pop()
        if not counts:
            continue
        width, hits = Counter(counts).most_common(1)[0]
        if width >= 2 and (hits, width) > best:
            best, winner = (hits, width), delimiter
    return winner

"""Text normalisation shared by the index and the query side."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Dash-like characters that stand for a hyphen when they sit between two alphanumerics.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DASH_RE = re.compile(rf"(?<=[^\W_])[{_DASHES}](?=[^\W_])")
# The prolonged sound mark is only a hyphen between ASCII letters or digits ("ERRー107").
_CHOONPU_RE = re.compile(r"(?<=[0-9A-Za-z])\u30fc(?=[0-9A-Za-z])")


def normalize(text: str) -> str:
    """Apply NFKC and turn dash-like characters between alphanumerics into ``-``."""
    text = unicodedata.normalize("NFKC", text)
    text = _DASH_RE.sub("-", text)
    return _CHOONPU_RE.sub("-", text)


@lru_cache(maxsize=1 << 16)
def folded(text: str) -> str:
    """NFKC and lower case: the form in which a question and a passage are compared."""
    return unicodedata.normalize("NFKC", text).lower()

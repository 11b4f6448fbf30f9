"""What shirabe says when the documents do not answer the question."""

from __future__ import annotations

REFUSAL_TEXT = "ドキュメントに記載がありません"

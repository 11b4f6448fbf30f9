"""``shirabe serve`` over an index that bench/scale.py or bench/postgres.py built, for
bench/load.py --scaled.

    python bench/scaled_server.py SIZE PORT TOKEN_FILE [--database URL] [--groups 9]

The server is the product's own app (``create_app`` over ``Shirabe``, run by uvicorn as
``shirabe serve`` runs it); only the embedder differs: passages had sentence-mean vectors
(``--embedder means`` of those scripts) and the model embeds questions, so this server's
embedder must be the same one or the index would refuse it. A user reading ``--groups`` of the
ten departments gets a token, written to TOKEN_FILE.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shirabe.engine import Shirabe
from shirabe.errors import ShirabeError
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, ServerSettings, Settings, StoreSettings

from common import CACHE
from scale import bench_embedder, sentences_and_questions

USER = "load"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", type=int)
    parser.add_argument("port", type=int)
    parser.add_argument("token_file", type=Path)
    parser.add_argument("--database", help="the kept database of bench/postgres.py --keep")
    parser.add_argument("--groups", type=int, default=9, help="departments the user reads")
    args = parser.parse_args()

    import uvicorn

    work = CACHE / (f"postgres-{args.size}" if args.database else f"scale-{args.size}")
    home = work / ("home" if args.database else "index")
    if not (work / "access.yaml").exists():
        raise SystemExit(f"{work}: no index there; run bench/scale.py or bench/postgres.py first")
    settings = Settings(
        home=home,
        store=StoreSettings(database_url=args.database),
        ingest=IngestSettings(section_summaries=False, access_map=work / "access.yaml"),
        server=ServerSettings(port=args.port, anonymous="off"),
    )
    sentences, _ = sentences_and_questions()
    shirabe = Shirabe(settings, embedder=bench_embedder("means", sentences))
    groups = [f"d{d}" for d in range(args.groups)]
    try:
        shirabe.accounts.add_user(USER, groups)
    except ShirabeError:  # a kept index: the user is there from an earlier run
        shirabe.accounts.update_user(USER, groups=groups)
    _info, secret = shirabe.accounts.create_token(USER, "bench/load.py")
    args.token_file.write_text(secret, encoding="utf-8")
    api = create_app(shirabe, roots=[work / "corpus"])
    uvicorn.run(api, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

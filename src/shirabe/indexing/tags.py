"""The tags the ingest puts on every document: its category, the official names it mentions,
the groups that may read it, and the version of the files those came from."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath

from shirabe.records import CATEGORY, GROUPS, UPLOADED_BY
from shirabe.settings import IngestSettings

# Metadata keys the ingest adds to every document.
ENTITIES = "entities"
"""The official names (synonyms file) the document mentions, as a JSON list."""
TAGS_VERSION = "tags_version"
"""The synonyms file's and access map's signature when the document was tagged; a change
re-tags it."""
TAGS_FORMAT = "2"
"""How tags are made; a change re-tags every document once."""
READ_VERSIONS: dict[str, str] = {".pdf": "2"}
"""How files of a type are read into text, where that changed since tags were first versioned
(PDF 2: running headers and footers removed); a change reads every file of that type again
once, on its next ingest (the embeddings of unchanged passages come from the cache)."""


CUT_VERSION = "2"
"""How the text of any file is cut into sentences and passages, where that changed since
(2: a full-width ．between digits is a decimal point, not the end of a sentence); a change
reads every file again once, like :data:`READ_VERSIONS`."""


CUT_SETTINGS = (
    "chunk_size",
    "chunk_overlap",
    "section_summaries",
    "sentence_vectors",
    "pooled_chunk_vectors",
    "ocr",
    "ocr_languages",
)
"""Settings of the ``ingest`` section that change what a file's passages or vectors are. Only
values other than the defaults count (an index built with the defaults is not read again on
upgrade), so a change of one of these defaults must come with a new :data:`CUT_VERSION`."""


def cut_signature(settings: IngestSettings) -> str:
    """Those of :data:`CUT_SETTINGS` that differ from their defaults (empty when none do):
    part of every file's tags version, so a file indexed with other values is read again on
    the next ingest (``SHIRABE_INGEST__CHUNK_SIZE=600`` takes effect on unchanged files too)."""
    fields = IngestSettings.model_fields
    return ",".join(
        f"{name}={getattr(settings, name)}"
        for name in CUT_SETTINGS
        if getattr(settings, name) != fields[name].default
    )


def tags_version(key: str, signature: str) -> str:
    """The tags version of the file ``key`` with the synonyms' and access map's signature."""
    read = READ_VERSIONS.get(PurePath(key).suffix.lower())
    return f"{TAGS_FORMAT}{'.' + read if read else ''}.c{CUT_VERSION}:{signature}"


RESERVED = frozenset({CATEGORY, ENTITIES, GROUPS, UPLOADED_BY, TAGS_VERSION})
"""Tags only the ingest sets: a document's own metadata (front matter) cannot set them."""


def groups_json(groups: Sequence[str]) -> str:
    return json.dumps(list(groups), ensure_ascii=False)

"""The embedded store: SQLite for files and chunks, immutable segments for BM25 postings
and vectors."""

"""Ingest runs: walking folders, incremental bookkeeping, tagging, and what each chunk
contributes to the index (passages)."""

"""The PostgreSQL + pgvector store for teams on a server."""

"""Finding the passages for a question: the query, the retrievers, their fusion, and query
understanding."""

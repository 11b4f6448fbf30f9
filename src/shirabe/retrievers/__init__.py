"""Ranking chunks for a query."""

from shirabe.retrievers.factory import make_retriever
from shirabe.retrievers.protocol import Ranker, Retriever

__all__ = ["Ranker", "Retriever", "make_retriever"]

"""Keeping BLAS from competing with the embedding model for the CPU cores.

OpenBLAS worker threads busy-wait after a matrix product; on a two-core machine they then
starve the embedding model's OpenMP threads, and a 20 ms query embedding took 100 ms. The
similarity products here are small and memory-bound, so they run on one thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache
from typing import Any


@cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    with _controller().limit(limits=1, user_api="blas"):
        yield

"""Decode event chunks in two worker processes (fork: the workers share the bytes, copy-free;
each worker's in-place bracket writes touch only its own copy-on-write pages).

Only numpy columns travel back to the parent. Used for large traces on multi-core machines;
small traces decode in-process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor

from traceviz.trace.decode import ColumnChunk, decode_span

_SHARED: memoryview | None = None  # the parent's event bytes, inherited by forked workers


def _work(span: tuple[int, int]) -> ColumnChunk:
    assert _SHARED is not None
    return decode_span(_SHARED, *span)


def decode_spans_parallel(buf: memoryview, spans: list[tuple[int, int]], progress=None):
    """Decode ``spans`` of ``buf`` (see :func:`split_event_array`) in ``min(2, cpus)`` forked
    workers, returning chunks in order. Falls back to in-process decoding where fork is missing."""
    global _SHARED
    if "fork" not in mp.get_all_start_methods():
        return [decode_span(buf, s, e) for s, e in spans]
    _SHARED = buf
    total = len(buf)
    try:
        workers = max(1, min(2, os.cpu_count() or 1))
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            out = []
            for (_, end), chunk in zip(spans, pool.map(_work, spans), strict=True):
                out.append(chunk)
                if progress is not None:
                    progress(end, total)
            return out
    finally:
        _SHARED = None

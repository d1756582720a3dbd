"""``--workers N``: decode event chunks in ``N`` forked worker processes, and run table
building and the analysis's numpy work on ``N`` threads (:func:`thread_map`).

Fork lets the workers share the parent's event bytes copy-free; each worker's in-place bracket
writes (two bytes per chunk, :func:`~traceviz.trace.decode.decode_span`) touch only its own
copy-on-write pages. Only numpy columns travel back to the parent.

Count (:func:`worker_count`): ``--workers N`` / ``load(workers=N)`` / ``analyze(trace,
workers=N)`` when given, else every usable core. Decode processes are also capped by memory
(each holds one chunk's transient objects, at most :data:`WORKER_MEMORY_BYTES`) and by the
number of chunks (:func:`decode_workers`); small traces decode in-process, where starting
workers would cost more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from traceviz.errors import UsageError
from traceviz.trace.decode import ColumnChunk, decode_span
from traceviz.trace.limits import available_memory_bytes

#: Transient memory of one worker decoding one chunk (its typed events and columns), bytes:
#: an upper bound measured on 16 MB chunks of real traces (peak ≈ 3× the chunk).
WORKER_MEMORY_BYTES = 64 * 1024 * 1024

T = TypeVar("T")
R = TypeVar("R")

_SHARED: memoryview | None = None  # the parent's event bytes, inherited by forked workers
_override: int | None = None


def usable_cpus() -> int:
    """CPU cores this process may run on (its affinity mask, else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - no affinity API (macOS)
        return os.cpu_count() or 1


def set_workers(n: int | None) -> None:
    """Set the process-wide worker count used when ``load`` is given none (the CLI's
    ``--workers``); ``None`` restores the default (every usable core)."""
    global _override
    _override = check_workers(n)


def check_workers(n: int | None) -> int | None:
    """``n`` if it is ``None`` or a positive int; else :class:`~traceviz.errors.UsageError`."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise UsageError(f"workers must be a positive integer or None, not {n!r}")
    return n


def worker_count(requested: int | None = None) -> int:
    """Workers asked for: the request, else the process-wide ``--workers``, else every usable
    core (the analysis runs this many threads)."""
    return check_workers(requested) or _override or usable_cpus()


def decode_workers(requested: int | None, n_chunks: int) -> int:
    """Processes to decode ``n_chunks`` chunks with: :func:`worker_count`, at most one per
    chunk and at most as many as the available memory holds (:data:`WORKER_MEMORY_BYTES`
    each); at least 1."""
    want = worker_count(requested)
    by_memory = available_memory_bytes() // WORKER_MEMORY_BYTES
    return max(1, min(want, n_chunks, by_memory))


def thread_map(fn: Callable[[T], R], items: Iterable[T], threads: int) -> list[R]:
    """``[fn(x) for x in items]``, on up to ``threads`` threads when that is more than one
    (for numpy work, which releases the GIL); in order; the first error is raised."""
    todo = list(items)
    if threads <= 1 or len(todo) <= 1:
        return [fn(x) for x in todo]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(threads, len(todo)), thread_name_prefix="traceviz") as pool:
        return list(pool.map(fn, todo))


def can_fork() -> bool:
    """Whether decode workers can start here (they share the bytes through ``fork``)."""
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods()


def _work(span: tuple[int, int]) -> ColumnChunk:
    assert _SHARED is not None
    return decode_span(_SHARED, *span)


def decode_spans_parallel(buf: memoryview, spans: list[tuple[int, int]], workers: int,
                          progress: Callable[[int, int], None] | None = None,
                          meanwhile: Callable[[], object] | None = None
                          ) -> list[ColumnChunk]:
    """Decode ``spans`` of ``buf`` (see :func:`~traceviz.trace.decode.split_event_array`) in
    ``workers`` forked processes (:func:`decode_workers` says how many; needs
    :func:`can_fork`), returning chunks in order. ``meanwhile()`` runs in this process once
    the workers have started (the loader imports pandas there)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    global _SHARED
    total = len(buf)
    _SHARED = buf
    try:
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            chunks = pool.map(_work, spans)  # forks the workers and submits every span
            if meanwhile is not None:
                meanwhile()
            out = []
            for (_, end), chunk in zip(spans, chunks, strict=True):
                out.append(chunk)
                if progress is not None:
                    progress(end, total)
            return out
    finally:
        _SHARED = None

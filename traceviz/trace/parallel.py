"""``--workers N``: decode event chunks in ``N`` forked worker processes, and run table
building and the analysis's numpy work on ``N`` threads (:func:`thread_map`).

Fork lets the workers share the parent's event bytes copy-free; each worker's in-place bracket
writes (two bytes per chunk, :func:`~traceviz.trace.decode.decode_span`) touch only its own
copy-on-write pages. The workers take chunks from a shared counter and leave their numpy
columns in a shared mapping (:mod:`~traceviz.trace.shared_columns`); only the rest of each
chunk (names, metadata rows) travels back through a pipe.

Count (:func:`worker_count`): ``--workers N`` / ``load(workers=N)`` / ``analyze(trace,
workers=N)`` when given, else every usable core (the analysis uses at most 8 threads). Decode
processes are also capped by memory (each holds one chunk's transient objects, at most
:data:`WORKER_MEMORY_BYTES`) and by the number of chunks (:func:`decode_workers`); small
traces decode in-process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from traceviz.errors import UsageError
from traceviz.trace.decode import ColumnChunk, decode_span
from traceviz.trace.limits import available_memory_bytes
from traceviz.trace.shared_columns import SharedColumns

#: Transient memory of one worker decoding one chunk (its typed events and columns), bytes:
#: an upper bound measured on 16 MB chunks of real traces (peak ≈ 3× the chunk).
WORKER_MEMORY_BYTES = 64 * 1024 * 1024
#: Seconds between progress reports while the workers decode.
PROGRESS_S = 0.1
#: Longest wait for the workers to start before ``meanwhile`` runs (seconds).
START_WAIT_S = 1.0

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


@dataclass(frozen=True)
class _Job:
    """What forked decode workers share: the spans, the next span to take, the bytes decoded
    so far (for progress), and where the columns go (``None``: back through the pipe)."""

    spans: list[tuple[int, int]]
    next_span: Any  # multiprocessing.Value("q")
    done_bytes: Any  # multiprocessing.Value("q")
    columns: SharedColumns | None


_JOB: _Job | None = None


def _work() -> list[tuple[int, ColumnChunk | BaseException, int]]:
    """In a worker: take spans until none is left; per span (index, chunk or its error, rows
    in the shared columns or -1: the chunk holds its own)."""
    assert _SHARED is not None and _JOB is not None
    job, out = _JOB, []
    while True:
        with job.next_span.get_lock():
            i = job.next_span.value
            job.next_span.value = i + 1
        if i >= len(job.spans):
            return out
        start, end = job.spans[i]
        try:
            chunk = decode_span(_SHARED, start, end)
        except Exception as exc:  # every span is decoded; the parent raises the first error
            out.append((i, exc, -1))
            continue
        stored = job.columns.store(i, chunk) if job.columns is not None else None
        out.append((i, *stored) if stored is not None else (i, chunk, -1))
        with job.done_bytes.get_lock():
            job.done_bytes.value += end - start


def _await_start(job: _Job, workers: int, pending: set[Any]) -> None:
    """Wait (at most :data:`START_WAIT_S`) until every worker has taken a span: handing the
    workers their tasks needs this process's GIL, which a ``meanwhile`` import would hold."""
    import time

    deadline = time.monotonic() + START_WAIT_S
    while (job.next_span.value < min(workers, len(job.spans)) and time.monotonic() < deadline
           and not all(f.done() for f in pending)):
        time.sleep(0.001)


def decode_spans_parallel(buf: memoryview, spans: list[tuple[int, int]], workers: int,
                          progress: Callable[[int, int], None] | None = None,
                          meanwhile: Callable[[], object] | None = None
                          ) -> list[ColumnChunk]:
    """Decode ``spans`` of ``buf`` (see :func:`~traceviz.trace.decode.split_event_array`) in
    ``workers`` forked processes (:func:`decode_workers` says how many; needs
    :func:`can_fork`), returning chunks in order; a span that fails raises its error (the
    first span's, in order).

    The workers take the next span from a shared counter and leave the columns in shared
    memory (:mod:`~traceviz.trace.shared_columns`), so this process neither hands out spans
    nor unpickles columns meanwhile: ``meanwhile()`` runs here once the workers have started
    (the loader imports pandas there), then ``progress(bytes decoded, len(buf))`` every
    :data:`PROGRESS_S` seconds."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    global _SHARED, _JOB
    ctx = mp.get_context("fork")
    total = len(buf)
    try:
        columns: SharedColumns | None = SharedColumns(spans)
    except (OSError, ValueError, OverflowError):  # mapping refused: columns through pipes
        columns = None
    _SHARED = buf
    _JOB = _Job(spans, ctx.Value("q", 0), ctx.Value("q", 0), columns)
    try:
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            pending = {pool.submit(_work) for _ in range(workers)}
            futures = list(pending)
            if meanwhile is not None:
                _await_start(_JOB, workers, pending)
                meanwhile()
            while pending:
                _, pending = wait(pending, PROGRESS_S, return_when=FIRST_COMPLETED)
                if progress is not None:
                    progress(min(_JOB.done_bytes.value, total), total)
            done = sorted(r for f in futures for r in f.result())
    finally:
        _SHARED = _JOB = None
    for _, got, _ in done:
        if isinstance(got, BaseException):
            raise got
    return [columns.load(i, chunk, rows) if rows >= 0 and columns is not None else chunk
            for i, chunk, rows in done]  # type: ignore[misc]

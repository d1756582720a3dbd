"""``--workers N``: decode event chunks, and attribute the host-wait blocks, in ``N`` forked
worker processes (:class:`ForkedMap`); run table building and other numpy work on ``N``
threads (:func:`thread_map`).

Fork lets the workers read the parent's tables copy-free. The decode workers of a big plain
JSON file read their own chunks from it (:class:`~traceviz.trace.text.FileText`: the parent
never holds the whole text); those of text in memory (an inflated gzip trace) read it
copy-free, never writing it. They take chunks from a shared counter and leave their numpy
columns in a shared mapping (:mod:`~traceviz.trace.shared_columns`); only the rest of each
chunk (names, metadata rows) travels back through a pipe. This process takes chunks and
blocks from the same counter once it has nothing else to do (:meth:`ForkedMap.take_part`), so
it forks one worker fewer where the workers would otherwise fill every core
(:func:`forked_workers`).

Count (:func:`worker_count`): ``--workers N`` / ``load(workers=N)`` / ``analyze(trace,
workers=N)`` when given, else every usable core (the analysis uses at most 12). The count is
an argument all the way down, from the CLI's option or the API's keyword to the function that
forks or starts threads: this module keeps no process-wide setting, so one call's count never
leaks into the next. Decode
processes are also capped by memory (each holds one chunk's transient objects, at most
:data:`WORKER_MEMORY_BYTES`) and by the number of chunks (:func:`decode_workers`); small
traces decode in-process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from traceviz.errors import UsageError, WorkerDiedError
from traceviz.trace.chunk import decode_chunk
from traceviz.trace.decode import ColumnChunk
from traceviz.trace.limits import available_memory_bytes
from traceviz.trace.shared_columns import SharedColumns
from traceviz.trace.text import SpanBuffer, Text

#: Transient memory of one worker decoding one chunk (its typed events and columns), bytes:
#: an upper bound measured on 16 MB chunks of real traces (peak ≈ 3× the chunk).
WORKER_MEMORY_BYTES = 64 * 1024 * 1024
#: Seconds between progress reports while the workers decode.
PROGRESS_S = 0.1
#: Longest wait for the workers to start before ``meanwhile`` runs (seconds).
START_WAIT_S = 1.0

T = TypeVar("T")
R = TypeVar("R")

def usable_cpus() -> int:
    """CPU cores this process may run on (its affinity mask, else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - no affinity API (macOS)
        return os.cpu_count() or 1


def check_workers(n: int | None) -> int | None:
    """``n`` if it is ``None`` or a positive int; else :class:`~traceviz.errors.UsageError`."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise UsageError(f"workers must be a positive integer or None, not {n!r}")
    return n


def worker_count(requested: int | None = None) -> int:
    """Workers asked for: ``requested`` (the caller's ``workers`` argument, from ``--workers``
    or the API's keyword), else every usable core (:func:`usable_cpus`)."""
    return check_workers(requested) or usable_cpus()


def decode_workers(requested: int | None, n_chunks: int) -> int:
    """Processes to decode ``n_chunks`` chunks with: :func:`worker_count`, at most one per
    chunk and at most as many as the available memory holds (:data:`WORKER_MEMORY_BYTES`
    each); at least 1."""
    want = worker_count(requested)
    by_memory = available_memory_bytes() // WORKER_MEMORY_BYTES
    return max(1, min(want, n_chunks, by_memory))


def forked_workers(workers: int) -> int:
    """Processes to fork for ``workers`` workers when this process takes items too
    (:meth:`ForkedMap.take_part`): ``workers``, but with this one no more processes than
    :func:`usable_cpus`; at least 1."""
    return max(1, min(workers, usable_cpus() - 1))


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
    """Whether worker processes can be forked here: the platform forks, and this process is
    no daemon (a pool's worker, whose children multiprocessing refuses)."""
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


#: ForkedMap's (item function, shared next-item counter, item count), inherited by its workers.
_TASK: tuple[Callable[[int], Any], Any, int] | None = None


def _take_items(task: tuple[Callable[[int], Any], Any, int] | None = None,
                poll: Callable[[], None] | None = None) -> list[tuple[int, Any]]:
    """Take the next item of ``task`` (in a forked worker: the inherited :data:`_TASK`) until
    none is left; per item (index, its value or its error). ``poll()`` is called between items
    every :data:`PROGRESS_S` seconds."""
    import time

    fn, counter, count = task or _TASK  # type: ignore[misc]
    out: list[tuple[int, Any]] = []
    polled = time.monotonic()
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= count:
            return out
        try:
            out.append((i, fn(i)))
        except Exception as exc:  # every item is done; the parent raises the first error
            out.append((i, exc))
        if poll is not None and time.monotonic() - polled >= PROGRESS_S:
            poll()
            polled = time.monotonic()


class ForkedMap:
    """``[fn(i) for i in range(count)]`` in ``workers`` forked processes, started on
    construction: each worker takes the next index from a shared counter until none is left,
    so the items balance across the workers and this process hands nothing out. ``fn`` and
    what it reads are inherited through ``fork`` (copy-free); only its values travel back,
    pickled. This process is free meanwhile, and can take items too (:meth:`take_part`);
    :meth:`wait` collects the values in order and raises the first failing item's error. Use
    as a context manager (leaving it waits for the workers). Needs :func:`can_fork`."""

    def __init__(self, fn: Callable[[int], Any], count: int, workers: int) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        global _TASK
        ctx = mp.get_context("fork")
        self._next = ctx.Value("q", 0)
        self._workers = max(1, min(workers, count))
        self._pool = ProcessPoolExecutor(self._workers, mp_context=ctx)
        self._task = fn, self._next, count
        self._own: list[tuple[int, Any]] = []
        _TASK = self._task
        try:  # a fork pool starts all its workers at the first submit
            self._futures = [self._pool.submit(_take_items) for _ in range(self._workers)]
        except BaseException:
            self._pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            _TASK = None

    def __enter__(self) -> ForkedMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def await_start(self) -> None:
        """Wait (at most :data:`START_WAIT_S`) until every worker has taken an item: handing
        the workers their tasks needs this process's GIL, which a long import would hold."""
        import time

        deadline = time.monotonic() + START_WAIT_S
        while (self._next.value < self._workers and time.monotonic() < deadline
               and not all(f.done() for f in self._futures)):
            time.sleep(0.001)

    def take_part(self, poll: Callable[[], None] | None = None) -> None:
        """Take items here too, as the workers do, until none is left (their values are kept
        for :meth:`wait`); ``poll()`` is called between items every :data:`PROGRESS_S`
        seconds."""
        self._own += _take_items(self._task, poll)

    def wait(self, poll: Callable[[], None] | None = None) -> list[Any]:
        """The values in item order; ``poll()`` is called every :data:`PROGRESS_S` seconds
        until the workers are done. Raises the error of the first item that failed, or
        :class:`~traceviz.errors.WorkerDiedError` when a worker died (killed) meanwhile."""
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        pending = set(self._futures)
        while pending:
            _, pending = wait(pending, PROGRESS_S, return_when=FIRST_COMPLETED)
            if poll is not None:
                poll()
        try:
            done = sorted([*self._own, *(r for f in self._futures for r in f.result())],
                          key=lambda r: r[0])
        except BrokenProcessPool:
            raise WorkerDiedError(
                f"a worker process (of {self._workers}) died before it finished: killed, "
                "most often by the system for lack of memory; try fewer --workers") from None
        for _, got in done:
            if isinstance(got, BaseException):
                raise got
        return [got for _, got in done]


def process_map(fn: Callable[[int], R], count: int, workers: int) -> list[R]:
    """``[fn(i) for i in range(count)]`` by ``workers`` workers: forked processes
    (:class:`ForkedMap`, :func:`forked_workers` of them, this process taking items too) where
    :func:`can_fork`, else threads (:func:`thread_map`); right here for one worker or one
    item. The first failing item's error is raised."""
    if workers <= 1 or count <= 1:
        return [fn(i) for i in range(count)]
    if can_fork():
        with ForkedMap(fn, count, forked_workers(workers)) as pool:
            pool.take_part()
            return pool.wait()
    return thread_map(fn, range(count), workers)


def decode_spans_parallel(text: Text, spans: list[tuple[int, int]], workers: int,
                          progress: Callable[[int, int], None] | None = None,
                          meanwhile: Callable[[], object] | None = None
                          ) -> list[ColumnChunk]:
    """Decode ``spans`` of ``text`` (see :func:`~traceviz.trace.text.split_text`) by
    ``workers`` workers (:func:`decode_workers` says how many): :func:`forked_workers` forked
    processes (:class:`ForkedMap`), this process taking spans too once ``meanwhile()`` is done;
    returns chunks in order; a span that fails raises its error (the first span's, in
    order). Each worker reads its spans (from the file, for a
    :class:`~traceviz.trace.text.FileText`) into a bracketed copy: the text is never written.

    The workers leave the columns in shared memory
    (:mod:`~traceviz.trace.shared_columns`), so this process does not unpickle them
    meanwhile: ``meanwhile()`` runs here once the workers have started (the loader imports
    pandas there), then this process decodes spans too; ``progress(bytes decoded,
    len(text))`` is called every :data:`PROGRESS_S` seconds."""
    import multiprocessing as mp

    total = len(text)
    try:
        columns: SharedColumns | None = SharedColumns(spans)
    except (OSError, ValueError, OverflowError):  # mapping refused: columns through pipes
        columns = None
    done_bytes = mp.get_context("fork").Value("q", 0)

    def decode(i: int) -> tuple[ColumnChunk, int]:
        start, end = spans[i]
        chunk = decode_chunk(text.bracketed(start, end))
        stored = columns.store(i, chunk) if columns is not None else None
        with done_bytes.get_lock():
            done_bytes.value += end - start
        return stored if stored is not None else (chunk, -1)

    def report() -> None:
        if progress is not None:
            progress(min(done_bytes.value, total), total)

    with ForkedMap(decode, len(spans), forked_workers(workers)) as pool:
        if meanwhile is not None:
            pool.await_start()
            meanwhile()
        pool.take_part(report)
        done = pool.wait(report)
    return [columns.load(i, chunk, rows) if rows >= 0 and columns is not None else chunk
            for i, (chunk, rows) in enumerate(done)]


def decode_spans_threaded(text: Text, spans: list[tuple[int, int]], workers: int,
                          progress: Callable[[int, int], None] | None = None,
                          meanwhile: Callable[[], object] | None = None
                          ) -> list[ColumnChunk]:
    """:func:`decode_spans_parallel` on ``workers`` threads of this process, for where the C
    scanner decodes (:mod:`~traceviz.trace.scanned`): it scans without the GIL, so threads
    scan side by side and no column has to cross a process boundary. ``workers - 1``
    threads start at once; this thread runs ``meanwhile()`` first, then takes spans too.
    Each span is read into a bracketed copy in its thread's :class:`~traceviz.trace.text.
    SpanBuffer` (the text is never written); chunks come back in order, and the first span
    (in order) that failed raises its error."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    total = len(text)
    lock = threading.Lock()
    state = {"next": 0, "bytes": 0}
    done: list[ColumnChunk | BaseException | None] = [None] * len(spans)

    def take() -> None:
        scratch = SpanBuffer()
        while True:
            with lock:
                i = state["next"]
                state["next"] = i + 1
            if i >= len(spans):
                return
            start, end = spans[i]
            try:
                done[i] = decode_chunk(text.bracketed(start, end, scratch))
            except Exception as exc:  # every span is done; the first error is raised
                done[i] = exc
            with lock:
                state["bytes"] += end - start
            if progress is not None and threading.current_thread() is main:
                progress(min(state["bytes"], total), total)

    main = threading.current_thread()
    with ThreadPoolExecutor(max(1, workers - 1), thread_name_prefix="traceviz-scan") as pool:
        futures = [pool.submit(take) for _ in range(max(1, workers - 1))]
        if meanwhile is not None:
            meanwhile()
        take()
        for f in futures:
            f.result()
    for got in done:
        if isinstance(got, BaseException):
            raise got
    return done  # type: ignore[return-value]

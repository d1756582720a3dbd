"""Many rank traces: load and analyse each rank in its own task, match them in the parent.

``analyze_rank_paths(paths, workers=None, dask=None) -> RankSet``. Each rank trace is one task
(:func:`traceviz.scale.task.rank_task`: load, analyse, digest, encode its single-trace
document) run in-process (one small rank set), in a local pool of worker processes
(:mod:`.pool`) or on Dask (:mod:`.dask_cluster`); only the compact per-rank results come back,
and the parent runs the cross-rank analysis
(:func:`traceviz.analyze.distributed.analyze_digests`). The parent never holds a trace (the
in-process path holds one at a time), so its memory does not grow with the traces' size.
The three paths give identical results.

Worker count (``workers=None``): every usable core, capped by the memory a rank needs (about
:data:`RANK_MEMORY_FACTOR` × its JSON text, from the file sizes) and by the number of ranks; a
set smaller than :data:`POOL_MIN_BYTES` on disk is analysed in-process, where starting workers
would cost more than it saves. An explicit ``workers`` > 1 always uses the pool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from traceviz.analyze.distributed.model import FailedRank, RanksAnalysis
from traceviz.errors import NoRankAnalysedError, UsageError
from traceviz.scale.task import RankRefused, RankResult, is_url, rank_task

#: Rank sets smaller than this (bytes on disk, all ranks) are analysed in-process by default.
POOL_MIN_BYTES = 64 * 1024 * 1024
#: Peak memory of analysing one rank, as a multiple of its JSON text (measured ≤ 2.2×).
RANK_MEMORY_FACTOR = 3
#: A gzip rank's JSON text is taken as this many times its file when its trailer is unusable.
GZIP_RATIO_GUESS = 10

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RankSet:
    """The multi-rank result: the cross-rank analysis, each kept rank's encoded single-trace
    document (order of ``analysis.ranks``) and the rank traces that failed (order given)."""

    analysis: RanksAnalysis
    documents: tuple[bytes, ...]
    failed: tuple[FailedRank, ...]
    paths: tuple[str, ...]  # every rank trace asked for, as given


def analyze_rank_paths(paths: Sequence[str | Path], workers: int | None = None,
                       dask: str | None = None, progress: Progress | None = None,
                       announce: Callable[[str], None] | None = None,
                       max_memory_bytes: int | None = None, force: bool = False) -> RankSet:
    """Analyse the rank traces ``paths`` together (see the module docstring).

    ``dask``: ``"local"`` or a scheduler address (``tcp://host:8786``), else the local pool.
    ``progress(done, total)`` is called as ranks finish; ``announce`` gets the Dask dashboard
    line. Raises :class:`UsageError` when a trace cannot tell its rank, and
    :class:`~traceviz.errors.NoRankAnalysedError` when no rank could be analysed. ``force``:
    cross-rank results even when the traces are not consistent as one run
    (:func:`~traceviz.analyze.distributed.analyze_digests`).
    """
    from traceviz.trace.parallel import check_workers

    check_workers(workers)
    names = [str(p) for p in paths]
    args = (max_memory_bytes,)
    if dask is not None:
        from traceviz.scale.dask_cluster import run_dask

        results = run_dask(rank_task, names, dask, workers or default_workers(names), args,
                           progress, announce)
    else:
        n = workers or default_workers(names)
        if n > 1 and (workers is not None or _disk_bytes(names) >= POOL_MIN_BYTES):
            from traceviz.scale.pool import run_pool

            results = run_pool(rank_task, names, min(n, len(names)), args, progress)
        else:
            results = []
            for i, name in enumerate(names, start=1):
                results.append(rank_task(name, *args))
                if progress is not None:
                    progress(i, len(names))
    return assemble(names, results, force=force)


def assemble(names: Sequence[str], results: Sequence[RankResult | FailedRank | RankRefused],
             *, force: bool = False) -> RankSet:
    """The cross-rank analysis of the tasks' results (in the order of ``names``; ``force``:
    see :func:`~traceviz.analyze.distributed.analyze_digests`)."""
    from traceviz.analyze.distributed import analyze_digests

    refused = [r for r in results if isinstance(r, RankRefused)]
    if refused:
        raise UsageError(refused[0].message)
    ok = [r for r in results if isinstance(r, RankResult)]
    failed = tuple(r for r in results if isinstance(r, FailedRank))
    if not ok:
        first = failed[0] if failed else None
        raise NoRankAnalysedError(f"none of the {len(names)} rank traces could be analysed"
                                  + (f"; {first.path}: {first.reason}" if first else ""))
    analysis = analyze_digests([r.digest for r in ok], force=force)
    by_path = {r.path: r.document for r in ok}
    return RankSet(analysis, tuple(by_path[i.path] for i in analysis.ranks), failed,
                   tuple(names))


def default_workers(paths: Sequence[str]) -> int:
    """Every usable core, at most one per rank, at most as many as the available memory holds
    ranks (:data:`RANK_MEMORY_FACTOR` × the largest rank's JSON text); at least 1."""
    from traceviz.trace.limits import available_memory_bytes
    from traceviz.trace.parallel import usable_cpus

    largest = max((_json_bytes(p) for p in paths), default=0)
    by_memory = available_memory_bytes() // max(RANK_MEMORY_FACTOR * largest, 1)
    return max(1, min(usable_cpus(), len(paths), by_memory))


def _disk_bytes(paths: Sequence[str]) -> int:
    total = 0
    for p in paths:
        try:
            total += 0 if is_url(p) else Path(p).stat().st_size
        except OSError:
            continue
    return total


def _json_bytes(path: str) -> int:
    """The JSON text size of a local rank trace: its size, or for gzip the trailer's ISIZE
    (the size mod 2³²) when believable, else :data:`GZIP_RATIO_GUESS` × the file; 0 for URLs
    and unreadable files."""
    if is_url(path):
        return 0
    from traceviz.trace.source import GZIP_MAGIC, gzip_isize

    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            if f.read(2) != GZIP_MAGIC or size < 18:
                return size
            isize = gzip_isize(f, size)
    except OSError:
        return 0
    return isize if isize is not None and isize >= size else GZIP_RATIO_GUESS * size

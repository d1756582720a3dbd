"""``traceviz.analyze(source)``: one trace → :class:`~traceviz.api.Analysis`, several rank
traces → :class:`~traceviz.api.Ranks`, a loaded trace → the frozen result.

The entry point sits above both wrappers so that neither imports the other.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from traceviz.api.analysis import Analysis, PathLike
from traceviz.api.ranks import Ranks
from traceviz.errors import UsageError
from traceviz.trace import Trace, load
from traceviz.trace.loader import Progress
from traceviz.trace.parallel import check_workers

if TYPE_CHECKING:
    from traceviz.analyze import model


@overload
def analyze(source: Trace, *, workers: int | None = None) -> model.Analysis: ...
@overload
def analyze(source: PathLike | Sequence[PathLike], *, workers: int | None = None,
            progress: Progress | None = None, force_ranks: bool = False
            ) -> Analysis | Ranks: ...


def analyze(source: Any, *, workers: int | None = None,
            progress: Progress | None = None, force_ranks: bool = False) -> Any:
    """Analyse a trace file (``.json`` / ``.json.gz``) → :class:`Analysis` with DataFrames.

    ``source`` may also be a list of paths: one path is analysed as above; several paths are
    the rank traces of one distributed run, analysed together → :class:`~traceviz.api.Ranks`
    (collectives matched across ranks, comm wait, stragglers; ``docs/metrics.md``).
    ``workers``: processes decoding a big trace and threads analysing it, or processes
    analysing several (``None``: every usable core; decoding is also capped by memory).
    ``progress(done_bytes, total_bytes)`` is called while decoding. ``force_ranks``: rank
    traces that are not consistent as one run still get waits and stragglers
    (:meth:`Ranks.from_paths` ``force``; the CLI's ``--force-ranks``).

    A loaded :class:`~traceviz.trace.Trace` gives the frozen
    :class:`traceviz.analyze.model.Analysis`, as before (the pipeline's pure function); wrap it
    with :meth:`Analysis.from_trace` for DataFrames.
    """
    check_workers(workers)
    if isinstance(source, Trace):
        from traceviz.analyze.analysis import analyze as analyze_trace

        return analyze_trace(source, workers=workers)
    if isinstance(source, (list, tuple)):
        if not source:
            raise UsageError("analyze() got an empty list of traces")
        if len(source) > 1:
            return Ranks.from_paths(source, workers=workers, force=force_ranks)
        source = source[0]
    if not isinstance(source, (str, os.PathLike)):
        raise UsageError(f"analyze() needs a trace path, a list of paths or a Trace, not "
                         f"{type(source).__name__}")
    # The analysis modules are imported while the loader's workers decode.
    trace = load(source, progress=progress, workers=workers, meanwhile=_import_analysis)
    return Analysis(trace, _import_analysis().analyze(trace, workers=workers))


def _import_analysis() -> Any:
    """The module :mod:`traceviz.analyze.analysis`, imported (once)."""
    import importlib

    return importlib.import_module("traceviz.analyze.analysis")

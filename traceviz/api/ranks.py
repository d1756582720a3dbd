"""``traceviz.analyze([rank0, rank1, …]) -> Ranks``: the joint analysis of a distributed run's
rank traces (definitions: ``docs/metrics.md``, "Rank traces").

A thin wrapper over :mod:`traceviz.scale` (each rank loaded and analysed in its own task: in
process, a local worker pool or Dask) and the multi-rank report: DataFrames of the per-rank and
per-rank-per-step metrics, the straggler, the rank traces that failed, each rank's own
:class:`~traceviz.api.Analysis` (loaded again on demand: the set keeps no trace),
``to_json()`` (exactly ``traceviz report r0 r1 … --format json``) and ``render(fmt)``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.lazy import pandas as pd

if TYPE_CHECKING:
    from collections.abc import Callable

    from traceviz.analyze.distributed.model import FailedRank, RanksAnalysis, RunStraggler
    from traceviz.api.analysis import Analysis
    from traceviz.scale import RankSet


class Ranks:
    """Rank traces of one run, analysed together. :attr:`result` is the frozen analysis.
    ``workers``: the count given to :meth:`from_paths`, which :meth:`analysis` loads one rank
    again by (``None``: every usable core)."""

    def __init__(self, rank_set: RankSet, workers: int | None = None) -> None:
        self._set = rank_set
        self._result = rank_set.analysis
        self._workers = workers

    @classmethod
    def from_paths(cls, paths: Sequence[str | os.PathLike], workers: int | None = None,
                   dask: str | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   announce: Callable[[str], None] | None = None,
                   max_memory_bytes: int | None = None, force: bool = False) -> Ranks:
        """Analyse ``paths`` (files or fsspec URLs) as the ranks of one run.

        ``workers``: rank worker processes (``None``: every usable core, capped by memory;
        small sets in-process); ``dask``: ``"local"`` (a LocalCluster of ``workers``) or a
        scheduler address (``tcp://host:8786``). ``progress(done, total)`` as ranks finish.
        Traces that are not consistent as one run (:attr:`consistent` false: world sizes,
        GPU models or clocks disagree) get no waits, lateness or straggler unless ``force``
        (``traceviz report --force-ranks``); their warnings are there either way.
        """
        from traceviz.scale import analyze_rank_paths
        from traceviz.trace.source import is_url

        return cls(analyze_rank_paths(
            [p if isinstance(p, str) and is_url(p) else Path(p) for p in paths],
            workers=workers, dask=dask,
            progress=progress, announce=announce, max_memory_bytes=max_memory_bytes,
            force=force), workers)

    @property
    def result(self) -> RanksAnalysis:
        return self._result

    @property
    def consistent(self) -> bool:
        """Whether the traces are consistent as one run (``docs/metrics.md``, "Rank traces")."""
        return self._result.consistent

    @property
    def inconsistency(self) -> tuple[str, ...]:
        """One line per failed consistency check (empty when :attr:`consistent`)."""
        return self._result.inconsistency

    @property
    def failed(self) -> tuple[FailedRank, ...]:
        """Rank traces that could not be analysed (``path``, one-line ``reason``)."""
        return self._set.failed

    @property
    def straggler(self) -> RunStraggler | None:
        """The run straggler (rank, cause, lateness), ``None`` when no rank is late."""
        return self._result.straggler

    @cached_property
    def per_rank(self) -> pd.DataFrame:
        """One row per rank: medians over the common steps, ``*_ns`` float64 (NaN: not
        measurable, e.g. comm metrics of a step with a collective mismatch)."""
        return pd.DataFrame([asdict(p) for p in self._result.per_rank])

    @cached_property
    def rank_steps(self) -> pd.DataFrame:
        """One row per rank and step: period, busy, comm wait / transfer, lateness, … (ns)."""
        return pd.DataFrame([asdict(s) for s in self._result.rank_steps])

    def analysis(self, rank: int) -> Analysis:
        """One rank's single-trace :class:`~traceviz.api.Analysis`, loaded and analysed again
        from its path (the set keeps no trace)."""
        from traceviz.api.analysis import Analysis
        from traceviz.errors import UsageError
        from traceviz.trace import load

        for info in self._result.ranks:
            if info.rank == rank:
                return Analysis.from_trace(load(info.path, workers=self._workers),
                                           workers=self._workers)
        raise UsageError(f"no rank {rank}; ranks: {[i.rank for i in self._result.ranks]}")

    def render(self, fmt: str = "html", plotlyjs: str = "inline") -> str:
        """The multi-rank report as ``traceviz report r0 r1 … --format FMT`` writes it."""
        from traceviz.report.ranks.output import render_loaded

        return render_loaded(self._result, self._set.documents, fmt, plotlyjs, self._set.failed)

    def to_json(self) -> str:
        return self.render("json")

    def to_dict(self) -> dict[str, Any]:
        import json

        return json.loads(self.to_json())

    def __repr__(self) -> str:
        st = self.straggler
        late = (f"straggler rank {st.rank} ({st.cause})" if st
                else "no straggler" if self._result.cross_rank else "not one run")
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return f"<traceviz.Ranks {len(self._result.ranks)} rank traces{failed}: {late}>"

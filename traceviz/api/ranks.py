"""``traceviz.analyze([rank0, rank1, …]) -> Ranks``: the joint analysis of a distributed run's
rank traces (definitions: ``docs/metrics.md``, "Rank traces").

A thin wrapper over :mod:`traceviz.analyze.distributed` and the multi-rank report: DataFrames
of the per-rank and per-rank-per-step metrics, the straggler, each rank's own
:class:`~traceviz.api.Analysis`, ``to_json()`` (exactly ``traceviz report r0 r1 … --format
json``) and ``render(fmt)``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from traceviz.analyze.distributed.model import RanksAnalysis, RunStraggler
    from traceviz.api.analysis import Analysis
    from traceviz.trace import Trace


class Ranks:
    """Rank traces of one run, analysed together. :attr:`result` is the frozen analysis."""

    def __init__(self, result: RanksAnalysis, traces: list[Trace]) -> None:
        self._result = result
        self._traces = traces

    @classmethod
    def from_paths(cls, paths: Sequence[str | os.PathLike]) -> Ranks:
        from traceviz.report.ranks_output import load_ranks

        result, traces = load_ranks([Path(p) for p in paths])
        return cls(result, traces)

    @property
    def result(self) -> RanksAnalysis:
        return self._result

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
        """One rank's single-trace :class:`~traceviz.api.Analysis`."""
        from traceviz.api.analysis import Analysis
        from traceviz.errors import UsageError

        for info, trace, a in zip(self._result.ranks, self._traces,
                                  self._result.per_rank_analysis, strict=True):
            if info.rank == rank:
                return Analysis(trace, a)
        raise UsageError(f"no rank {rank}; ranks: {[i.rank for i in self._result.ranks]}")

    def render(self, fmt: str = "html", plotlyjs: str = "inline") -> str:
        """The multi-rank report as ``traceviz report r0 r1 … --format FMT`` writes it."""
        from traceviz.report.ranks_output import render_loaded

        return render_loaded(self._result, self._traces, fmt, plotlyjs)

    def to_json(self) -> str:
        return self.render("json")

    def to_dict(self) -> dict[str, Any]:
        import json

        return json.loads(self.to_json())

    def __repr__(self) -> str:
        st = self.straggler
        late = f"straggler rank {st.rank} ({st.cause})" if st else "no straggler"
        return f"<traceviz.Ranks {len(self._traces)} rank traces: {late}>"

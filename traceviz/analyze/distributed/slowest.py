"""Which rank's analysis speaks for a distributed mode in comparisons: the slowest rank.

The slowest rank is the one whose median step period (``PerStep.period_ns``) is largest (the
first such rank on a tie): in a synchronous data-parallel run every rank's step ends when the
slowest one's does, so its step time is the run's.
"""

from __future__ import annotations

from collections.abc import Sequence

from traceviz.analyze.model import Analysis


def slowest_rank_index(analyses: Sequence[Analysis]) -> int:
    """Position in ``analyses`` of the slowest rank (see the module docstring)."""
    if not analyses:
        raise ValueError("no rank analyses")
    periods = [a.per_step.period_ns for a in analyses]
    return periods.index(max(periods))

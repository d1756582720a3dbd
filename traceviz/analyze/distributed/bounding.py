"""The rank that bounds a distributed mode's step: which one, its exposed communication, and
its own unprofiled host issue time (``docs/comparison.md``, "Distributed modes").

**Bounding rank.** The run's straggler (:class:`~traceviz.analyze.distributed.model.RunStraggler`:
the rank that arrives last at the matched collectives in most steps; its peers wait for it
inside their collectives, so its step sets theirs), from the multi-rank analysis or a
manifest's ``ranks_summary``. Without one (one rank, no matched collective, the traces not
consistent as one run) it is the **slowest rank**, the one whose median step period is
largest (:mod:`traceviz.analyze.distributed.slowest`). :attr:`BoundingRank.rule` says which.

**Exposed communication per step** of the bounding rank: the median, over its steps with GPU
work, of its own trace's ``exposed_comm`` (``docs/metrics.md``, "Communication, one trace":
``|M \\ C|``, the time its GPU did communication and nothing else, the whole collective kernel);
``None`` when its trace has no communication kernel. On the straggler a collective barely waits
(it arrives last), so this is close to its exposed transfer.

**Its lean parts** (:class:`~traceviz.analyze.waterfall.LeanParts`, means per step over its
steps with GPU work): the unprofiled waterfall of a distributed mode is split by them, so a
peer's wait for the bounding rank's host (inside the peer's collectives) is not counted as
exposed communication: it is that host's overhead.

**Its unprofiled split.** Lockstep paired timing (``profile --nproc``,
:mod:`traceviz.collect.paired`) records per block the step's time (the slowest rank's block)
and every rank's host issue time (``rank_baseline_issue_ms`` / ``rank_mode_issue_ms``).
:func:`bounding_paired` puts the bounding rank's issue times in place of the block's, so the
unprofiled split (:mod:`traceviz.analyze.unprofiled`) weighs the host of the rank that bounds
the step against the step's time: the baseline side reads the baseline mode's bounding rank,
the mode side the mode's. Manifests without per-rank issue times give ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from traceviz.analyze.distributed.slowest import slowest_rank_index
from traceviz.analyze.model import Analysis
from traceviz.analyze.waterfall import LeanParts, lean_parts

#: :attr:`BoundingRank.rule` values.
STRAGGLER = "straggler"
SLOWEST = "slowest period"
#: How a headline says why a rank bounds the step.
RULE_WORDS = {STRAGGLER: "the straggler: last to arrive at its collectives",
              SLOWEST: "no straggler: the largest median step period"}


@dataclass(frozen=True)
class BoundingRank:
    """The rank that bounds a mode's step (module docstring); ``exposed_comm_ns``: median per
    step, ``None`` when its trace has no communication kernel."""

    rank: int
    rule: str  # STRAGGLER or SLOWEST
    exposed_comm_ns: float | None
    #: its lean trace's per-step means, which the unprofiled waterfall is split by
    lean: LeanParts | None = field(default=None, compare=False)


def exposed_comm_per_step(a: Analysis) -> float | None:
    """Median exposed communication over the steps with GPU work (ns); ``None`` without
    communication kernels."""
    return None if a.comm is None else a.comm.median_exposed_comm_ns(
        a.steps.column("period_ns") > 0)


def bounding_rank(ranked: Sequence[tuple[int, Analysis]], straggler: int | None
                  ) -> BoundingRank | None:
    """The bounding rank of ``ranked`` (rank, its analysis): ``straggler`` when it is one of
    them, else the slowest; ``None`` without ranks."""
    if not ranked:
        return None
    by_rank = dict(ranked)
    if straggler is not None and straggler in by_rank:
        rank, rule = straggler, STRAGGLER
    else:
        rank, rule = ranked[slowest_rank_index([a for _, a in ranked])][0], SLOWEST
    return BoundingRank(rank, rule, exposed_comm_per_step(by_rank[rank]),
                        lean_parts(by_rank[rank]) if _has_gpu_steps(by_rank[rank]) else None)


def _has_gpu_steps(a: Analysis) -> bool:
    return bool((a.steps.column("period_ns") > 0).any())


def _column(rows: Any, rank: int, n: int) -> list[float] | None:
    """Rank ``rank``'s value of each of ``n`` per-block rows (``None`` when malformed)."""
    if not isinstance(rows, list) or len(rows) != n:
        return None
    out = []
    for row in rows:
        if not isinstance(row, list) or not 0 <= rank < len(row):
            return None
        value = row[rank]
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        out.append(float(value))
    return out


def bounding_paired(paired: dict[str, Any], base_rank: int, mode_rank: int
                    ) -> dict[str, Any] | None:
    """``paired`` with the host issue times of the bounding ranks (baseline side: rank
    ``base_rank``, mode side: ``mode_rank``) in place of each block's; ``None`` when the block
    has no per-rank issue times for them (module docstring)."""
    n = paired.get("pairs")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    base = _column(paired.get("rank_baseline_issue_ms"), base_rank, n)
    mode = _column(paired.get("rank_mode_issue_ms"), mode_rank, n)
    if base is None or mode is None:
        return None
    return {**paired, "baseline_issue_ms": base, "mode_issue_ms": mode}


def _exposed(ns: float | None) -> str:
    return "none (no communication kernels)" if ns is None else f"{ns / 1000:,.1f} µs/step"


def headline_clause(base: BoundingRank, mode: BoundingRank, exposed: bool = True) -> str:
    """"rank 1 bounds the step (the straggler: …); exposed communication on it 60.0 µs/step →
    20.0 µs/step (median over steps, its own trace)". ``exposed=False``: the headline's
    waterfall already gives exposed communication, from these ranks' traces, so the clause
    says that instead of a second number for it."""
    who = f"rank {mode.rank} bounds the step ({RULE_WORDS[mode.rule]}"
    if (base.rank, base.rule) != (mode.rank, mode.rule):
        who += f"; baseline: rank {base.rank}, {base.rule}"
    if not exposed:
        return f"{who}); the parts above are from its trace"
    if base.exposed_comm_ns is None and mode.exposed_comm_ns is None:
        return f"{who}); no communication kernels on it"
    return (f"{who}); exposed communication on it {_exposed(base.exposed_comm_ns)} → "
            f"{_exposed(mode.exposed_comm_ns)} (median over steps, its own trace)")


def as_evidence(base: BoundingRank, mode: BoundingRank) -> dict[str, Any]:
    """The clause's numbers as data (baseline, mode): for the headline's JSON and the launch
    verdict's evidence."""
    return {"bounding_rank": [base.rank, mode.rank],
            "bounding_rule": [base.rule, mode.rule],
            "exposed_comm_us_per_step": [None if x.exposed_comm_ns is None
                                         else x.exposed_comm_ns / 1000 for x in (base, mode)]}

"""The rank that bounds a distributed mode's step: which one, its exposed communication, and
its own unprofiled host issue time (``docs/comparison.md``, "Distributed modes").

**Bounding rank.** The run's straggler (:class:`~traceviz.analyze.distributed.model.RunStraggler`:
the rank that arrives last at the matched collectives in most steps; its peers wait for it
inside their collectives, so its step sets theirs), from the multi-rank analysis or a
manifest's ``ranks_summary``. Without one (one rank, no matched collective, the traces not
consistent as one run) it is the **slowest rank**, the one whose median step period is
largest (:mod:`traceviz.analyze.distributed.slowest`). :attr:`BoundingRank.rule` says which.

**A host-caused straggler is confirmed without the profiler.** Its lateness is measured in the
profiled steps, where the profiler's own cost differs per rank: on symmetric ranks one rank can
be milliseconds late in every profiled step and alike without the profiler. Where the lockstep
blocks record every rank's host issue time, :func:`confirm_stragglers` keeps a straggler whose
cause is ``host`` only when :func:`straggler_check` confirms it on that side's blocks (the
baseline side of the mode's blocks for the baseline's straggler, the mode side for the mode's);
otherwise that side's bounding rank is the slowest rank, as without a straggler, and
:attr:`BoundingRank.late_under_profiler` names the rank the profiled rule named. Without the
per-rank lists (older manifests, rank traces given directly) and for a ``gpu`` cause (its host
issue time need not differ: one rank's compute ×2) the profiled rule stands.
:attr:`BoundingRank.named_by` says which rule named it.

**A straggler the profiled steps did not show is named without the profiler.** Where no rank
was late across the profiled steps, the rank with the largest unprofiled host issue time on a
side is that side's straggler when :func:`straggler_check` confirms it
(:attr:`BoundingRank.late_without_profiler_only`); so is it where the profiled straggler was
another rank that the check did not confirm. The profiled steps can hide a host delay
that the unprofiled blocks show: 4 × H200, calibration cell ``straggler-nproc4`` side B in
``cudagraph`` (rank 1's host +1 ms per step before each replay), every rank's profiled period
570 µs and no rank late, while without the profiler rank 1 issued 1.03 ms per step against its
peers' 0.74 ms.

**Exposed communication per step** of the bounding rank: the median, over its steps with GPU
work, of its own trace's ``exposed_comm`` (``docs/metrics.md``, "Communication, one trace":
``|M \\ C|``, the time its GPU did communication and nothing else, the whole collective kernel);
``None`` when its trace has no communication kernel. On the straggler a collective barely waits
(it arrives last), so this is close to its exposed transfer.

**Its lean parts** (:class:`~traceviz.analyze.compare.waterfall.LeanParts`, means per step over its
steps with GPU work): the unprofiled waterfall of a distributed mode is split by them, so a
peer's wait for the bounding rank's host (inside the peer's collectives) is not counted as
exposed communication: it is that host's overhead.

**Its unprofiled split.** Lockstep paired timing (``profile --nproc``,
:mod:`traceviz.collect.paired`) records per block the step's time (the slowest rank's block)
and every rank's host issue time (``rank_baseline_issue_ms`` / ``rank_mode_issue_ms``).
:func:`bounding_paired` puts the bounding rank's issue times in place of the block's, so the
unprofiled split (:mod:`traceviz.analyze.compare.unprofiled`) weighs the host of the rank that
bounds the step against the step's time: the baseline side reads the baseline mode's bounding rank,
the mode side the mode's. Manifests without per-rank issue times give ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from traceviz.analyze.compare.waterfall import LeanParts, lean_parts
from traceviz.analyze.distributed.slowest import slowest_rank_index
from traceviz.analyze.model import Analysis
from traceviz.analyze.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    resample_indices,
)

#: :attr:`BoundingRank.rule` values.
STRAGGLER = "straggler"
SLOWEST = "slowest period"
#: How a headline says why a rank bounds the step.
RULE_WORDS = {STRAGGLER: "the straggler: last to arrive at its collectives",
              SLOWEST: "no straggler: the largest median step period"}
#: :attr:`BoundingRank.named_by` values: the straggler's lateness in the profiled steps
#: (:func:`~traceviz.analyze.distributed.metrics.lateness_significant`) alone, or that and its
#: unprofiled host issue time (:func:`straggler_check`).
PROFILED_LATENESS = "profiled lateness"
UNPROFILED_ISSUE = "unprofiled issue time"
#: The sides of a lockstep ``paired`` block.
SIDES = ("baseline", "mode")


@dataclass(frozen=True)
class StragglerCheck:
    """A profiled straggler's host issue time against its peers', without the profiler, on one
    side of a mode's lockstep blocks (:func:`straggler_check`; ms per step).

    ``excess_ms``: the median over the blocks of (its issue time − the median of the other
    ranks' issue times in that block), with its bootstrap CI (``excess_low_ms``,
    ``excess_high_ms``); ``step_ms``: the median of the side's block times (the step's, the
    slowest rank's); ``issue_ms``: every rank's median issue time over the blocks."""

    rank: int
    issue_ms: tuple[float, ...]
    excess_ms: float
    excess_low_ms: float
    excess_high_ms: float
    step_ms: float
    min_share: float

    @property
    def confirmed(self) -> bool:
        """The excess is at least ``min_share`` of the step and its CI lies above 0."""
        return self.excess_ms >= self.min_share * self.step_ms and self.excess_low_ms > 0

    def as_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "issue_ms_per_rank": list(self.issue_ms),
                "excess_ms": self.excess_ms,
                "excess_ci_ms": [self.excess_low_ms, self.excess_high_ms],
                "step_ms": self.step_ms, "min_share": self.min_share,
                "confirmed": self.confirmed}


@dataclass(frozen=True)
class BoundingRank:
    """The rank that bounds a mode's step (module docstring); ``exposed_comm_ns``: median per
    step, ``None`` when its trace has no communication kernel."""

    rank: int
    rule: str  # STRAGGLER or SLOWEST
    exposed_comm_ns: float | None
    #: its lean trace's per-step means, which the unprofiled waterfall is split by
    lean: LeanParts | None = field(default=None, compare=False)
    #: the unprofiled check of a host-caused straggler (:func:`confirm_stragglers`); ``None``:
    #: not checked
    check: StragglerCheck | None = None
    #: rule SLOWEST: the rank the profiled rule named, which the check did not confirm
    late_under_profiler: int | None = None
    #: rule STRAGGLER: the bounding rank were there no straggler (the slowest rank)
    without_straggler: BoundingRank | None = field(default=None, compare=False, repr=False)
    #: rule STRAGGLER: named by the unprofiled issue times alone, not late at its collectives
    #: in the profiled steps (:func:`confirm_stragglers`)
    late_without_profiler_only: bool = False
    #: every rank of the run as a bounding rank of its own (rule SLOWEST), which the unprofiled
    #: check may name (:func:`bounding_rank`)
    others: tuple[BoundingRank, ...] = field(default=(), compare=False, repr=False)

    @property
    def named_by(self) -> str | None:
        """Which rule named the straggler: :data:`UNPROFILED_ISSUE` when the unprofiled check
        confirmed it, :data:`PROFILED_LATENESS` when none was made; ``None`` without one."""
        if self.rule != STRAGGLER:
            return None
        return UNPROFILED_ISSUE if self.check is not None else PROFILED_LATENESS


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
    own = {r: _of(r, SLOWEST, a) for r, a in ranked}
    others = tuple(own.values())
    slowest = ranked[slowest_rank_index([a for _, a in ranked])][0]
    without = replace(own[slowest], others=others)
    if straggler is None or straggler not in own:
        return without
    return replace(own[straggler], rule=STRAGGLER, without_straggler=without, others=others)


def _of(rank: int, rule: str, a: Analysis) -> BoundingRank:
    return BoundingRank(rank, rule, exposed_comm_per_step(a),
                        lean_parts(a) if _has_gpu_steps(a) else None)


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


def straggler_check(paired: dict[str, Any], side: str, rank: int, min_share: float
                    ) -> StragglerCheck | None:
    """Rank ``rank``'s host issue time against its peers' on ``side`` (``baseline`` /
    ``mode``) of a lockstep ``paired`` block (:class:`StragglerCheck`); ``None`` when the block
    has no usable per-rank issue times (``rank_<side>_issue_ms``: one row per block of every
    rank's ms per step, at least two ranks) or block times. The CI: the percentile bootstrap of
    the median over the block's own resamples (:func:`~traceviz.analyze.stats.
    resample_indices` with its ``resamples``, ``seed`` and ``level``, as the speed-up's).

    Calibration (``tests/test_straggler_confirmation.py``: 15 blocks; 2 or 4 ranks whose host
    issues a step of S0 with a per-rank offset for the run, N(0, τ·S0), and per-rank, per-block
    noise N(0, σ·S0), the straggler's D longer; the step the slowest rank's issue time + 2 %;
    rates over 100 seeds), with ``min_share`` = ``straggler_min_host_share`` (0.15): D = 50 %
    and 200 % of S0 with σ = 5–20 % and τ = 0 or 5 % are confirmed in at least 99 %, D = 30 %
    with σ ≤ 10 % in at least 90 %; symmetric ranks (D = 0) are named in at most 7 % (2 ranks,
    σ = 20 %, τ = 5 %), at a share of 0.05 in up to 59 % (4 ranks, τ = 5 %). A delay of 10 %
    of S0 is not named: it is within what identical processes differ by. Measured: symmetric
    runs put their slowest rank's host issue 6.4 % and 14 % of the step above its peer's
    (``reports/ddp_mlp`` max-autotune, ``reports/tp_mlp`` cudagraph, 2 × H200) and 7.5 % above
    its peers' median (calibration cell ``straggler-nproc4`` side A, eager, 4 × H200), none
    named at 0.15; injected host delays read 27 % (``straggler-nproc4`` side B, eager: 1 ms on
    a 3.3 ms step) and 50–94 % (``reports/ddp_mlp_straggler``), all named.
    """
    n = _count(paired.get("pairs"))
    blocks = paired.get(f"{side}_block_ms")
    issue = _matrix(paired.get(f"rank_{side}_issue_ms"), n)
    step = _matrix([[x] for x in blocks], n) if isinstance(blocks, list) else None
    if issue is None or step is None or issue.shape[1] < 2 or not 0 <= rank < issue.shape[1]:
        return None
    excess = issue[:, rank] - np.median(np.delete(issue, rank, axis=1), axis=1)
    level = paired.get("level")
    level = float(level) if _number(level) and 0 < level < 1 else DEFAULT_LEVEL
    seed = paired.get("seed")
    idx = resample_indices(n, _count(paired.get("resamples")) or DEFAULT_RESAMPLES,
                           seed if isinstance(seed, int) and not isinstance(seed, bool)
                           else DEFAULT_SEED)
    low, high = percentile_interval(np.median(excess[idx], axis=1), level)
    return StragglerCheck(rank, tuple(float(x) for x in np.median(issue, axis=0)),
                          float(np.median(excess)), low, high, float(np.median(step)),
                          min_share)


def _count(x: Any) -> int:
    """``x`` when it is a positive int, else 0."""
    return x if isinstance(x, int) and not isinstance(x, bool) and x > 0 else 0


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _matrix(rows: Any, n: int) -> np.ndarray | None:
    """``n`` (> 0) rows of equally many finite numbers ≥ 0 as an ``(n, k)`` array, else
    ``None``."""
    if not isinstance(rows, list) or n <= 0 or len(rows) != n:
        return None
    if not all(isinstance(r, list) and r and len(r) == len(rows[0]) for r in rows):
        return None
    if not all(_number(x) and x >= 0 for r in rows for x in r):
        return None
    return np.asarray(rows, dtype=np.float64)


def confirm_stragglers(paired: Any, bounding: tuple[BoundingRank, BoundingRank],
                       causes: tuple[str | None, str | None], min_share: float
                       ) -> tuple[BoundingRank, BoundingRank]:
    """The bounding ranks (baseline's, mode's) of a mode whose lockstep block is ``paired``
    (its manifest's; anything else: none), each host-caused straggler (``causes``: the
    stragglers' causes, baseline's and mode's) kept when :func:`straggler_check` confirms it
    on its side, else replaced by the slowest rank (module docstring)."""
    base, mode = (_confirmed(paired, side, b, cause, min_share)
                  for side, b, cause in zip(SIDES, bounding, causes, strict=True))
    return base, mode


def _confirmed(paired: Any, side: str, b: BoundingRank, cause: str | None,
               min_share: float) -> BoundingRank:
    if not isinstance(paired, dict):
        return b
    if b.rule != STRAGGLER:
        return _nominated(paired, side, b, min_share)
    if cause != "host":
        return b
    check = straggler_check(paired, side, b.rank, min_share)
    if check is None:
        return b
    if check.confirmed:
        return replace(b, check=check)
    # a BoundingRank built without its fallback (by hand) keeps its rank
    fallback = b.without_straggler or replace(b, rule=SLOWEST)
    unconfirmed = replace(fallback, check=check, late_under_profiler=b.rank,
                          without_straggler=None)
    nominated = _nominated(paired, side, unconfirmed, min_share)
    return unconfirmed if nominated is unconfirmed else replace(
        nominated, late_under_profiler=b.rank)


def _nominated(paired: dict[str, Any], side: str, b: BoundingRank,
               min_share: float) -> BoundingRank:
    """Without a profiled straggler (or with one the check did not confirm): the rank whose
    unprofiled host issue time per step is the largest on ``side``, named the straggler when
    :func:`straggler_check` confirms it (module docstring), else ``b`` itself."""
    issue = _matrix(paired.get(f"rank_{side}_issue_ms"), _count(paired.get("pairs")))
    if issue is None or issue.shape[1] < 2:
        return b
    rank = int(np.argmax(np.median(issue, axis=0)))
    check = straggler_check(paired, side, rank, min_share)
    own = next((o for o in b.others if o.rank == rank), None)
    if check is None or not check.confirmed or own is None:
        return b
    return replace(own, rule=STRAGGLER, check=check, late_without_profiler_only=True,
                   without_straggler=b, others=b.others)


def _per_step(ms: float) -> str:
    return f"{ms:,.2f} ms/step" if abs(ms) >= 0.1 else f"{ms * 1000:,.1f} µs/step"


def _why(b: BoundingRank) -> str:
    """Why ``b`` bounds the step, in a headline's words."""
    if b.late_without_profiler_only and b.check is not None:
        return (f"the straggler without the profiler: its host issue is "
                f"{_per_step(b.check.excess_ms)} above its peers' (not late at its "
                "collectives in the profiled steps"
                + ("" if b.late_under_profiler is None else
                   f"; rank {b.late_under_profiler} was, under the profiler only") + ")")
    if b.late_under_profiler is not None:
        return ("the largest median step period; no straggler without the profiler: rank "
                f"{b.late_under_profiler} was late under the profiler only")
    if b.rule == STRAGGLER and b.check is not None:
        return (f"{RULE_WORDS[STRAGGLER]}; without the profiler its host issue is "
                f"{_per_step(b.check.excess_ms)} above its peers'")
    return RULE_WORDS[b.rule]


def _exposed(ns: float | None) -> str:
    return "none (no communication kernels)" if ns is None else f"{ns / 1000:,.1f} µs/step"


def headline_clause(base: BoundingRank, mode: BoundingRank, exposed: bool = True) -> str:
    """"rank 1 bounds the step (the straggler: …); exposed communication on it 60.0 µs/step →
    20.0 µs/step (median over steps, its own trace)"; a straggler the unprofiled check
    confirmed adds its excess issue time ("; without the profiler its host issue is 3.45
    ms/step above its peers'"), one it did not confirm reads "rank 0 bounds the step (the
    largest median step period; no straggler without the profiler: rank 1 was late under the
    profiler only)"; the baseline's rank and rule follow when they differ (its check is in
    :func:`as_evidence`). ``exposed=False``: the headline's
    waterfall already gives exposed communication, from these ranks' traces, so the clause
    says that instead of a second number for it."""
    who = f"rank {mode.rank} bounds the step ({_why(mode)}"
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
    verdict's evidence. ``straggler_rule``: :attr:`BoundingRank.named_by`;
    ``late_under_profiler_only``: :attr:`BoundingRank.late_under_profiler`;
    ``late_without_profiler_only``: the straggler's rank where the unprofiled issue times alone
    named it (:attr:`BoundingRank.late_without_profiler_only`), else ``None``;
    ``straggler_check``: :meth:`StragglerCheck.as_dict` (ms per step), ``None`` unchecked."""
    both = (base, mode)
    return {"bounding_rank": [base.rank, mode.rank],
            "bounding_rule": [base.rule, mode.rule],
            "exposed_comm_us_per_step": [None if x.exposed_comm_ns is None
                                         else x.exposed_comm_ns / 1000 for x in both],
            "straggler_rule": [x.named_by for x in both],
            "late_under_profiler_only": [x.late_under_profiler for x in both],
            "late_without_profiler_only": [x.rank if x.late_without_profiler_only else None
                                           for x in both],
            "straggler_check": [None if x.check is None else x.check.as_dict() for x in both]}

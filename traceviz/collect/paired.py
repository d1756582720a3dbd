"""Paired A/B timing: the baseline step and the mode's step timed in alternation, one process.

Timing each mode in its own process minutes apart lets clock, thermal and host drift land in
the comparison. Here the mode's child also builds the baseline (eager) step and times blocks of
both, interleaved in ABBA order: pair 0 runs baseline then mode, pair 1 mode then baseline, and
so on, so a drift that is linear over a pair's two blocks adds the same to both sides on
average. A **block** is ``iters`` back-to-back steps between two clock reads
(:class:`~traceviz.collect.timing.StepClock`: CUDA events on CUDA, ``perf_counter_ns`` on CPU),
sized so it lasts at least ``min_repeat_ms``; its value is milliseconds per step. Each block
also records the host's issue time per step (:meth:`~traceviz.collect.timing.StepClock.time_block`),
the unprofiled half of the host/GPU split (:mod:`traceviz.analyze.compare.unprofiled`).

Pairs are added until at least ``min_pairs`` exist and the bootstrap CI of the median ratio
(:func:`traceviz.analyze.stats.paired_speedup`) is no wider than ``± target_half_width`` of
the speed-up (checked every ``check_every`` pairs), or the ``budget_s`` wall-clock budget is
spent, or ``max_pairs`` is reached. The result is the manifest's ``paired`` block
(``docs/comparison.md``).

**Ranks in lockstep** (``profile --nproc``, a :class:`Lockstep`): every rank times the same
blocks at the same time — the steps per block are the largest any rank wants, a barrier comes
before each block, and after each pair the ranks exchange their block and issue times. A
block's time is the **slowest rank's** (the step ends when the last rank's does); the issue
time is that rank's too. The stopping rule then sees the same numbers on every rank (the
elapsed time is the largest), so every rank stops after the same pair. Each rank's own block
times and host issue times are kept (``rank_baseline_block_ms`` / ``rank_mode_block_ms``,
``rank_baseline_issue_ms`` / ``rank_mode_issue_ms``: per pair, per rank), so the comparison
can read the host/GPU split of the rank that bounds the step
(:mod:`traceviz.analyze.distributed.bounding`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from traceviz.analyze.stats import paired_speedup
from traceviz.collect.timing import StepClock, iterations_for

#: Order of the two blocks in each pair, repeating: baseline (A) and mode (B).
ORDER = "ABBA"


@dataclass(frozen=True)
class PairedSettings:
    """When paired timing stops; block sizing. Times in seconds / milliseconds as named."""

    budget_s: float = 30.0
    min_pairs: int = 15
    max_pairs: int = 400
    target_half_width: float = 0.05
    check_every: int = 5
    min_repeat_ms: float = 100.0
    max_iters: int = 2000
    warmup: int = 20

    def to_dict(self) -> dict[str, Any]:
        """The settings as recorded in the manifest."""
        return dict(self.__dict__)


class Lockstep(Protocol):
    """The ranks of one distributed mode, timing together (module docstring)."""

    def barrier(self) -> None:
        """Return once every rank has called it."""

    def gather(self, values: list[float]) -> list[list[float]]:
        """Every rank's ``values`` (same length on each), in rank order, on every rank."""


def _slowest(per_rank: list[list[float]], period: int, issue: int) -> tuple[float, float, int]:
    """``(period, issue, rank)`` of the rank whose ``per_rank[r][period]`` is largest (lowest
    rank on a tie)."""
    rank = max(range(len(per_rank)), key=lambda r: (per_rank[r][period], -r))
    return per_rank[rank][period], per_rank[rank][issue], rank


def _stop_reason(
    pairs: int, elapsed_s: float, settings: PairedSettings, half_width: float | None
) -> str | None:
    """Why to stop after ``pairs`` pairs, or ``None`` to go on."""
    if half_width is not None and half_width <= settings.target_half_width:
        return "converged"
    if pairs >= settings.max_pairs:
        return "max_pairs"
    if elapsed_s >= settings.budget_s and pairs >= 2:
        return "budget"
    return None


def measure_paired(
    baseline: Callable[[], Any],
    mode: Callable[[], Any],
    clock: StepClock,
    settings: PairedSettings,
    *,
    baseline_name: str = "eager",
    now: Callable[[], float] = time.monotonic,
    lockstep: Lockstep | None = None,
) -> dict[str, Any]:
    """Warm both steps, then time ABBA pairs until the CI is tight or the budget is spent.

    Returns the manifest's ``paired`` block: the per-pair block times and host issue times
    (ms per step), the steps per block, the speed-up estimate with its CI, the pair count and
    why it stopped. ``lockstep``: time with the other ranks (module docstring); the block
    adds ``ranks``, ``rank_baseline_block_ms``, ``rank_mode_block_ms``,
    ``rank_baseline_issue_ms``, ``rank_mode_issue_ms`` and ``slowest_rank_blocks`` (per rank,
    how many blocks it was the slowest in).
    """
    for _ in range(settings.warmup):
        baseline()
        mode()
    iters_base = iterations_for(clock.time_ms(baseline, 3), settings.min_repeat_ms,
                                settings.max_iters)
    iters_mode = iterations_for(clock.time_ms(mode, 3), settings.min_repeat_ms,
                                settings.max_iters)
    if lockstep is not None:  # every rank runs as many steps per block
        wanted = lockstep.gather([float(iters_base), float(iters_mode)])
        iters_base, iters_mode = (int(max(w[i] for w in wanted)) for i in (0, 1))
    sync = lockstep.barrier if lockstep is not None else (lambda: None)
    base_ms: list[float] = []
    mode_ms: list[float] = []
    base_issue: list[float] = []
    mode_issue: list[float] = []
    rank_base: list[list[float]] = []
    rank_mode: list[list[float]] = []
    rank_base_issue: list[list[float]] = []
    rank_mode_issue: list[list[float]] = []
    slowest_count: dict[int, int] = {}
    begin = now()
    stopped = None
    estimate = None
    while stopped is None:
        first, second = ((baseline, iters_base), (mode, iters_mode))
        if len(base_ms) % 2:  # B then A
            first, second = second, first
        sync()
        x = clock.time_block(*first)
        sync()
        y = clock.time_block(*second)
        a, b = (x, y) if len(base_ms) % 2 == 0 else (y, x)
        elapsed = now() - begin
        if lockstep is None:
            base_ms.append(a.period_ms)
            mode_ms.append(b.period_ms)
            base_issue.append(a.issue_ms)
            mode_issue.append(b.issue_ms)
        else:
            per_rank = lockstep.gather([a.period_ms, a.issue_ms, b.period_ms, b.issue_ms,
                                        elapsed])
            for period, issue, ms, issues, rows, issue_rows in (
                    (0, 1, base_ms, base_issue, rank_base, rank_base_issue),
                    (2, 3, mode_ms, mode_issue, rank_mode, rank_mode_issue)):
                p, i, r = _slowest(per_rank, period, issue)
                ms.append(p)
                issues.append(i)
                rows.append([v[period] for v in per_rank])
                issue_rows.append([v[issue] for v in per_rank])
                slowest_count[r] = slowest_count.get(r, 0) + 1
            elapsed = max(v[4] for v in per_rank)
        pairs = len(base_ms)
        half_width = None
        since_min = pairs - settings.min_pairs
        if since_min >= 0 and since_min % settings.check_every == 0:
            estimate = paired_speedup(base_ms, mode_ms)
            half_width = estimate.half_width
        stopped = _stop_reason(pairs, elapsed, settings, half_width)
    if estimate is None or estimate.pairs != len(base_ms):
        estimate = paired_speedup(base_ms, mode_ms)
    return {
        "baseline": baseline_name,
        "order": ORDER,
        "pairs": len(base_ms),
        "baseline_block_ms": base_ms,
        "mode_block_ms": mode_ms,
        "baseline_issue_ms": base_issue,
        "mode_issue_ms": mode_issue,
        "iters_baseline": iters_base,
        "iters_mode": iters_mode,
        **estimate.as_dict(),
        "stopped": stopped,
        "budget_s": settings.budget_s,
        "elapsed_s": now() - begin,
        **({} if lockstep is None else {
            "block_time": "slowest rank",
            "ranks": len(rank_base[0]) if rank_base else 0,
            "rank_baseline_block_ms": rank_base,
            "rank_mode_block_ms": rank_mode,
            "rank_baseline_issue_ms": rank_base_issue,
            "rank_mode_issue_ms": rank_mode_issue,
            "slowest_rank_blocks": {str(r): n for r, n in sorted(slowest_count.items())},
        }),
    }

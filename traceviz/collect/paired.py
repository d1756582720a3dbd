"""Paired A/B timing: the baseline step and the mode's step timed in alternation, one process.

Timing each mode in its own process minutes apart lets clock, thermal and host drift land in
the comparison. Here the mode's child also builds the baseline (eager) step and times blocks of
both, interleaved in ABBA order: pair 0 runs baseline then mode, pair 1 mode then baseline, and
so on, so a drift that is linear over a pair's two blocks adds the same to both sides on
average. A **block** is ``iters`` back-to-back steps between two clock reads
(:class:`~traceviz.collect.timing.StepClock`: CUDA events on CUDA, ``perf_counter_ns`` on CPU),
sized so it lasts at least ``min_repeat_ms``; its value is milliseconds per step. Each block
also records the host's issue time per step (:meth:`~traceviz.collect.timing.StepClock.time_block`),
the unprofiled half of the host/GPU split (:mod:`traceviz.analyze.unprofiled`).

Pairs are added until at least ``min_pairs`` exist and the bootstrap CI of the median ratio
(:func:`traceviz.analyze.stats.paired_speedup`) is no wider than ``± target_half_width`` of
the speed-up (checked every ``check_every`` pairs), or the ``budget_s`` wall-clock budget is
spent, or ``max_pairs`` is reached. The result is the manifest's ``paired`` block
(``docs/comparison.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
) -> dict[str, Any]:
    """Warm both steps, then time ABBA pairs until the CI is tight or the budget is spent.

    Returns the manifest's ``paired`` block: the per-pair block times and host issue times
    (ms per step), the steps per block, the speed-up estimate with its CI, the pair count and
    why it stopped.
    """
    for _ in range(settings.warmup):
        baseline()
        mode()
    iters_base = iterations_for(clock.time_ms(baseline, 3), settings.min_repeat_ms,
                                settings.max_iters)
    iters_mode = iterations_for(clock.time_ms(mode, 3), settings.min_repeat_ms,
                                settings.max_iters)
    base_ms: list[float] = []
    mode_ms: list[float] = []
    base_issue: list[float] = []
    mode_issue: list[float] = []
    begin = now()
    stopped = None
    estimate = None
    while stopped is None:
        if len(base_ms) % 2 == 0:  # A then B
            a = clock.time_block(baseline, iters_base)
            b = clock.time_block(mode, iters_mode)
        else:  # B then A
            b = clock.time_block(mode, iters_mode)
            a = clock.time_block(baseline, iters_base)
        base_ms.append(a.period_ms)
        mode_ms.append(b.period_ms)
        base_issue.append(a.issue_ms)
        mode_issue.append(b.issue_ms)
        pairs = len(base_ms)
        half_width = None
        since_min = pairs - settings.min_pairs
        if since_min >= 0 and since_min % settings.check_every == 0:
            estimate = paired_speedup(base_ms, mode_ms)
            half_width = estimate.half_width
        elapsed = now() - begin
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
    }

"""Steady-state step times measured without the profiler.

On CUDA a repeat is timed with a pair of CUDA events around ``iters`` back-to-back steps (no
synchronisation in between, so launch overhead and GPU time overlap as in a real loop); on CPU
with :func:`time.perf_counter_ns`. Every number here is milliseconds per step.

**Steady state on CUDA: one lead-in step.** Each timed block starts from a synchronized device,
so its first step finds the GPU idle: the host's work before the first launch (a data loader,
Python, a busy-wait) is GPU idle time that a running loop hides, and a block of ``n`` steps
would add it, divided by ``n``, to every step. So each block runs one untimed step first and
records its start event after it: the start fires when the GPU finishes the lead-in step, by
when the host has already queued the next one where the loop is GPU-bound, and the block's
``n`` steps end when the GPU finishes the last. Calibration (H200, ``docs/calibration.md``):
a 9.5 ms host busy-wait on a GPU-bound 19.0 ms step with blocks of 6 steps read +1.9 ms per step
(9.5 / 6 + the drain) without the lead-in, where a steady loop shows none.

A block's **host issue time** (:meth:`StepClock.time_block`) is the CPU wall time
(``perf_counter_ns``) from just before the first call to the return of the last one, before
the block's synchronize: how long the host took to issue the block's work. On CPU the device
is the host, so issue time and step time are the same measurement.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from traceviz.vocab import NOISY_SPREAD

if TYPE_CHECKING:
    from traceviz.collect.paired import Lockstep

#: Seconds of back-to-back steps every warm-up on CUDA lasts at least (besides its step count).
#: After the GPU has idled (as between two child processes), a small step runs slower than its
#: steady state for a while: ``benchmarks/warm_ramp.py`` measured ``tiny_transformer``'s eager
#: step at 1.2-1.5 ms for the first 2.0 s after 5 s idle, then 0.65-0.75 ms (H100,
#: ``benchmarks/results/warm_ramp_h100.json``), with the SM clock at 1980 MHz throughout.
WARM_MIN_S = 4.0


def warm_min_s(cuda: bool) -> float:
    """The warm-up's minimum seconds: :data:`WARM_MIN_S` on CUDA, none on CPU (no ramp)."""
    return WARM_MIN_S if cuda else 0.0


@dataclass(frozen=True)
class TimingSummary:
    """Per-step times over repeats, in milliseconds."""

    median_ms: float
    p10_ms: float
    p90_ms: float
    repeats: int
    iters_per_repeat: int
    noisy: bool
    spread: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the manifest's key names."""
        return asdict(self)


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100] of an ascending, non-empty list."""
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(step_ms: list[float], iters_per_repeat: int) -> TimingSummary:
    """Median, p10, p90, spread and noise flag of per-repeat mean step times (ms)."""
    ordered = sorted(step_ms)
    median = percentile(ordered, 50)
    p10 = percentile(ordered, 10)
    p90 = percentile(ordered, 90)
    spread = (p90 - p10) / median if median > 0 else 0.0
    return TimingSummary(
        median_ms=median,
        p10_ms=p10,
        p90_ms=p90,
        repeats=len(step_ms),
        iters_per_repeat=iters_per_repeat,
        noisy=spread > NOISY_SPREAD,
        spread=spread,
    )


def iterations_for(estimate_ms: float, min_repeat_ms: float, max_iters: int) -> int:
    """Steps per repeat so that one repeat lasts at least ``min_repeat_ms`` (3..max_iters)."""
    if estimate_ms <= 0:
        return max_iters
    return max(3, min(max_iters, math.ceil(min_repeat_ms / estimate_ms)))


@dataclass(frozen=True)
class BlockTime:
    """One timed block, per step in milliseconds.

    ``period_ms``: the device's time per step (CUDA events around the block on CUDA; the wall
    time on CPU). ``issue_ms``: the host's issue time per step (module doc).
    """

    period_ms: float
    issue_ms: float


class StepClock:
    """Times a run of steps on one device: CUDA events on CUDA, perf_counter_ns on CPU."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda

    def sync(self) -> None:
        """Wait for the device (nothing to wait for on CPU)."""
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    def time_block(self, call: Callable[[], Any], iters: int) -> BlockTime:
        """The period and host issue time per step of ``iters`` back-to-back calls (on CUDA
        after one untimed lead-in call; module doc)."""
        if self.cuda:
            import torch

            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            call()  # the lead-in step (module doc)
            start.record()
            begin = time.perf_counter_ns()
            for _ in range(iters):
                call()
            issued = time.perf_counter_ns()
            end.record()
            end.synchronize()
            return BlockTime(start.elapsed_time(end) / iters, (issued - begin) / 1e6 / iters)
        begin = time.perf_counter_ns()
        for _ in range(iters):
            call()
        wall = (time.perf_counter_ns() - begin) / 1e6 / iters
        return BlockTime(wall, wall)

    def time_ms(self, call: Callable[[], Any], iters: int) -> float:
        """Mean milliseconds per step over ``iters`` back-to-back calls of ``call``."""
        return self.time_block(call, iters).period_ms


def warm(call: Callable[[], Any], steps: int, sync: Callable[[], None],
         min_s: float | None = None) -> int:
    """Run ``call`` at least ``steps`` times and for at least ``min_s`` seconds (default
    :data:`WARM_MIN_S`; checked after each ``sync``, every 10 steps once the count is reached);
    return the number of calls."""
    if min_s is None:
        min_s = WARM_MIN_S
    begin = time.perf_counter()
    done = 0
    for _ in range(steps):
        call()
        done += 1
    sync()
    while time.perf_counter() - begin < min_s:
        for _ in range(10):
            call()
        done += 10
        sync()
    return done


def measure(
    call: Callable[[], Any],
    clock: StepClock,
    *,
    warmup: int,
    repeats: int,
    min_repeat_ms: float,
    max_iters: int,
    min_warm_s: float | None = None,
    lockstep: Lockstep | None = None,
) -> TimingSummary:
    """Warm up (:func:`warm`: ``warmup`` steps and at least ``min_warm_s`` seconds, by default
    :func:`warm_min_s`), size the repeats from a short estimate, then time ``repeats`` repeats.

    ``lockstep``: the ranks of one distributed mode time together; every rank times the
    largest steps per repeat any rank wants (DDP needs as many steps on each), a barrier before
    each repeat.
    """
    warm(call, warmup, clock.sync, warm_min_s(clock.cuda) if min_warm_s is None else min_warm_s)
    estimate = clock.time_ms(call, 3)
    iters = iterations_for(estimate, min_repeat_ms, max_iters)
    if lockstep is not None:
        iters = int(max(wanted[0] for wanted in lockstep.gather([float(iters)])))
    step_ms = []
    for _ in range(repeats):
        if lockstep is not None:
            lockstep.barrier()
        step_ms.append(clock.time_ms(call, iters))
    return summarize(step_ms, iters)

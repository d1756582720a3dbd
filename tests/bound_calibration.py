"""Calibration cells of the unprofiled bound call
(:func:`traceviz.analyze.compare.unprofiled.bound_call`).

A model of one timed block (:meth:`traceviz.collect.timing.StepClock.time_block`) of ``n``
steps, ``n`` sized as the paired protocol sizes it (:func:`traceviz.collect.timing.
iterations_for`: at least 100 ms a block, 3 to 2,000 steps). Per step the host needs ``h`` to
issue ``launches`` launches and the GPU ``g`` to run them back to back (``compute`` of it busy,
the rest gaps between kernels); per block each is drawn with lognormal noise (3 %), and the
block's **tail** latency ``λ`` (the first launch's latency plus the event record) uniformly
from 40 to 130 µs (the committed H100/H200 runs: at most 106 µs beyond one step's compute).

* **host-bound** (``h ≥ g``): the GPU keeps up; after the host's last call it still runs the
  last step's kernels (worst case: all of them, launched at the end of the step) and the event:
  ``issue = n h``, ``period = n h + λ + compute``;
* **GPU-bound** (``g > h``): the GPU runs back to back from its first launch, and the host,
  once the launch queue (:data:`~traceviz.analyze.compare.unprofiled.LAUNCH_QUEUE_DEPTH`
  launches) is full, issues a launch only when one leaves it, so it ends at most
  ``min(n, Q / launches)`` steps ahead: ``period = λ + n g``,
  ``issue = max(n h, λ + (n − min(n, Q / launches)) g)``;
* **spinning in a collective** (two GPUs): the block's period is the slowest rank's, set by
  the peer's host (``n h_peer + λ + compute``); the issue time is this rank's own, shorter
  host: ``issue = period × (1 − lag / n)`` for the lag in steps the old rule read.

The lean trace's compute busy per step is ``compute`` (mean, no noise: kernel durations barely
move under the profiler).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from traceviz.analyze.compare.unprofiled import LAUNCH_QUEUE_DEPTH

#: The paired protocol's block sizing (traceviz.collect.paired.PairedSettings).
MIN_REPEAT_MS = 100.0
MAX_ITERS = 2000
NOISE = 0.03
TAIL_US = (40.0, 130.0)


@dataclass(frozen=True)
class Cell:
    """One calibration cell: a side's true per-step costs (µs) and who sets its pace."""

    name: str
    host_us: float
    gpu_us: float  # the GPU's time per step, back to back (compute + gaps between kernels)
    compute_us: float  # GPU compute busy per step (the lean trace's number)
    launches: float
    host_bound: bool  # the truth
    #: spinning in a collective: the lag in steps this rank's own host issue shows
    spin_lag_steps: float | None = None

    @property
    def step_us(self) -> float:
        return max(self.host_us, self.gpu_us)

    @property
    def iters(self) -> int:
        return max(3, min(MAX_ITERS, math.ceil(MIN_REPEAT_MS * 1000 / self.step_us)))


def blocks(cell: Cell, pairs: int, rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """``pairs`` blocks of the cell: (period ms per step, issue ms per step)."""
    n = cell.iters
    periods, issues = [], []
    for _ in range(pairs):
        h = cell.host_us * rng.lognormal(0.0, NOISE)
        g = cell.gpu_us * rng.lognormal(0.0, NOISE)
        lam = rng.uniform(*TAIL_US)
        if cell.spin_lag_steps is not None:
            total = n * h + lam + cell.compute_us
            issue = total * (1 - cell.spin_lag_steps / n)
        elif h >= g:
            issue = n * h
            total = issue + lam + cell.compute_us
        else:
            total = lam + n * g
            ahead = min(n, LAUNCH_QUEUE_DEPTH / cell.launches)
            issue = max(n * h, lam + (n - ahead) * g)
        periods.append(total / n / 1000)
        issues.append(issue / n / 1000)
    return periods, issues


#: Step sizes from 20 µs to 20 ms (issue 36).
STEPS_US = (20.0, 44.0, 200.0, 2_000.0, 20_000.0)


def _launches(step_us: float) -> tuple[float, ...]:
    """Launch counts a step of this size can hold (at least 2 µs of host per launch)."""
    return tuple(x for x in (1.0, 5.0, 100.0, 1_500.0) if x * 2.0 <= step_us)


def host_bound_cells() -> list[Cell]:
    """The host sets the pace: compute 5–85 % of the step, every launch count that fits."""
    return [Cell(f"host-bound {s:g} µs, {c:.0%} compute, {n:g} launches", s, c * s, c * s, n,
                 True)
            for s in STEPS_US for c in (0.05, 0.15, 0.5, 0.85) for n in _launches(s)]


def gpu_bound_cells() -> list[Cell]:
    """The GPU sets the pace: the host at 30 or 70 % of its time, compute 95 or 100 % of it,
    or 83 % (gaps between kernels) where the launch queue does not hide the lag."""
    out = []
    for s in STEPS_US:
        for n in _launches(s):
            for ratio in (0.3, 0.7):
                shares = (0.95, 1.0) if n * 2 >= LAUNCH_QUEUE_DEPTH else (0.83, 0.95, 1.0)
                out.extend(Cell(f"GPU-bound {s:g} µs, host at {ratio:.0%}, {c:.0%} compute, "
                                f"{n:g} launches", ratio * s, s, c * s, n, False)
                           for c in shares)
    return out


def spin_cells() -> list[Cell]:
    """A rank whose GPU waits in a collective for its peer's host (issue 36: a 5.4 ms step,
    0.26 ms of compute, 41 launches, the old lag 1.4 to 4.7 steps)."""
    return [Cell(f"spinning in a collective, old lag {lag:g} steps", 5_400.0, 260.0, 260.0,
                 41.0, True, spin_lag_steps=lag) for lag in (1.4, 2.7, 4.7)]


def issue36_cell() -> Cell:
    """The 44 µs step of issue 36: 5 launches, GPU busy 6.7 µs (15 %), host-bound."""
    return Cell("issue 36: 44 µs step, 5 launches, 15 % compute", 43.6, 6.7, 6.7, 5.0, True)

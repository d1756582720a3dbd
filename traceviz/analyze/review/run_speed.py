"""Step time of one mode in two runs (A → B), each run its own processes, with a bootstrap CI.

Inputs are the runs' manifests (``paired`` blocks, schema 2 and 3). A block's value is its mean
time per step (ms). For a mode M ≠ the baseline, run R's **blocks** are ``paired.mode_block_ms``
(M's blocks, timed in M's process). For the baseline (``eager``), run R timed it once in each
process of a mode paired against it: its **per-process medians** ``m_p`` = the median of
``paired.baseline_block_ms`` of each such mode p.

**Process factors.** Two runs are separate processes, and a process carries a speed of its own
(clocks, allocator, what else the host runs) that no number of blocks inside it averages away.
Run R's process factors are ``f_p = m_p / median_p(m_p)``: how far each process ran its
baseline from the run's typical speed (``K`` factors, one per paired mode; ``[1]`` when ``K <
2``, and the result says the process-to-process spread could not be estimated).

**Step time** of M in R: ``median(blocks)`` (the baseline: ``median_p(m_p)``).
**speed-up A → B** = step time A / step time B (``> 1``: B is faster).

**CI** (percentile bootstrap, ``resamples`` resamples, level ``level``; numpy
``default_rng`` seeded from ``seed``, so the same data give the same CI): per resample r, for
each run independently,

* a mode: ``median(blocks[resample_indices(n, resamples, s)[r]]) × f[j_r]`` with ``j_r`` a
  process drawn uniformly from the run's K: block noise and one process's speed;
* the baseline: ``median(m[resample_indices(K, resamples, s)[r]])`` (a cluster bootstrap over
  the run's processes);

with seeds ``seed`` (A's blocks), ``seed + 1`` (B's blocks), ``seed + 2`` / ``seed + 3`` (A's /
B's process draws); the CI is the ``(1 ∓ level) / 2`` quantiles of stat_A / stat_B. A run
compared with itself is one measurement: both sides share A's resamples (CI [1, 1]).

**Drift-robust ratio** (shown beside, not judged): each run's own paired speed-up of M over its
baseline (median of the ABBA pair ratios ``baseline / mode``, both timed in one process, so a
machine that is uniformly slower in B cancels): ``ratio = speed-up_B / speed-up_A`` (``> 1``: M
gained on the baseline in B), CI by resampling each run's pairs (seeds as above).

**Verdict** (:func:`run_status`, the paired speed rule with ``min_speedup``): ``faster`` when
``ci_low > 1 + min_speedup``; ``slower`` when ``ci_high < 1 − min_speedup``; ``unchanged`` when
the CI lies within ``[1 − min_speedup, 1 + min_speedup]`` (edges included); else
``inconclusive``. Method and calibration: ``docs/comparison.md``, "Two runs".

**Floor** (:func:`mode_floor`, the review gate's step statistic): a process's fastest timing
block (ms per step). What else runs on the machine only ever adds time to a block, so the
fastest block is the least disturbed and the most repeatable between processes: on a 2-core CPU
at load 10 (``benchmarks/gate_repeats.py``), eager's fastest paired block stayed within
0.0086–0.0097 ms/step in 40 processes of identical code while their block medians ran
0.010–0.071. A mode's floor in a run: the fastest of its ``paired.mode_block_ms``; the
baseline's: the median over the processes paired against it of each one's fastest
``paired.baseline_block_ms``.

**Between-process spread** (:func:`run_spread`, the review gate's yardstick,
:mod:`traceviz.analyze.review.run_gate`): every run times the same code, the baseline's, in several
processes: in each process of a mode paired against it (its fastest
``paired.baseline_block_ms``: ``m_p``) and in its own process (``timing.p10_ms`` of the
baseline's entry, ``o``: that process keeps its repeats' median, p10 and p90, not its blocks).
A run's spread is ``max(x) / min(x) − 1`` over these per-process floors ``x`` of identical code,
like with like: ``x = (m_p)`` when at least two processes were paired (the paired blocks are
what every two-run comparison is made of); ``x = (m_1, o)`` when one was (e.g. ``--modes
eager,compile``: its only second process); no spread below two processes. A run is one device,
so the spread is per run and per device. The own process is left out when two paired ones exist
because it is another method (no alternation with a mode): on some CPUs its eager ran 3–5×
slower than the paired blocks of the same run (issue 38), a gap between methods, not between
processes. Measured: ``docs/comparison.md``, "Regression gate".

"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from traceviz.analyze.compare.speed import paired_status
from traceviz.analyze.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    resample_indices,
)

FASTER, SLOWER, UNCHANGED, INCONCLUSIVE = "faster", "slower", "unchanged", "inconclusive"
RUN_STATUSES = (FASTER, SLOWER, UNCHANGED, INCONCLUSIVE)
_STATUS_OF = {"WIN": FASTER, "REGRESSION": SLOWER, "NO_WIN": UNCHANGED,
              "INCONCLUSIVE": INCONCLUSIVE}


def run_status(ci_low: float, ci_high: float, min_speedup: float) -> str:
    """``faster`` / ``slower`` / ``unchanged`` / ``inconclusive`` of a speed-up A → B CI."""
    return _STATUS_OF[paired_status(ci_low, ci_high, min_speedup)]


@dataclass(frozen=True)
class ModeTiming:
    """One mode's timing in one run (module doc). ``blocks``: the mode's block times (ms per
    step), or for the baseline one median per process; ``pair_ratios``: baseline / mode per
    ABBA pair (empty for the baseline); ``factors``: the run's process factors."""

    blocks: tuple[float, ...]
    factors: tuple[float, ...]
    pair_ratios: tuple[float, ...] = ()
    baseline: bool = False

    @property
    def step_ms(self) -> float:
        return float(np.median(self.blocks))


def _positive(values: Any) -> list[float] | None:
    if not isinstance(values, list) or not values:
        return None
    out = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return out if len(out) == len(values) and all(np.isfinite(out)) and min(out) > 0 else None


def _paired(entry: Any, baseline: str) -> tuple[list[float], list[float]] | None:
    """(baseline blocks, mode blocks) of a manifest entry's paired block against ``baseline``."""
    p = entry.get("paired") if isinstance(entry, dict) else None
    if not isinstance(p, dict) or p.get("error") or p.get("baseline") != baseline:
        return None
    base, mode = _positive(p.get("baseline_block_ms")), _positive(p.get("mode_block_ms"))
    if base is None or mode is None or len(base) != len(mode):
        return None
    return base, mode


def process_medians(modes: dict[str, Any], baseline: str) -> list[float]:
    """The baseline's median block time in each process of a mode paired against it."""
    found = (_paired(e, baseline) for m, e in modes.items() if m != baseline)
    return [float(np.median(p[0])) for p in found if p is not None]


def process_floors(modes: dict[str, Any], baseline: str) -> list[float]:
    """The baseline's fastest block in each process of a mode paired against it (ms/step)."""
    found = (_paired(e, baseline) for m, e in modes.items() if m != baseline)
    return [min(p[0]) for p in found if p is not None]


def mode_floor(modes: dict[str, Any], mode: str, baseline: str) -> float | None:
    """``mode``'s floor in a run's manifest ``modes`` (module doc), ms per step; ``None``
    without paired blocks."""
    if mode == baseline:
        floors = process_floors(modes, baseline)
        return float(np.median(floors)) if floors else None
    found = _paired(modes.get(mode), baseline)
    return None if found is None else min(found[1])


def mode_timing(modes: dict[str, Any], mode: str, baseline: str) -> ModeTiming | None:
    """``mode``'s :class:`ModeTiming` in a run's manifest ``modes``; ``None`` without blocks."""
    medians = process_medians(modes, baseline)
    factors = tuple(m / float(np.median(medians)) for m in medians) if len(medians) >= 2 \
        else (1.0,)
    if mode == baseline:
        if not medians:
            return None
        if len(medians) == 1:  # one process: its blocks, like a mode's
            found = next(p for m, e in modes.items() if m != baseline
                         and (p := _paired(e, baseline)) is not None)
            return ModeTiming(tuple(found[0]), factors, (), False)
        return ModeTiming(tuple(medians), factors, (), True)
    found = _paired(modes.get(mode), baseline)
    if found is None:
        return None
    base, blocks = found
    return ModeTiming(tuple(blocks), factors, tuple(b / m for b, m in zip(base, blocks,
                                                                          strict=True)))


@dataclass(frozen=True)
class RunSpread:
    """One run's between-process spread of identical code (module doc).

    ``value``: ``max(floors) / min(floors) − 1`` (0.12: the slowest process's floor of the
    baseline's code was 12 % above the fastest's); ``floors``: the per-process floors used (ms
    per step), paired processes first; ``own``: whether the baseline's own process is one of
    them."""

    value: float
    floors: tuple[float, ...]
    own: bool

    def source(self) -> str:
        """Where the spread comes from, in words (the baseline named by the caller)."""
        kind = (f"{len(self.floors) - 1} paired process and its own" if self.own
                else f"{len(self.floors)} paired processes")
        return f"{kind}, fastest blocks {min(self.floors):.4g}–{max(self.floors):.4g} ms/step"

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "floors": list(self.floors), "own": self.own}


def run_spread(modes: dict[str, Any], baseline: str) -> RunSpread | None:
    """The between-process spread of a run's manifest ``modes`` (module doc); ``None``: fewer
    than two processes timed the baseline's code."""
    floors = process_floors(modes, baseline)
    own = False
    if len(floors) == 1:
        entry = modes.get(baseline)
        t = entry.get("timing") if isinstance(entry, dict) else None
        o = _positive([t.get("p10_ms")]) if isinstance(t, dict) else None
        if o is not None:
            floors, own = floors + o, True
    if len(floors) < 2:
        return None
    return RunSpread(max(floors) / min(floors) - 1, tuple(floors), own)


@dataclass(frozen=True)
class Interval:
    """An estimate with its bootstrap CI."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class RunSpeedChange:
    """A → B step time of one mode (module doc)."""

    step_ms_a: float
    step_ms_b: float
    speedup: Interval  # step time A / step time B
    status: str  # one of RUN_STATUSES
    ratio: Interval | None  # paired speed-up B / paired speed-up A (None for the baseline)
    blocks: tuple[int, int]  # blocks (or processes, for the baseline) of A and B
    processes: tuple[int, int]  # process factors of A and B
    level: float
    resamples: int
    seed: int
    min_speedup: float

    @property
    def change(self) -> float:
        """B's step time relative to A's, minus 1 (+0.2: 20 % slower)."""
        return self.step_ms_b / self.step_ms_a - 1

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change}


def _stat(t: ModeTiming, resamples: int, seed: int, draw_seed: int) -> np.ndarray:
    values = np.asarray(t.blocks, dtype=np.float64)
    idx = resample_indices(len(values), resamples, seed)
    stat = np.median(values[idx], axis=1)
    if t.baseline:
        return stat
    factors = np.asarray(t.factors, dtype=np.float64)
    return stat * factors[np.random.default_rng(draw_seed).integers(0, len(factors), resamples)]


def _ratio(a: ModeTiming, b: ModeTiming, level: float, resamples: int,
           seed: int, same: bool) -> Interval | None:
    if not a.pair_ratios or not b.pair_ratios:
        return None
    ra, rb = (np.asarray(t.pair_ratios, dtype=np.float64) for t in (a, b))
    sa = np.median(ra[resample_indices(len(ra), resamples, seed)], axis=1)
    sb = sa if same else np.median(rb[resample_indices(len(rb), resamples, seed + 1)], axis=1)
    low, high = percentile_interval(sb / sa, level)
    return Interval(float(np.median(rb) / np.median(ra)), low, high)


def run_speed_change(a: ModeTiming, b: ModeTiming, min_speedup: float, *,
                     level: float = DEFAULT_LEVEL, resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED, same_recording: bool = False) -> RunSpeedChange:
    """The A → B speed-up of one mode, its CI, verdict and drift-robust ratio (module doc).

    ``same_recording``: A and B are one recording (a run compared with itself): one
    measurement, so both sides are resampled together (B uses A's seeds) and the speed-up is
    exactly 1 with CI [1, 1]."""
    sa = _stat(a, resamples, seed, seed + 2)
    sb = sa if same_recording else _stat(b, resamples, seed + 1, seed + 3)
    low, high = percentile_interval(sa / sb, level)
    return RunSpeedChange(
        a.step_ms, b.step_ms, Interval(a.step_ms / b.step_ms, low, high),
        run_status(low, high, min_speedup), _ratio(a, b, level, resamples, seed, same_recording),
        (len(a.blocks), len(b.blocks)), (len(a.factors), len(b.factors)), level, resamples,
        seed, min_speedup)

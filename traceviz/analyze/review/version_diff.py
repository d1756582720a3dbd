"""Two versions of a step in one run (``profile NEW --against OLD``): per mode, old → new.

Inputs: NEW's run (its mode entries carry the ``against`` record of
:mod:`traceviz.collect.against`) and OLD's run (``RUN/old``), each loaded as
:class:`~traceviz.analyze.review.run_diff.RunData`.

**Step time, paired in one process** (:class:`VersionSpeed`): the ``against.paired`` block
timed OLD's step (in the baseline's place) and NEW's in ABBA pairs in one process.
``speedup`` = the median over pairs of OLD's block time / NEW's (``> 1``: NEW is faster) with
the block's percentile-bootstrap CI (:func:`traceviz.analyze.stats.paired_speedup`, recorded by
the child; recomputed from the blocks when absent); ``old_ms`` = the median of OLD's block
times (ms per step) and ``new_ms`` = ``old_ms / speedup``, so the step times and the change
(``new_ms / old_ms − 1``) always say what the speed-up says (the median of NEW's own blocks can
differ from it when blocks are few and noisy).

Verdict (:func:`~traceviz.analyze.review.run_speed.run_status`, the paired speed rule with
``min_speedup``): ``faster`` when the CI's low end is above ``1 + min_speedup``, ``slower``
when its high end is below ``1 − min_speedup``, ``unchanged`` when the whole CI lies within
``[1 − min_speedup, 1 + min_speedup]``, else ``inconclusive``. In a mode that **replays CUDA
graphs** (either version's lean trace launches at least one graph per step) the band is
widened to ``threshold = max(min_speedup, CAPTURE_SPREAD_NS / OLD's step)``: each version's
graph is its own capture, and two captures of the same kernels replay a few µs per step
apart (:data:`CAPTURE_SPREAD_NS`), a difference no code change made. The two versions' blocks
alternate in one process, so no process-to-process factor enters (unlike two runs,
:mod:`traceviz.analyze.review.run_speed`): this is the most precise of traceviz's A → B estimates.

**Why**: everything :func:`~traceviz.analyze.review.run_diff.compare_runs` says of OLD's run → NEW's
run — counts per step, GPU busy, host wait, correctness, graph breaks, recompiles, cudagraph
skips, failures and the kernel diff — plus its separate-process estimate of the same change
(shown beside, not judged). The **unprofiled host issue time** per step is taken from the same
paired blocks as the speed (:func:`paired_issue`: the median of OLD's and of NEW's blocks'
issue times, one process), where the ``against`` record has them: each version's own mode
processes differ in host speed by more than the effects measured here (calibration, H200:
Δhost issue +213 µs from two processes for an injected +103 µs busy-wait; ``docs/
calibration.md``). Without them it is each run's own (:func:`~traceviz.analyze.review.run_diff.
compare_runs`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from traceviz.analyze.review.kernel_diff import MIN_CHANGE
from traceviz.analyze.review.run_diff import Pair, RunComparison, RunData, RunModeDiff, compare_runs
from traceviz.analyze.review.run_speed import INCONCLUSIVE, Interval, run_status
from traceviz.analyze.stats import paired_speedup
from traceviz.analyze.verdicts import Thresholds

#: How far apart (ns per step) two captures of the *same* kernels can replay: the unchanged
#: band of a mode that replays CUDA graphs is at least this wide (module doc). Measured on
#: H200 (``benchmarks/results/2026-11-28-capture-spread-h200/``, ``benchmarks/
#: capture_spread.py``): the same calibration step built twice and timed paired as
#: ``--against`` times two versions, steps of 20 µs to 2.1 ms, 55 repeats in ``cudagraph`` and
#: ``reduce-overhead``; the largest difference with a CI clear of zero was 2.3 µs per step
#: (27.5 → 29.9 µs, an 8 % "slowdown" of identical kernels whose versions differed only in
#: uncaptured host code) and 2.7 µs on a 2.1 ms step; the calibration cells
#: ``host10-200us`` / ``host50-200us`` in ``cudagraph`` (injected host time that a graph does
#: not replay) read +1.2 / +1.3 / +1.5 µs. 4 µs is 1.5 × the largest.
CAPTURE_SPREAD_NS = 4_000.0


@dataclass(frozen=True)
class VersionSpeed:
    """OLD → NEW step time of one mode, paired in one process (module doc)."""

    old_ms: float
    new_ms: float  # old_ms / speedup
    speedup: Interval  # OLD's block time / NEW's, median over pairs
    status: str  # faster / slower / unchanged / inconclusive
    pairs: int
    stopped: str | None  # why the pairing stopped (converged, budget, max_pairs)
    level: float
    min_speedup: float
    threshold: float  # the band applied: min_speedup, or wider where graphs replay (module doc)

    @property
    def change(self) -> float:
        """NEW's step time relative to OLD's, minus 1 (+0.2: NEW is 20 % slower)."""
        return self.new_ms / self.old_ms - 1

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change}


def _blocks(values: Any) -> list[float] | None:
    if not isinstance(values, list) or not values:
        return None
    out = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return out if len(out) == len(values) and min(out) > 0 and all(np.isfinite(out)) else None


def replays_graphs(graph_launches: Pair) -> bool:
    """Whether either version's lean trace launches CUDA graphs (per step, > 0)."""
    return any(v is not None and v > 0 for v in (graph_launches.a, graph_launches.b))


def entry_capture_spread_ns(entry: Any) -> float:
    """:data:`CAPTURE_SPREAD_NS` where a manifest mode entry's lean-trace summary
    (``analysis_summary.graph_launches_per_step``) launches CUDA graphs, else 0."""
    summary = entry.get("analysis_summary") if isinstance(entry, dict) else None
    graphs = summary.get("graph_launches_per_step") if isinstance(summary, dict) else None
    ok = isinstance(graphs, (int, float)) and not isinstance(graphs, bool)
    return CAPTURE_SPREAD_NS if ok and graphs > 0 else 0.0


def version_speed(against: Any, min_speedup: float,
                  capture_spread_ns: float = 0.0) -> VersionSpeed | None:
    """The :class:`VersionSpeed` of a mode entry's ``against`` record (``None``: no usable
    paired blocks); ``capture_spread_ns``: the spread of two graph captures where the mode
    replays CUDA graphs (:data:`CAPTURE_SPREAD_NS`), 0 where it does not (module doc)."""
    paired = against.get("paired") if isinstance(against, dict) else None
    if not isinstance(paired, dict):
        return None
    old, new = _blocks(paired.get("baseline_block_ms")), _blocks(paired.get("mode_block_ms"))
    if old is None or new is None or len(old) != len(new):
        return None
    recorded = [paired.get(k) for k in ("speedup", "ci_low", "ci_high")]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in recorded):
        value, low, high = (float(v) for v in recorded)
        level = float(paired.get("level") or 0.95)
    else:
        est = paired_speedup(old, new)
        value, low, high, level = est.speedup, est.ci_low, est.ci_high, est.level
    stopped = paired.get("stopped")
    old_ms = float(np.median(old))
    threshold = max(min_speedup, capture_spread_ns / (old_ms * 1e6))
    return VersionSpeed(old_ms, old_ms / value, Interval(value, low, high),
                        run_status(low, high, threshold), len(old),
                        str(stopped) if stopped else None, level, min_speedup, threshold)


@dataclass(frozen=True)
class VersionModeDiff:
    """One mode, OLD → NEW: the paired verdict and the runs' why (module doc)."""

    mode: str
    against_status: str  # the against record's status (ok, skipped, failed, timeout, absent)
    speed: VersionSpeed | None
    verdict: str
    note: str  # why there is no paired speed, or ""
    outputs_vs_old: dict[str, Any] | None
    why: RunModeDiff  # OLD's run → NEW's run (its ``speed``: the separate-process estimate)


@dataclass(frozen=True)
class VersionComparison:
    """OLD → NEW of one ``profile --against`` run."""

    old: str  # OLD's workload file
    new: str  # NEW's workload file
    modes: tuple[VersionModeDiff, ...]
    runs: RunComparison  # OLD's run → NEW's run
    min_speedup: float

    def mode(self, name: str) -> VersionModeDiff | None:
        return next((m for m in self.modes if m.mode == name), None)


def paired_issue(against: Any) -> Pair | None:
    """OLD's and NEW's unprofiled host issue time per step (ms): the median of each version's
    blocks' issue times in the ``against`` record's paired timing (``baseline_issue_ms``: OLD,
    ``mode_issue_ms``: NEW; one process, the speed's blocks); ``None`` where either is missing
    or unusable."""
    paired = against.get("paired") if isinstance(against, dict) else None
    if not isinstance(paired, dict):
        return None
    old = _blocks(paired.get("baseline_issue_ms"))
    new = _blocks(paired.get("mode_issue_ms"))
    if old is None or new is None:
        return None
    return Pair(float(np.median(old)), float(np.median(new)))


def _mode(d: RunModeDiff, entry: Any, min_speedup: float) -> VersionModeDiff:
    against = entry.get("against") if isinstance(entry, dict) else None
    if (issue := paired_issue(against)) is not None:
        d = replace(d, host_issue_ms=issue)
    status = str(against.get("status") or "ok") if isinstance(against, dict) else "absent"
    spread = CAPTURE_SPREAD_NS if replays_graphs(d.graph_launches) else 0.0
    speed = version_speed(against, min_speedup, spread) if status == "ok" else None
    if speed is not None:
        note = ""
    elif status == "ok":
        note = "the old-vs-new pairing left no usable blocks"
    elif isinstance(against, dict):
        note = f"{status}: {against.get('reason') or 'no reason recorded'}"
    else:
        note = "the mode was not timed against the old version"
    outputs = against.get("outputs_vs_old") if isinstance(against, dict) else None
    return VersionModeDiff(d.mode, status, speed, speed.status if speed else INCONCLUSIVE,
                           note, outputs if isinstance(outputs, dict) else None, d)


def compare_versions(old: RunData, new: RunData, thresholds: Thresholds | None = None,
                     min_change: float = MIN_CHANGE) -> VersionComparison:
    """OLD's run → NEW's run, every mode of NEW's manifest first (module doc)."""
    t = thresholds or Thresholds()
    runs = compare_runs(old, new, t, min_change=min_change)
    entries = new.manifest.get("modes") or {}
    modes = tuple(_mode(d, entries.get(d.mode), t.min_speedup) for d in runs.modes)
    wl_old = (old.manifest.get("workload") or {}).get("path")
    wl_new = (new.manifest.get("workload") or {}).get("path")
    return VersionComparison(str(wl_old or old.path), str(wl_new or new.path), modes, runs,
                             t.min_speedup)

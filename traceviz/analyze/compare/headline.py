"""One line per mode that says what happened, built once and shown by every report format.

Order (``docs/comparison.md``): the outcome (speed-up with its CI, or the unpaired / profiled
evidence; when the baseline timed beside the mode drifted from its own process, the in-pairs
baseline step the speed-up rests on, :meth:`~traceviz.analyze.compare.speed.BaselineDrift.
headline_clause`), then where the time went (the waterfall: with the unprofiled split, the step time
change without the profiler and its parts; else the profiled waterfall's largest changes, ms
or µs per step, labelled "profiled"), then the counts (launches, kernels per step), then the
context (cudagraph skips, graph breaks, recompiles, input copies, a failed capture). A
distributed mode adds, after where the time went, the rank that bounds its step and that
rank's exposed communication before → after (:mod:`traceviz.analyze.distributed.bounding`;
a straggler set apart by its host is named only when the unprofiled per-rank issue times
confirm it, else "no straggler without the profiler"; the numbers, the unprofiled check's
included, are in :attr:`Headline.ranks` too) — unless its waterfall is in unprofiled units:
then the waterfall's parts come from the bounding ranks' traces and its exposed communication
is the one number the headline gives for it. The
unprofiled total is baseline / speed-up − baseline, so its sign is always the speed-up's. For
example::

    1.71× faster (95 % CI 1.62–1.80, 23 pairs): step −0.40 ms/step without the profiler
    (pair-level median): host overhead −0.41 ms/step, GPU busy +1.8 µs/step (lean-trace
    mean); 48 → 29 launches, 40 → 20 kernels per step
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from traceviz.analyze.compare.speed import BaselineDrift, SpeedEvidence, describe
from traceviz.analyze.compare.waterfall import UNPROFILED, Waterfall
from traceviz.analyze.distributed.bounding import BoundingRank, as_evidence, headline_clause

#: Waterfall component → the words a headline uses.
PART_WORDS = {
    "gpu_busy_ns": "GPU busy",
    "host_wait_ns": "host wait",
    "sync_wait_ns": "sync wait",
    "queued_ns": "queued (launched, not started)",
    "graph_internal_ns": "in-graph gaps",
    "other_idle_ns": "other idle",
    "host_overhead_ns": "host overhead",
    "compute_busy_ns": "compute busy",
    "exposed_comm_ns": "exposed communication",
}
#: Unprofiled parts read from the lean trace, labelled so in a headline.
FROM_LEAN_TRACE = frozenset({"gpu_busy_ns", "other_idle_ns", "compute_busy_ns",
                             "exposed_comm_ns"})
#: Changes smaller than this (ns per step) are left out of "where the time went".
MIN_PART_NS = 500
#: At most this many waterfall parts are named.
MAX_PARTS = 3


@dataclass(frozen=True)
class Headline:
    """A mode's headline and the numbers it leads with."""

    mode: str
    text: str
    speed_status: str
    evidence_source: str
    speedup: float | None
    ci_low: float | None
    ci_high: float | None
    level: float | None
    #: distributed modes: the bounding rank, which rule named it, its unprofiled straggler
    #: check and its exposed communication, (baseline, mode) lists
    #: (:func:`traceviz.analyze.distributed.bounding.as_evidence`); None otherwise
    ranks: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _per_step(ns: float) -> str:
    """A signed per-step time: ms from 0.1 ms up, else µs; a real minus sign."""
    text = f"{ns / 1e6:+.2f} ms/step" if abs(ns) >= 100_000 else f"{ns / 1000:+.1f} µs/step"
    return text.replace("-", "−")


def where_the_time_went(parts: dict[str, float], unprofiled: bool = False) -> str:
    """The largest waterfall changes (mode − baseline, ns per step), largest first."""
    named = sorted((kv for kv in parts.items() if abs(kv[1]) >= MIN_PART_NS),
                   key=lambda kv: -abs(kv[1]))[:MAX_PARTS]
    out = []
    for name, delta in named:
        text = f"{PART_WORDS.get(name, name)} {_per_step(delta)}"
        if name in ("host_wait_ns", "host_overhead_ns") and delta < 0:
            text += " (launch overhead)"
        if unprofiled and name in FROM_LEAN_TRACE:
            text += " (lean-trace mean)"
        out.append(text)
    what = "step time" if unprofiled else "profiled period"
    return ", ".join(out) or f"no change of the {what} beyond 0.5 µs/step"


def _waterfall_text(w: Waterfall) -> str:
    """Where the time went, each number labelled with its statistic: the unprofiled step
    change from the pair-level median and the speed-up, its lean-trace parts as means; the
    profiled waterfall's total and parts as means over the steps (they add up exactly)."""
    if w.units == UNPROFILED:
        return (f": step {_per_step(w.delta_ns)} without the profiler (pair-level median): "
                + where_the_time_went(w.parts, unprofiled=True))
    return (f"; profiled, mean over steps: period {_per_step(w.delta_ns)}: "
            + where_the_time_went(w.parts))


def _count(value: float) -> str:
    return f"{value:,g}"


def build_headline(
    mode: str,
    ev: SpeedEvidence,
    speed_status: str,
    waterfall: Waterfall | None,
    counts: dict[str, tuple[float, float]],
    context: tuple[str, ...],
    fallback: str = "",
    bounding: tuple[BoundingRank, BoundingRank] | None = None,
    drift: tuple[str, BaselineDrift] | None = None,
) -> Headline:
    """The headline of one mode.

    ``waterfall``: the mode's waterfall, ``None`` without one (then ``fallback`` says why,
    e.g. the mode failed). ``counts``: name → (baseline, mode) per-step medians, e.g.
    ``{"launches": (48, 29)}``. ``bounding``: the bounding ranks (baseline, mode) of a
    distributed mode. ``drift``: (the baseline's name, its in-pairs median against its own
    process); when it drifted, the outcome says the speed-up rests on the in-pairs number.
    """
    text = describe(ev, speed_status)
    if drift is not None and drift[1].drifted:
        text += f", {drift[1].headline_clause(drift[0])}"
    if waterfall is not None:
        text += _waterfall_text(waterfall)
    elif fallback:
        text += f"; {fallback}"
    if bounding is not None:
        # an unprofiled waterfall of a distributed mode is split by the bounding ranks' traces
        # (traceviz.analyze.compare.modes): its exposed communication is the one number for it
        on_ranks = (waterfall is not None and waterfall.units == UNPROFILED
                    and all(b.lean is not None for b in bounding))
        text += "; " + headline_clause(*bounding, exposed=not on_ranks)
    shown = [f"{_count(b)} → {_count(m)} {name}" for name, (b, m) in counts.items()]
    if shown:
        text += "; " + ", ".join(shown) + " per step"
    if context:
        text += "; " + "; ".join(context)
    return Headline(mode, text, speed_status, ev.source, ev.speedup, ev.ci_low, ev.ci_high,
                    ev.level, None if bounding is None else as_evidence(*bounding))

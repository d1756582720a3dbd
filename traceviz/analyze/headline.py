"""One line per mode that says what happened, built once and shown by every report format.

Order (``docs/comparison.md``): the outcome (speed-up with its CI, or the unpaired / profiled
evidence), then where the profiled time went (the waterfall's largest changes, ms or µs per
step), then the counts (launches, kernels per step), then the context (cudagraph skips, graph
breaks, recompiles, input copies, a failed capture). For example::

    1.71× faster (95 % CI 1.62–1.80, 23 pairs): host wait −2.49 ms/step (launch overhead),
    GPU busy +0.01 ms/step; 48 → 29 launches, 40 → 20 kernels per step
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from traceviz.analyze.speed import SpeedEvidence, describe

#: Waterfall component → the words a headline uses.
PART_WORDS = {
    "gpu_busy_ns": "GPU busy",
    "host_wait_ns": "host wait",
    "sync_wait_ns": "sync wait",
    "graph_internal_ns": "in-graph gaps",
    "other_idle_ns": "other idle",
}
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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _per_step(ns: float) -> str:
    """A signed per-step time: ms from 0.1 ms up, else µs; a real minus sign."""
    text = f"{ns / 1e6:+.2f} ms/step" if abs(ns) >= 100_000 else f"{ns / 1000:+.1f} µs/step"
    return text.replace("-", "−")


def where_the_time_went(parts: dict[str, float]) -> str:
    """The largest waterfall changes (mode − baseline, ns per step), largest first."""
    named = sorted((kv for kv in parts.items() if abs(kv[1]) >= MIN_PART_NS),
                   key=lambda kv: -abs(kv[1]))[:MAX_PARTS]
    out = []
    for name, delta in named:
        text = f"{PART_WORDS.get(name, name)} {_per_step(delta)}"
        if name == "host_wait_ns" and delta < 0:
            text += " (launch overhead)"
        out.append(text)
    return ", ".join(out) or "no change of the profiled period beyond 0.5 µs/step"


def _count(value: float) -> str:
    return f"{value:,g}"


def build_headline(
    mode: str,
    ev: SpeedEvidence,
    speed_status: str,
    parts: dict[str, float] | None,
    counts: dict[str, tuple[float, float]],
    context: tuple[str, ...],
    fallback: str = "",
) -> Headline:
    """The headline of one mode.

    ``parts``: the waterfall's component deltas (ns per step), ``None`` without a waterfall
    (then ``fallback`` says why, e.g. the mode failed). ``counts``: name → (baseline, mode)
    per-step medians, e.g. ``{"launches": (48, 29)}``.
    """
    text = describe(ev)
    if parts is not None:  # the waterfall is of the profiled steps (profiler overhead included)
        text += ": profiled " + where_the_time_went(parts)
    elif fallback:
        text += f"; {fallback}"
    shown = [f"{_count(b)} → {_count(m)} {name}" for name, (b, m) in counts.items()]
    if shown:
        text += "; " + ", ".join(shown) + " per step"
    if context:
        text += "; " + "; ".join(context)
    return Headline(mode, text, speed_status, ev.source, ev.speedup, ev.ci_low, ev.ci_high,
                    ev.level)

"""The ``speed`` verdict: is the mode faster than the baseline on the stopwatch?

Three evidence sources, best first (``evidence["evidence_source"]``; ``docs/comparison.md``):

``paired``    the manifest's ``paired`` block: baseline and mode timed in one process, blocks in
              ABBA order; speed-up = median of per-pair ratios baseline / mode with a bootstrap
              CI (:func:`traceviz.analyze.stats.paired_speedup`).
              WIN: ``ci_low > 1 + min_speedup``; REGRESSION: ``ci_high < 1 - min_speedup``;
              NO_WIN: the whole CI within ``[1 - min_speedup, 1 + min_speedup]``;
              INCONCLUSIVE otherwise.
``unpaired``  schema-1 manifests: each mode's unprofiled median and p10/p90, timed in separate
              processes minutes apart. Ratio = baseline median / mode median. WIN only when the
              mode's p90 is below the baseline's p10 *and* the ratio is at least
              ``1 + min_speedup``; REGRESSION only when the mode's p10 is above the baseline's
              p90 and the ratio is at most ``1 - min_speedup``; INCONCLUSIVE otherwise (drift
              between the runs cannot be told from a small change).
``trace``     plain traces: the median profiled GPU period per step. The profiler inflates a
              launch-bound step far more than a graphed or fused one, so ratio = baseline
              period / mode period gives WIN only above ``max_profiler_inflation`` (inflation
              alone cannot explain it), REGRESSION only below its inverse, INCONCLUSIVE
              otherwise. Never WIN when the mode's period is not lower.

Speed-ups are ``baseline time / mode time`` (``> 1``: the mode is faster).

**Baseline drift** (``paired`` only; :func:`baseline_drift`): the baseline is timed twice, in
its own process (``timing``: median, p10, p90) and inside the mode's process (the pair-level
median: the median over the pairs of its blocks' per-step times). When the pair-level median
lies outside the own-process p10–p90 widened by ``baseline_drift_margin`` (``p10 × (1 −
margin)`` to ``p90 × (1 + margin)``, edges inside), the mode's process slowed (or sped up) the
baseline: the speed verdict keeps its status but says so, with both numbers
(``evidence["baseline_drift"]``).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from traceviz.analyze.stats import paired_speedup
from traceviz.analyze.verdicts import Thresholds, Verdict

PAIRED = "paired"
UNPAIRED = "unpaired"
TRACE = "trace"
NO_EVIDENCE = "none"


@dataclass(frozen=True)
class Timing:
    """One mode's speed inputs: its manifest entry's timing and its profiled period."""

    median_ms: float | None  # unprofiled step time (manifest ``timing``)
    p10_ms: float | None
    p90_ms: float | None
    period_ms: float | None  # median profiled GPU period per step (trace)
    paired: dict[str, Any] | None  # the manifest's ``paired`` block (schema 2), if any


@dataclass(frozen=True)
class SpeedEvidence:
    """The speed-up of one mode over the baseline and where it comes from.

    ``baseline_ms`` / ``mode_ms``: the two numbers compared (unpaired medians, or profiled
    periods for ``trace``); ``None`` for ``paired`` (the per-pair blocks are in the manifest).
    ``note``: why a better source was not used (e.g. the paired timing's error), or "".
    """

    source: str  # PAIRED, UNPAIRED, TRACE or NO_EVIDENCE
    speedup: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    pairs: int | None = None
    stopped: str | None = None
    baseline_ms: float | None = None
    mode_ms: float | None = None
    baseline_p10_ms: float | None = None
    baseline_p90_ms: float | None = None
    mode_p10_ms: float | None = None
    mode_p90_ms: float | None = None
    note: str = ""

    def as_evidence(self) -> dict[str, Any]:
        """The keys a verdict's ``evidence`` carries."""
        out: dict[str, Any] = {"evidence_source": self.source, "speedup": self.speedup}
        if self.source == PAIRED:
            out.update(ci_low=self.ci_low, ci_high=self.ci_high, level=self.level,
                       pairs=self.pairs, stopped=self.stopped)
        elif self.source == UNPAIRED:
            out.update(step_time_ms=[self.baseline_ms, self.mode_ms],
                       p10_ms=[self.baseline_p10_ms, self.mode_p10_ms],
                       p90_ms=[self.baseline_p90_ms, self.mode_p90_ms])
        elif self.source == TRACE:
            out["profiled_period_ms"] = [self.baseline_ms, self.mode_ms]
        if self.note:
            out["note"] = self.note
        return out


def _num(d: dict[str, Any], key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _from_paired(p: dict[str, Any]) -> SpeedEvidence | None:
    """The recorded estimate; recomputed from the blocks when the summary keys are missing."""
    speedup, low, high = _num(p, "speedup"), _num(p, "ci_low"), _num(p, "ci_high")
    level, pairs = _num(p, "level"), p.get("pairs")
    if speedup is None or low is None or high is None:
        base, mode = p.get("baseline_block_ms"), p.get("mode_block_ms")
        if not (isinstance(base, list) and isinstance(mode, list) and base and mode):
            return None
        try:
            est = paired_speedup(base, mode)
        except ValueError:
            return None
        speedup, low, high, level, pairs = (est.speedup, est.ci_low, est.ci_high, est.level,
                                            est.pairs)
    return SpeedEvidence(PAIRED, speedup, low, high, level if level is not None else 0.95,
                         int(pairs) if isinstance(pairs, int) else None,
                         str(p["stopped"]) if p.get("stopped") else None)


def speed_evidence(mode: Timing, base: Timing, baseline: str) -> SpeedEvidence:
    """The best available speed evidence of ``mode`` against ``base`` (see module doc).

    The paired block counts only when it was timed against ``baseline`` itself.
    """
    notes = []
    p = mode.paired
    if isinstance(p, dict) and p:
        if p.get("error"):
            notes.append(f"paired timing failed ({p['error']})")
        elif p.get("baseline") not in (None, baseline):
            notes.append(f"paired timing was against {p['baseline']!r}, not the baseline "
                         f"{baseline!r}")
        else:
            found = _from_paired(p)
            if found is not None:
                return found
            notes.append("paired block has no usable estimate")
    note = "; ".join(notes)
    if mode.median_ms and base.median_ms:
        return SpeedEvidence(
            UNPAIRED, base.median_ms / mode.median_ms, baseline_ms=base.median_ms,
            mode_ms=mode.median_ms, baseline_p10_ms=base.p10_ms, baseline_p90_ms=base.p90_ms,
            mode_p10_ms=mode.p10_ms, mode_p90_ms=mode.p90_ms, note=note,
        )
    if mode.period_ms and base.period_ms:
        return SpeedEvidence(TRACE, base.period_ms / mode.period_ms, baseline_ms=base.period_ms,
                             mode_ms=mode.period_ms, note=note)
    return SpeedEvidence(NO_EVIDENCE, None, note=note)


@dataclass(frozen=True)
class BaselineDrift:
    """The baseline timed inside a mode's process against its own process (module doc)."""

    in_pairs_ms: float  # pair-level median of the baseline's per-step block times
    own_ms: float  # the baseline's own-process median (manifest ``timing``)
    own_p10_ms: float
    own_p90_ms: float
    margin: float  # ``baseline_drift_margin``

    @property
    def band_ms(self) -> tuple[float, float]:
        """The own p10–p90 widened by the margin: where the in-pairs median may lie."""
        return self.own_p10_ms * (1 - self.margin), self.own_p90_ms * (1 + self.margin)

    @property
    def change(self) -> float:
        """In-pairs median relative to the own median, minus 1 (+0.3: 30 % slower inside)."""
        return self.in_pairs_ms / self.own_ms - 1

    @property
    def drifted(self) -> bool:
        """The in-pairs median lies outside :attr:`band_ms` (an edge counts as inside)."""
        low, high = self.band_ms
        return not low <= self.in_pairs_ms <= high

    def as_evidence(self) -> dict[str, Any]:
        """``evidence["baseline_drift"]`` of the speed verdict."""
        low, high = self.band_ms
        return {"in_pairs_ms": self.in_pairs_ms, "own_ms": self.own_ms,
                "own_p10_ms": self.own_p10_ms, "own_p90_ms": self.own_p90_ms,
                "margin": self.margin, "band_ms": [low, high], "change": self.change,
                "drifted": self.drifted}

    def headline_clause(self, baseline: str) -> str:
        """Which baseline number a drifted speed-up rests on, for the headline (issue 38: the
        reader must not have to find it in a note): the in-pairs median, with the own-process
        one beside it."""
        return (f"against {baseline} as timed beside it, {_ms(self.in_pairs_ms)} ms/step "
                f"({_ms(self.own_ms)} in its own process)")

    def sentence(self, baseline: str) -> str:
        """The flag in words, with both numbers (meaningful when :attr:`drifted`)."""
        low, high = self.band_ms
        pct = self.change * 100
        how = "a slowed baseline" if self.change > 0 else "a baseline faster than on its own"
        return (f"the {baseline} baseline ran {_ms(self.in_pairs_ms)} ms/step inside this mode's "
                f"process vs {_ms(self.own_ms)} in its own ({pct:+.0f} %), outside its own "
                f"p10–p90 widened by {self.margin * 100:g} % ({_ms(low)}–{_ms(high)}): the "
                f"speed-up is relative to {how}")


def _ms(x: float) -> str:
    """A per-step time in ms: 3 decimals from 0.1 ms up, else 4 ("3.053", "0.0449")."""
    return f"{x:.3f}" if abs(x) >= 0.1 else f"{x:.4f}"


def _positive(value: Any) -> float | None:
    v = _num({"v": value}, "v")
    return v if v is not None and math.isfinite(v) and v > 0 else None


def baseline_drift(paired: dict[str, Any] | None, base: Timing,
                   margin: float) -> BaselineDrift | None:
    """The baseline's in-pairs median against its own-process timing (module doc); ``None``
    when either is not recorded (no block times, no own median, p10 or p90)."""
    blocks = paired.get("baseline_block_ms") if isinstance(paired, dict) else None
    if not isinstance(blocks, list) or not blocks:
        return None
    values = [_positive(b) for b in blocks]
    own = [_positive(x) for x in (base.median_ms, base.p10_ms, base.p90_ms)]
    if None in values or None in own:
        return None
    median, p10, p90 = own
    assert median is not None and p10 is not None and p90 is not None
    return BaselineDrift(float(statistics.median(v for v in values if v is not None)),
                         median, min(p10, p90), max(p10, p90), margin)


def format_speedup(speedup: float, significant: bool = True) -> str:
    """"1.71× faster" / "1.25× slower" (the inverse, for a speed-up below 1); "no change
    (1.00×)" when both read 1.00; "1.03× (not significant)" when the speed verdict cannot tell
    (``significant`` false: it is INCONCLUSIVE), so the words never claim what it does not."""
    if f"{speedup:.2f}" == "1.00" and f"{1 / speedup:.2f}" == "1.00":
        return "no change (1.00×)"
    if not significant:
        return f"{speedup:.2f}× (not significant)"
    if speedup >= 1:
        return f"{speedup:.2f}× faster"
    return f"{1 / speedup:.2f}× slower"


def describe(ev: SpeedEvidence, status: str | None = None) -> str:
    """The outcome in words, with its CI or its source: the start of every headline.
    ``status``: the speed verdict's (``INCONCLUSIVE``: the speed-up is "not significant",
    :func:`format_speedup`)."""
    if ev.speedup is None:
        return "speed not measured" + (f" ({ev.note})" if ev.note else "")
    significant = status != "INCONCLUSIVE"
    s = format_speedup(ev.speedup, significant)
    if ev.source == PAIRED:
        lvl = f"{(ev.level or 0.95) * 100:.0f} %"
        pairs = f", {ev.pairs} pairs" if ev.pairs else ""
        slower = f"speed-up {ev.speedup:.2f}, " if s.endswith("slower") else ""
        return f"{s} ({slower}{lvl} CI {ev.ci_low:.2f}–{ev.ci_high:.2f}{pairs})"
    if ev.source == UNPAIRED:
        return (f"{s} by unpaired medians ({ev.baseline_ms:.3f} → {ev.mode_ms:.3f} ms/step, "
                "timed in separate processes)")
    return f"{s} (profiled) — median GPU period {ev.baseline_ms:.3f} → {ev.mode_ms:.3f} ms/step"


def paired_status(ci_low: float, ci_high: float, min_speedup: float) -> str:
    """The paired rule on a CI (module doc): WIN, REGRESSION, NO_WIN or INCONCLUSIVE."""
    if ci_low > 1 + min_speedup:
        return "WIN"
    if ci_high < 1 - min_speedup:
        return "REGRESSION"
    if ci_low >= 1 - min_speedup and ci_high <= 1 + min_speedup:
        return "NO_WIN"
    return "INCONCLUSIVE"


def speed_status(ev: SpeedEvidence, min_speedup: float, max_inflation: float) -> tuple[str, str]:
    """The status and the reason in words (without the numbers of :func:`describe`)."""
    pct = f"{min_speedup * 100:g} %"
    if ev.speedup is None:
        return "INCONCLUSIVE", "no step timing and no profiled period to compare"
    if ev.source == PAIRED:
        assert ev.ci_low is not None and ev.ci_high is not None
        status = paired_status(ev.ci_low, ev.ci_high, min_speedup)
        why = {
            "WIN": f"the whole CI is above 1 + {pct}",
            "REGRESSION": f"the whole CI is below 1 − {pct}",
            "NO_WIN": (f"statistically different from 1 but within ±{pct}"
                       if ev.ci_low > 1 or ev.ci_high < 1
                       else f"the whole CI lies within ±{pct} of 1"),
            "INCONCLUSIVE": f"the CI reaches beyond ±{pct} of 1 without clearing it",
        }[status]
        return status, why
    if ev.source == UNPAIRED:
        apart = ("modes timed in separate processes minutes apart, so drift between the runs "
                 "lands in the comparison")
        b10, b90, m10, m90 = ev.baseline_p10_ms, ev.baseline_p90_ms, ev.mode_p10_ms, ev.mode_p90_ms
        if None in (b10, b90, m10, m90):
            return "INCONCLUSIVE", f"no p10–p90 recorded; {apart}"
        assert b10 is not None and b90 is not None and m10 is not None and m90 is not None
        if m90 < b10 and ev.speedup >= 1 + min_speedup:
            return "WIN", f"the mode's p90 is below the baseline's p10 ({apart})"
        if m10 > b90 and ev.speedup <= 1 - min_speedup:
            return "REGRESSION", f"the mode's p10 is above the baseline's p90 ({apart})"
        return "INCONCLUSIVE", (f"the p10–p90 ranges overlap or the change is within ±{pct}; "
                                f"{apart}")
    if ev.source == TRACE:
        if ev.speedup > max(max_inflation, 1.0):  # never WIN unless the period is lower
            return "WIN", (f"the profiled period fell more than {max_inflation:g}×, beyond what "
                           "profiler inflation alone can produce")
        if 1 / ev.speedup > max(max_inflation, 1.0):
            return "REGRESSION", (f"the profiled period rose more than {max_inflation:g}×, "
                                  "beyond what profiler inflation alone can produce")
        return "INCONCLUSIVE", (f"within {max_inflation:g}× either way the profiler's "
                                "inflation can explain the change (no unprofiled timing)")
    return "INCONCLUSIVE", "no step timing and no profiled period to compare"


def speed_verdict(
    mode: str, baseline: str, ev: SpeedEvidence, t: Thresholds, context: tuple[str, ...] = (),
    drift: BaselineDrift | None = None,
) -> Verdict:
    """The ``speed`` verdict of one mode (rules in the module doc). ``drift``: the paired
    baseline against its own process (:func:`baseline_drift`), flagged in the explanation
    when it drifted; it never changes the status."""
    status, why = speed_status(ev, t.min_speedup, t.max_profiler_inflation)
    outcome = describe(ev, status)
    evidence = {"baseline": baseline, **ev.as_evidence(), "outcome": outcome,
                "context": list(context)}
    used = {"min_speedup": t.min_speedup}
    if ev.source == TRACE:
        used["max_profiler_inflation"] = t.max_profiler_inflation
    if drift is not None:
        evidence["baseline_drift"] = drift.as_evidence()
        used["baseline_drift_margin"] = drift.margin
    text = f"{outcome}: {why}"
    if ev.stopped in ("budget", "max_pairs"):
        limit = "time budget" if ev.stopped == "budget" else "pair limit"
        text += f"; pairing stopped at its {limit} before the CI narrowed to its target"
    if ev.note:
        text += f"; {ev.note}"
    if drift is not None and drift.drifted:
        text += f"; {drift.sentence(baseline)}"
    if context:
        text += f"; context: {'; '.join(context)}"
    return Verdict(mode, "speed", status, evidence, used, text)

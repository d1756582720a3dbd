"""Host-wait sources of a mode against the baseline's: the sources that grew and shrank (self
view, means per step over the steps with GPU work, ns) and the mode's largest informative
sources, with the clause a verdict explanation quotes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.informative import informative_sources
from traceviz.analyze.host_wait.labels import IN_REGION, display_name
from traceviz.analyze.host_wait.result import HostWaitSources

#: Sources listed each way (grew / shrank).
TOP_CHANGES = 5
#: Sources named in the explanation phrase (the largest informative ones).
PHRASE_SOURCES = 2


@dataclass(frozen=True)
class SourceChange:
    """Mean host wait per step of one source in the baseline and in the mode (ns)."""

    source: str
    baseline_ns: float
    mode_ns: float

    @property
    def delta_ns(self) -> float:
        return self.mode_ns - self.baseline_ns


@dataclass(frozen=True)
class HostWaitShift:
    """How a mode's host wait sources differ from the baseline's (means per step over the
    steps with GPU work; self view, so the changes of all sources sum to the total change)."""

    mode: str
    baseline: str
    baseline_ns: float  # mean host_wait + sync_wait per step
    mode_ns: float
    grew: tuple[SourceChange, ...]  # largest increase first, at most TOP_CHANGES
    shrank: tuple[SourceChange, ...]  # largest decrease first, at most TOP_CHANGES
    top: tuple[SourceChange, ...]  # the mode's largest informative sources (inclusive)

    def phrase(self) -> str:
        """One clause for a verdict explanation, in ms/step (means per step, said so), e.g.
        "means per step: host + sync wait 1.77 → 1.72
        ms/step; 1.07 ms/step in `Torch-Compiled Region: 0/0` (baseline 0.00), …". A source
        "stays" when its inclusive time moved by at most 10 % of its value in the mode. Values
        under 0.1 ms keep 2 significant digits (0.0042), others 2 decimals."""
        out = (f"means per step: host + sync wait {_ms(self.baseline_ns)} → "
               f"{_ms(self.mode_ns)} ms/step")
        parts = []
        for c in self.top:
            verb = "stays in" if abs(c.delta_ns) <= 0.1 * c.mode_ns else "in"
            parts.append(f"{_ms(c.mode_ns)} ms/step {verb} `{display_name(c.source)}` "
                         f"(baseline {_ms(c.baseline_ns)})")
        return out + ("; " + ", ".join(parts) if parts else "")


def _ms(ns: float) -> str:
    """ns as ms: 2 decimals, or 2 significant digits under 0.1 ms (so 4.2 µs is not 0.00)."""
    v = ns / 1e6
    return f"{v:.2g}" if 0 < abs(v) < 0.1 else f"{v:.2f}"


def _gpu_steps(step_period_ns: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.asarray(step_period_ns, np.int64) > 0)


def _baseline_value(base: dict[str, float], source: str) -> float:
    """The baseline's value of ``source``; when the baseline has no such label, that of the
    label's last part (``Torch-Compiled Region: 2/0 › f.py(36): opt`` is the same code as
    ``f.py(36): opt`` in an eager baseline); 0 when it has neither."""
    if source in base:
        return base[source]
    return base.get(source.rsplit(IN_REGION, 1)[-1], 0.0)


def host_wait_shift(mode: str, sources: HostWaitSources, step_period_ns: np.ndarray,
                    baseline: str, base_sources: HostWaitSources,
                    base_step_period_ns: np.ndarray) -> HostWaitShift:
    """Compare a mode's host-wait sources with the baseline's (``step_period_ns``: the period
    of every step, to pick the steps with GPU work over which means are taken)."""
    m_steps, b_steps = _gpu_steps(step_period_ns), _gpu_steps(base_step_period_ns)
    m_self, b_self = sources.per_step_self_ns(m_steps), base_sources.per_step_self_ns(b_steps)
    changes = [SourceChange(s, b_self.get(s, 0.0), m_self.get(s, 0.0))
               for s in sorted(set(m_self) | set(b_self))]
    grew = sorted((c for c in changes if c.delta_ns > 0), key=lambda c: (-c.delta_ns, c.source))
    shrank = sorted((c for c in changes if c.delta_ns < 0), key=lambda c: (c.delta_ns, c.source))
    m_total = float(sources.step_total_ns[m_steps].mean()) if len(m_steps) else 0.0
    b_total = float(base_sources.step_total_ns[b_steps].mean()) if len(b_steps) else 0.0
    m_inc = sources.per_step_inclusive_ns(m_steps)
    b_inc = base_sources.per_step_inclusive_ns(b_steps)
    named = [s for s, _ in informative_sources(sources) if s in m_inc]
    below = sorted(named, key=lambda s: (-m_inc[s], s))
    return HostWaitShift(
        mode=mode, baseline=baseline, baseline_ns=b_total, mode_ns=m_total,
        grew=tuple(grew[:TOP_CHANGES]), shrank=tuple(shrank[:TOP_CHANGES]),
        top=tuple(SourceChange(s, _baseline_value(b_inc, s), m_inc[s])
                  for s in below[:PHRASE_SOURCES]),
    )

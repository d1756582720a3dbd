"""The regression gate of ``traceviz check RUN --against BASELINE_RUN``: which modes of a run
fail against a baseline run (:class:`~traceviz.analyze.review.run_diff.RunComparison`, baseline run
= A, the run checked = B).

A mode that **ran** in the baseline run (status ``ok``) fails when, in the run checked:

* ``slower``: its **floor** (its fastest timing block per step in each run,
  :func:`~traceviz.analyze.review.run_speed.mode_floor`: other load on the machine only ever adds
  time to a block, so the fastest is the least disturbed) slowed by more than the **allowed
  slowdown** (below), ``floor_B / floor_A − 1 > allowed``: beyond what separate processes of
  identical code showed. The baseline (eager), whose code each run timed in several processes,
  needs nothing more. Any other mode ran in one process per run, and a process can run a mode
  slow in every block (a host-bound compiled step: 0.049 vs 0.073 ms/step fastest block in two
  H100 processes of identical code; 0.015 vs 0.044 on a CPU); so its step time must also be
  slower with the whole CI beyond ``max_slowdown`` (the slowdown at the CI's upper speed-up,
  ``1 / ci_high − 1``, more than ``max_slowdown``). At exactly a limit it passes. A diff that
  carries no floors (hand-built) has its CI's slowdown compared with the allowed slowdown;
* ``did not run``: its status is not ``ok`` (failed, skipped, a failed capture, absent);
* ``mismatch``: its outputs do not match (``correctness.ok`` false) where they did not fail
  in the baseline run;
* ``graph break``: it has more graph breaks than in the baseline run, or a break reason the
  baseline run did not have.

Each failure's message names the mode, the numbers and the kernel group that added the most
GPU time per step (the top kernel-level cause), when one did.

**The allowed slowdown** is the larger of ``max_slowdown`` and the **between-process spread of
identical code** (:attr:`~traceviz.analyze.review.run_diff.RunComparison.spread`: each run timed the
baseline's code in several processes, and the larger of the two runs' ``max / min − 1`` of
those per-process floors is how far separate processes of identical code ran apart on these
machines; :func:`~traceviz.analyze.review.run_speed.run_spread` defines it). Whatever its cause, a
slowdown beyond it fails: host time per step (more Python, more launches of the same kernels)
fails like GPU time, on every device (there is no host-only exemption; on the CPU every change
is host time). Where neither run could measure a spread (at most one process timed the
baseline in each), ``max_slowdown`` alone is the limit. A slowdown whose CI is beyond
``max_slowdown`` that the ``slower`` rule does not fail is a **warning**
(:func:`warnings`), not a failure. Measured on a shared 2-core CPU
(``benchmarks/gate_repeats.py``): ``docs/comparison.md``, "Regression gate".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from traceviz.analyze.review.run_diff import RunComparison, RunModeDiff
from traceviz.analyze.review.run_speed import RunSpeedChange, RunSpread


@dataclass(frozen=True)
class GateFailure:
    mode: str
    rule: str  # "slower", "did not run", "mismatch", "graph break"
    message: str


def parse_slowdown(text: str) -> float:
    """The allowed slowdown as a fraction: a percentage (``"5%"`` → 0.05, at least 0 and below
    1000 %) or a bare fraction below 1 (``"0.05"`` → 0.05). A bare number of 1 or more is
    refused: ``5`` could mean 5 % or 500 %, and the message shows both unambiguous forms."""
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        number = float(raw[:-1] if percent else raw)
    except ValueError:
        raise ValueError(f"--max-slowdown {text!r}: expected e.g. 5% or 0.05") from None
    if not percent and number >= 1 and math.isfinite(number):
        fraction = f" or {number / 100:g}" if number < 100 else ""
        raise ValueError(f"--max-slowdown {text!r} is ambiguous ({number:g} % or "
                         f"{number * 100:g} %?): a bare number is a fraction below 1; for "
                         f"{number:g} % write {number:g}%{fraction}")
    value = number / 100 if percent else number
    if not 0 <= value < 10:
        raise ValueError(f"--max-slowdown {text!r}: must be at least 0 and below 1000 %")
    return value


def _cause(d: RunModeDiff) -> str:
    cause = d.top_cause()
    return f"; top kernel-level cause: {cause}" if cause else ""


@dataclass(frozen=True)
class Limit:
    """The slowdown a mode may have (module doc): ``value`` = the larger of ``max_slowdown``
    and the spread's; ``spread``: (run "A" / "B", its between-process spread), ``None`` when
    neither run measured one; ``baseline``: the mode whose code each run timed in several
    processes."""

    max_slowdown: float
    spread: tuple[str, RunSpread] | None
    baseline: str = "eager"

    @property
    def value(self) -> float:
        return max(self.max_slowdown, self.spread[1].value if self.spread else 0.0)

    @property
    def by_spread(self) -> bool:
        """Whether the spread, not ``max_slowdown``, sets the limit."""
        return self.spread is not None and self.spread[1].value > self.max_slowdown

    def phrase(self, baseline: str) -> str:
        """Where the limit (:attr:`value`, stated by the caller) comes from, each number once:
        "run A's between-process spread of identical code (eager in …), above --max-slowdown
        5 %" or "--max-slowdown, above run A's between-process spread of identical code
        (1.9 %: eager in …)"."""
        if self.spread is None:
            return (f"--max-slowdown (no between-process spread: at most one process timed "
                    f"{baseline} in each run)")
        side, s = self.spread
        what = f"run {side}'s between-process spread of identical code"
        if self.by_spread:
            return (f"{what} ({baseline} in {s.source()}), above --max-slowdown "
                    f"{self.max_slowdown * 100:g} %")
        return f"--max-slowdown, above {what} ({s.value * 100:.1f} %: {baseline} in {s.source()})"


def limit_of(c: RunComparison, max_slowdown: float) -> Limit:
    """The gate's limit on comparison ``c`` (module doc)."""
    return Limit(max_slowdown, c.spread, c.baseline)


def _ci_slowdown(d: RunModeDiff) -> float | None:
    """The step time's slowdown at the CI's upper speed-up, ``1 / ci_high − 1`` (``None``: no
    speed)."""
    return None if d.speed is None else 1 / d.speed.speedup.high - 1


def _floor_slowdown(d: RunModeDiff) -> float | None:
    """``floor_B / floor_A − 1`` (``None``: no floors; then the CI's slowdown stands in)."""
    if d.floor_ms.a is not None and d.floor_ms.b is not None:
        return d.floor_ms.b / d.floor_ms.a - 1
    return _ci_slowdown(d)


def _numbers(d: RunModeDiff, s: RunSpeedChange) -> str:
    """The slowdown's numbers (``s``: the mode's speed change), each once: the floors, the
    median step times and the slowdown's CI."""
    floor = ("" if d.floor_ms.a is None or d.floor_ms.b is None else
             f"fastest block {d.floor_ms.a:.4g} → {d.floor_ms.b:.4g} ms/step, "
             f"{(d.floor_ms.b / d.floor_ms.a - 1) * 100:+.1f} %; ")
    return (f"{floor}median {s.step_ms_a:.4g} → {s.step_ms_b:.4g} ms/step, "
            f"{s.change * 100:+.1f} % (slowdown {s.level * 100:.0f} % CI "
            f"{(1 / s.speedup.high - 1) * 100:+.1f} to {(1 / s.speedup.low - 1) * 100:+.1f} %)")


def _slower(d: RunModeDiff, lim: Limit) -> bool:
    """The ``slower`` rule (module doc): the floor beyond the allowed slowdown, and for a mode
    other than the baseline the CI beyond ``max_slowdown`` too."""
    ci, floor = _ci_slowdown(d), _floor_slowdown(d)
    if ci is None or floor is None or floor <= lim.value:
        return False
    return d.mode == lim.baseline or ci > lim.max_slowdown


def mode_failures(d: RunModeDiff, max_slowdown: float,
                  limit: Limit | None = None) -> list[GateFailure]:
    """The gate's failures of one mode (module doc); ``limit``: the comparison's (default:
    ``max_slowdown`` alone, no spread)."""
    lim = limit or Limit(max_slowdown, None)
    if d.status_a != "ok":
        return []
    if d.status_b != "ok":
        why = next((m.message for m in d.messages if m.what == "failure" and m.side == "added"),
                   d.status_b)
        return [GateFailure(d.mode, "did not run", f"{d.mode}: ran in the baseline run, "
                            f"not in this one ({why})")]
    out = []
    s = d.speed
    if s is not None and _slower(d, lim):
        out.append(GateFailure(d.mode, "slower", (
            f"{d.mode}: {_numbers(d, s)}, beyond the {lim.value * 100:.1f} % allowed"
            f"{_cause(d)}")))
    if d.correctness[1] is False and d.correctness[0] is not False:
        out.append(GateFailure(d.mode, "mismatch", f"{d.mode}: outputs no longer match the "
                               f"eager reference{_cause(d)}"))
    ga, gb = d.graph_breaks.a or 0, d.graph_breaks.b or 0
    new = [m.message for m in d.messages if m.what == "graph break" and m.side == "added"]
    if gb > ga or new:
        said = f" ({'; '.join(new)})" if new else ""
        out.append(GateFailure(d.mode, "graph break", f"{d.mode}: graph breaks {ga:g} → "
                               f"{gb:g}{said}"))
    return out


def warnings(c: RunComparison, max_slowdown: float) -> tuple[GateFailure, ...]:
    """Slowdowns whose whole CI is beyond ``max_slowdown`` but that the ``slower`` rule did not
    fail (module doc: the floor stayed within the allowed slowdown): reported, not failed."""
    lim = limit_of(c, max_slowdown)
    return tuple(
        GateFailure(d.mode, "within spread", f"{d.mode}: {_numbers(d, d.speed)}, not failed: "
                    f"its fastest block within the {lim.value * 100:.1f} % allowed")
        for d in c.modes if d.status_a == "ok" and d.status_b == "ok" and d.speed is not None
        and (_ci_slowdown(d) or 0.0) > max_slowdown and not _slower(d, lim))


def gate(c: RunComparison, max_slowdown: float) -> tuple[GateFailure, ...]:
    """Every mode's failures, in the comparison's mode order, against the comparison's limit
    (:func:`limit_of`)."""
    lim = limit_of(c, max_slowdown)
    return tuple(f for d in c.modes for f in mode_failures(d, max_slowdown, lim))

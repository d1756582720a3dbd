"""The regression gate of ``traceviz check RUN --against BASELINE_RUN``: which modes of a run
fail against a baseline run (:class:`~traceviz.analyze.run_diff.RunComparison`, baseline run
= A, the run checked = B).

A mode that **ran** in the baseline run (status ``ok``) fails when, in the run checked:

* ``slower``: its step time is slower with the whole CI beyond ``max_slowdown``: the slowdown
  ``1 / speed-up − 1`` at the CI's upper speed-up, ``1 / ci_high − 1``, is **more than**
  ``max_slowdown`` (at exactly the limit it passes);
* ``did not run``: its status is not ``ok`` (failed, skipped, a failed capture, absent);
* ``mismatch``: its outputs do not match (``correctness.ok`` false) where they did not fail
  in the baseline run;
* ``graph break``: it has more graph breaks than in the baseline run, or a break reason the
  baseline run did not have.

Each failure's message names the mode, the numbers and the kernel group that added the most
GPU time per step (the top kernel-level cause), when one did.

A slowdown beyond the limit that is **host-only**
(:func:`~traceviz.analyze.run_diff.host_only_note`: the kernels match and explain under half of
it) is a **warning** (:func:`warnings`), not a failure: separate processes of the same code
differ that much in host time, so failing on it would fail identical code. Gate host-side
changes on ``profile NEW --against OLD``, which times both versions in one process.
"""

from __future__ import annotations

from dataclasses import dataclass

from traceviz.analyze.run_diff import RunComparison, RunModeDiff


@dataclass(frozen=True)
class GateFailure:
    mode: str
    rule: str  # "slower", "did not run", "mismatch", "graph break"
    message: str


def parse_slowdown(text: str) -> float:
    """``"5%"`` or ``"0.05"`` → 0.05; a finite value in [0, 10)."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"--max-slowdown {text!r}: expected e.g. 5% or 0.05") from None
    if not 0 <= value < 10:
        raise ValueError(f"--max-slowdown {text!r}: must be at least 0 and below 1000 %")
    return value


def _cause(d: RunModeDiff) -> str:
    cause = d.top_cause()
    return f"; top kernel-level cause: {cause}" if cause else ""


def mode_failures(d: RunModeDiff, max_slowdown: float) -> list[GateFailure]:
    """The gate's failures of one mode (module doc)."""
    if d.status_a != "ok":
        return []
    if d.status_b != "ok":
        why = next((m.message for m in d.messages if m.what == "failure" and m.side == "added"),
                   d.status_b)
        return [GateFailure(d.mode, "did not run", f"{d.mode}: ran in the baseline run, "
                            f"not in this one ({why})")]
    out = []
    s = d.speed
    if s is not None and 1 / s.speedup.high - 1 > max_slowdown and not _host_only(d):
        out.append(GateFailure(d.mode, "slower", (
            f"{d.mode}: {s.step_ms_a:.4g} → {s.step_ms_b:.4g} ms/step, {s.change * 100:+.1f} % "
            f"(slowdown {s.level * 100:.0f} % CI {(1 / s.speedup.high - 1) * 100:+.1f} to "
            f"{(1 / s.speedup.low - 1) * 100:+.1f} %), entirely beyond the "
            f"{max_slowdown * 100:g} % allowed{_cause(d)}")))
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


def _host_only(d: RunModeDiff) -> bool:
    return d.speed is not None and bool(d.note)


def warnings(c: RunComparison, max_slowdown: float) -> tuple[GateFailure, ...]:
    """Host-only slowdowns beyond the limit (module doc): reported, not failed."""
    return tuple(
        GateFailure(d.mode, "host-only", f"{d.mode}: {d.speed.step_ms_a:.4g} → "
                    f"{d.speed.step_ms_b:.4g} ms/step, {d.speed.change * 100:+.1f} %, not "
                    f"failed: {d.note}")
        for d in c.modes if d.status_a == "ok" and d.status_b == "ok" and _host_only(d)
        and d.speed is not None and 1 / d.speed.speedup.high - 1 > max_slowdown)


def gate(c: RunComparison, max_slowdown: float) -> tuple[GateFailure, ...]:
    """Every mode's failures, in the comparison's mode order."""
    return tuple(f for d in c.modes for f in mode_failures(d, max_slowdown))

"""The ``launch`` verdict on the unprofiled split: did removing launch overhead make it faster?

Read from the paired blocks (:mod:`traceviz.analyze.compare.unprofiled`), which no profiler
touched, so the profiler's own per-op cost cannot bend it. Rules (``docs/comparison.md``):

* speed **WIN**: the baseline must be host-bound
  (:func:`~traceviz.analyze.compare.unprofiled.bound_call`: the lean trace's compute busy fills less
  than ``gpu_bound_min_compute_share`` of the unprofiled step, or the GPU ended at most
  ``host_bound_max_lag_steps`` behind the host beyond the block's tail), else NO_WIN (the GPU
  set the pace, so issuing faster could not help).
  Then with the share of the step time saved that the saving of host issue time explains
  (``issue_share``, with its bootstrap CI from the speed-up's resamples): WIN when the whole CI
  is at or above ``launch_min_wait_share``; NO_WIN when the whole CI is below it (the time came
  from GPU work); INCONCLUSIVE when the CI straddles it, or when the time saved's own CI
  reaches zero (no share can be formed) — with the numbers.
* speed **REGRESSION**: symmetric, on the slower side: the mode host-bound and the growth of
  issue time explaining at least ``launch_min_wait_share`` of the time added → REGRESSION.
* speed NO_WIN → NO_WIN; speed INCONCLUSIVE → INCONCLUSIVE; outputs that do not match →
  INCONCLUSIVE.

When a host-bound side issues at least
:data:`~traceviz.analyze.compare.unprofiled.LAUNCH_QUEUE_DEPTH` launches per step (lean trace),
the host may have waited on a full launch queue inside a step, which reads as host time: the
explanation says so.
"""

from __future__ import annotations

from typing import Any

from traceviz.analyze.compare.unprofiled import (
    COMPUTE_FILLS,
    COMPUTE_SHORT,
    LAUNCH_QUEUE_DEPTH,
    Estimate,
    Side,
    UnprofiledSplit,
)
from traceviz.analyze.verdicts import (
    INCONCLUSIVE,
    NO_WIN,
    REGRESSION,
    WIN,
    Thresholds,
    Verdict,
    VerdictInputs,
)


def _ms(x: float) -> str:
    """A per-step time: ms from 0.1 ms up, else µs."""
    return f"{x:,.3f} ms" if abs(x) >= 0.1 else f"{x * 1000:,.1f} µs"


def _ci(e: Estimate, pct: bool = False) -> str:
    if pct:
        return f"{e.value * 100:.0f}% (CI {e.low * 100:.0f}–{e.high * 100:.0f}%)"
    return f"{_ms(e.value)} (CI {_ms(e.low)} – {_ms(e.high)})"


def _compute(side: Side) -> str:
    """"compute busy 6.7 µs (15%) of it" (lean trace), or "" without one."""
    if side.compute_busy_ms is None or side.compute_share is None:
        return ""
    return (f"; the lean trace's compute busy {_ms(side.compute_busy_ms)} is "
            f"{side.compute_share * 100:.0f}% of it")


def _lag(side: Side) -> str:
    """"the GPU ended 0.2 steps behind the host beyond the block's tail (…)"."""
    beyond = side.lag_beyond_tail_steps
    lag = side.lag_steps.value if beyond is None else beyond.value
    return (f"the GPU ended {max(lag, 0):,.2f} steps behind the host beyond the block's "
            f"{_ms(side.tail_ms)} tail (one step's compute busy and the launch latency)")


def _bound(name: str, side: Side) -> str:
    """"baseline host-bound: …" / "baseline GPU-bound: …" with its numbers and its reason
    (:func:`traceviz.analyze.compare.unprofiled.bound_call`)."""
    step = f"host issue {_ms(side.issue_ms)} of a {_ms(side.period_ms)} step{_compute(side)}"
    if side.host_bound:
        why = (", so the GPU cannot have set the pace" if side.bound_reason == COMPUTE_SHORT
               else f"; {_lag(side)}")
        return f"{name} host-bound without the profiler ({step}{why})"
    why = (", so the GPU set the pace" if side.bound_reason == COMPUTE_FILLS
           else f"; {_lag(side)}, so the GPU set the pace")
    return f"{name} GPU-bound without the profiler ({step}{why})"


def _bound_evidence(side: Side) -> dict[str, Any]:
    """The numbers of a side's bound call (ms, steps, share)."""
    beyond = side.lag_beyond_tail_steps
    return {"host_bound": side.host_bound, "reason": side.bound_reason,
            "lag_steps": side.lag_steps.value,
            "lag_beyond_tail_steps": None if beyond is None else beyond.value,
            "tail_ms": side.tail_ms, "compute_busy_ms": side.compute_busy_ms,
            "compute_share": side.compute_share, "launches_per_step": side.launches}


def _evidence(mode: VerdictInputs, base: VerdictInputs, speed: Verdict,
              split: UnprofiledSplit) -> dict[str, Any]:
    def est(e: Estimate | None) -> list[float] | None:
        return None if e is None else [e.value, e.low, e.high]

    return {
        "baseline": base.mode,
        "rules": "unprofiled",
        "evidence_source": speed.evidence.get("evidence_source"),
        "speed": speed.status,
        "launches_per_step": [base.launches, mode.launches],
        "step_ms_in_pairs": [split.baseline.period_ms, split.mode.period_ms],
        "host_issue_ms": [split.baseline.issue_ms, split.mode.issue_ms],
        "lag_steps": [split.baseline.lag_steps.value, split.mode.lag_steps.value],
        "host_bound": [split.baseline.host_bound, split.mode.host_bound],
        "bound_call": [_bound_evidence(split.baseline), _bound_evidence(split.mode)],
        "saved_ms": est(split.saved_ms),
        "issue_saved_ms": est(split.issue_saved_ms),
        "issue_share": est(split.issue_share),
        "level": split.level,
        "pairs": split.pairs,
        "profiler_inflation": mode.inflation,
        "correctness_ok": mode.correctness_ok,
        "context": list(mode.context),
    }


def _queue_note(side: Side, launches: float) -> str:
    if side.host_bound and launches >= LAUNCH_QUEUE_DEPTH:
        return (f"; a step issues {launches:,g} launches, at least the ~{LAUNCH_QUEUE_DEPTH:,} "
                "the launch queue holds, so part of the host time may be waiting on a full "
                "queue")
    return ""


def launch_verdict(
    mode: VerdictInputs, base: VerdictInputs, speed: Verdict, split: UnprofiledSplit,
    t: Thresholds,
) -> Verdict:
    """The launch verdict of one mode on its unprofiled split (rules in the module doc)."""
    used = {"launch_min_wait_share": t.launch_min_wait_share,
            "host_bound_max_lag_steps": t.host_bound_max_lag_steps,
            "block_tail_allowance_us": t.block_tail_allowance_us,
            "gpu_bound_min_compute_share": t.gpu_bound_min_compute_share,
            "gpu_bound_busy_share": t.gpu_bound_busy_share}
    evidence = _evidence(mode, base, speed, split)
    issue = (f"host issue {_ms(split.baseline.issue_ms)} → {_ms(split.mode.issue_ms)} per step, "
             f"step {_ms(split.baseline.period_ms)} → {_ms(split.mode.period_ms)} (medians "
             f"inside {split.pairs} pairs, no profiler)")

    def verdict(status: str, text: str) -> Verdict:
        text = f"{text}; {issue}"
        if mode.context:
            text += f"; context: {'; '.join(mode.context)}"
        return Verdict(mode.mode, "launch", status, evidence, used, text)

    speed_text = f"speed {speed.status}: {speed.evidence.get('outcome', '')}".rstrip(": ")
    need = f"{t.launch_min_wait_share * 100:.0f}%"
    if mode.correctness_ok is False:
        return verdict(INCONCLUSIVE, "outputs do not match the baseline")
    if split.host_is_device:
        return verdict(INCONCLUSIVE, "on the CPU the host is the device: host issue time and "
                       "step time are one measurement, so launch overhead cannot be told apart")
    if speed.status in (NO_WIN, INCONCLUSIVE):
        return verdict(speed.status, speed_text)
    faster = speed.status == WIN
    side, name = (split.baseline, "baseline") if faster else (split.mode, "mode")
    share = split.issue_share
    moved = "saved" if faster else "added"
    issue_moved = split.issue_saved_ms if faster else Estimate(
        -split.issue_saved_ms.value, -split.issue_saved_ms.high, -split.issue_saved_ms.low)
    time_moved = split.saved_ms if faster else Estimate(
        -split.saved_ms.value, -split.saved_ms.high, -split.saved_ms.low)
    queue = _queue_note(side, base.launches if faster else mode.launches)
    if not side.host_bound:
        return verdict(NO_WIN, f"{speed_text}, but the {_bound(name, side)}: not launch "
                       f"overhead{queue}")
    if share is None:
        return verdict(INCONCLUSIVE, f"{speed_text}; {_bound(name, side)}, but the CI of the "
                       f"step time {moved} ({_ci(time_moved)}) reaches zero, so no share of it "
                       "can be given to host issue time")
    facts = (f"host issue time {moved} {_ci(issue_moved)} is {_ci(share, pct=True)} of the "
             f"{_ci(time_moved)} per step {moved}")
    if share.low >= t.launch_min_wait_share:
        status = WIN if faster else REGRESSION
        what = "launch overhead removed" if faster else "launch overhead added"
        return verdict(status, f"{what}: {facts}; {_bound(name, side)}{queue}")
    if share.high < t.launch_min_wait_share:
        return verdict(NO_WIN, f"{speed_text}, but {facts} (at least {need} needed): the time "
                       f"came from GPU work; {_bound(name, side)}{queue}")
    return verdict(INCONCLUSIVE, f"{speed_text}; {facts}: the CI straddles the {need} needed, "
                   f"so host issue and GPU work cannot be told apart; {_bound(name, side)}"
                   f"{queue}")

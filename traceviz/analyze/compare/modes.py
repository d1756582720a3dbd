"""Compare modes (or any traces) against a baseline: rows, waterfalls and verdicts.

Inputs are one :class:`ModeInput` per mode: the :class:`~traceviz.analyze.model.Analysis` of its
trace plus, for a run directory, the mode's manifest entry (see
:mod:`traceviz.collect.manifest`). Which statistic each number uses:

* rows (kernels/step, launches/step, busy/step, period, ``cpu_bound_share``): **medians** over
  the steps with GPU work (:class:`~traceviz.analyze.model.PerStep`), robust to one odd step;
  in a trace with communication kernels, kernels/step counts **compute kernels** only and
  ``comm_kernels`` the communication kernels (:func:`kernel_counts`);
* waterfall (:mod:`traceviz.analyze.compare.waterfall`): in unprofiled units when the mode has the
  unprofiled split (:mod:`traceviz.analyze.compare.unprofiled`: paired blocks with host issue
  times) — the pair-level baseline step time, the paired speed-up, and the lean traces' mean GPU
  busy — else per-step **means** of the five profiled period components;
* unprofiled step time: the manifest's median and p10–p90 (milliseconds), each mode timed in
  its own process; the pair-level medians (both sides timed in the mode's process) are the
  split's;
* profiler inflation: the manifest's ``profiled.inflation`` when it records the unprofiled step
  time measured next to the profiled window in the same process (``adjacent_unprofiled_ms``,
  :class:`traceviz.collect.tracing.ProfiledWindow`: median step times since 2026-11-25); else
  profiled / unprofiled median step time, where "profiled" is the manifest's wall time per
  step under the profiler (``profiled.step_ms``) when recorded, else the GPU period;
  ``stack_inflation`` the same of the stacked trace (``stack_profiled``);
* speed: the manifest's paired timing (schema 2), else the unpaired medians, else the profiled
  period (:mod:`traceviz.analyze.compare.speed`); with paired timing, a baseline whose pair-level
  median left its own-process p10–p90 (widened by ``baseline_drift_margin``) is flagged in the
  speed verdict and in :attr:`Comparison.notes`;
* GPU busy spread: p90 − p10 of the per-step GPU busy over the steps with GPU work (numpy's
  linear-interpolation percentiles), what a fusion's busy drop must exceed.

Definitions and thresholds: ``docs/comparison.md``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from traceviz.analyze.compare.headline import Headline, build_headline
from traceviz.analyze.compare.launch_unprofiled import launch_verdict as unprofiled_launch_verdict
from traceviz.analyze.compare.speed import (
    NO_EVIDENCE,
    PAIRED,
    TRACE,
    SpeedEvidence,
    Timing,
    baseline_drift,
    speed_evidence,
    speed_verdict,
)
from traceviz.analyze.compare.unprofiled import UnprofiledSplit, gpu_work, split_from_paired
from traceviz.analyze.compare.waterfall import (
    LeanParts,
    Waterfall,
    build_unprofiled_waterfall,
    build_waterfall,
)
from traceviz.analyze.distributed.bounding import (
    BoundingRank,
    as_evidence,
    bounding_paired,
    confirm_stragglers,
)
from traceviz.analyze.distributed.launch import (
    LaunchEvidence,
    distributed_launch_verdict,
    straggler_cause,
    without_unconfirmed,
)
from traceviz.analyze.host_wait import HostWaitShift, host_wait_shift
from traceviz.analyze.model import Analysis
from traceviz.analyze.verdicts import (
    INCONCLUSIVE,
    KINDS,
    SKIPPED,
    PeriodChange,
    Thresholds,
    Verdict,
    VerdictInputs,
    fusion_verdict,
    verdicts_for,
)


@dataclass(frozen=True)
class ModeInput:
    """One mode (or trace) to compare. ``analysis`` is ``None`` when the mode did not run."""

    mode: str
    trace_path: str | None
    analysis: Analysis | None
    manifest: dict[str, Any] | None = None  # the mode's manifest entry, if from a run dir
    device: str | None = None
    #: the straggler / peers evidence of a ``profile --nproc`` mode (from its manifest)
    ranks: LaunchEvidence | None = None
    #: the analysis of the mode's stacked trace (Python stacks), read for host-wait sources only
    stack_analysis: Analysis | None = None
    #: a distributed mode's bounding rank (the straggler, else the slowest rank) and its exposed
    #: communication (:mod:`traceviz.analyze.distributed.bounding`)
    bounding: BoundingRank | None = None


@dataclass(frozen=True)
class ComparisonRow:
    """One mode's line of the comparison table. ``None``: not known for this input."""

    mode: str
    status: str  # "ok", or the manifest's status ("skipped", "failed", ...)
    reason: str | None
    trace: str | None
    time_median_ms: float | None  # unprofiled step time (manifest)
    time_p10_ms: float | None
    time_p90_ms: float | None
    time_noisy: bool
    period_ms: float | None  # profiled GPU period per step (median)
    profiled_step_ms: float | None  # wall time per step under the profiler (manifest)
    inflation: float | None  # profiled (lean trace) / unprofiled step time (see build_row)
    kernels: float | None  # compute kernels per step (median): communication kernels left out
    launches: float | None
    kernels_per_launch: float | None  # GPU activities per launch call
    gpu_busy_ms: float | None
    cpu_bound_share: float | None
    first_call_s: float | None  # compile / capture time of the first call
    peak_mem_bytes: int | None
    correctness_ok: bool | None
    correctness_detail: str | None
    graphs: int | None
    graph_breaks: int | None
    break_reasons: tuple[str, ...] = ()
    recompiles: int | None = None
    cudagraph_skips: tuple[str, ...] = ()
    stack_inflation: float | None = None  # the stacked trace's step time / unprofiled
    #: communication kernels per step (median); None for a trace without them
    comm_kernels: float | None = None


@dataclass(frozen=True)
class Comparison:
    """The comparison of several modes against one baseline."""

    baseline: str
    rows: tuple[ComparisonRow, ...]
    waterfalls: tuple[Waterfall, ...]
    verdicts: tuple[Verdict, ...]
    thresholds: Thresholds
    notes: tuple[str, ...] = ()
    headlines: tuple[Headline, ...] = ()  # one per non-baseline mode, in row order
    host_wait_shifts: tuple[HostWaitShift, ...] = ()  # per analysed mode, vs the baseline
    #: mode → its unprofiled host/GPU split (modes with paired timing and host issue times)
    unprofiled: dict[str, UnprofiledSplit] = field(default_factory=dict)

    def headline(self, mode: str) -> Headline | None:
        return next((h for h in self.headlines if h.mode == mode), None)


def _get(d: dict[str, Any] | None, *keys: str) -> Any:
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _strings(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    if isinstance(value, dict):
        return tuple(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return (str(value),)


#: A skip message that ends in a dangling "Found from :" (the location was cut off).
_DANGLING = re.compile(r"[.\s]*Found from\s*:?\s*$")


def skip_messages(value: Any) -> tuple[str, ...]:
    """Cudagraph skip messages, each whole; a trailing "Found from :" with nothing after it is
    dropped rather than shown dangling."""
    return tuple(_DANGLING.sub("", m).strip() or m for m in _strings(value))


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    """An int, or the length of a list (manifests may list recompiles / graphs)."""
    if isinstance(value, (list, tuple)):
        return len(value)
    return _int(value)


def _inflation(m: dict[str, Any] | None, key: str, profiled_ms: float | None,
               median_ms: float | None) -> float | None:
    """A trace's profiler inflation (see the module docstring): the manifest's, measured against
    the adjacent unprofiled windows, when recorded; else ``profiled_ms`` (default: the record's
    ``step_ms``) over the mode's unprofiled median."""
    if _float(_get(m, key, "adjacent_unprofiled_ms")) is not None:
        return _float(_get(m, key, "inflation"))
    profiled = profiled_ms if profiled_ms is not None else _float(_get(m, key, "step_ms"))
    return profiled / median_ms if profiled and median_ms else None


@dataclass(frozen=True)
class KernelCounts:
    """Per-step kernel counts of one trace, medians over the steps with GPU work."""

    kernels: float  # compute kernels: every kernel but the communication kernels
    activities: float  # GPU activities less the communication kernels
    comm_kernels: float | None  # None: the trace has no communication kernel


def kernel_counts(a: Analysis) -> KernelCounts:
    """The compute / communication kernel counts per step of ``a`` (each a median of the
    per-step values, so compute kernels are the median of kernels − communication kernels,
    not a difference of medians); a trace without communication kernels keeps
    :class:`~traceviz.analyze.model.PerStep`'s counts."""
    if a.comm is None:
        return KernelCounts(a.per_step.kernels, a.per_step.activities, None)
    has = a.steps.has_gpu()
    comm = a.comm.steps.column("comm_kernels")

    def med(values: np.ndarray) -> float:
        return float(np.median(values[has])) if has.any() else 0.0

    return KernelCounts(med(a.compute_kernels()), med(a.steps.activities() - comm), med(comm))


def build_row(inp: ModeInput) -> ComparisonRow:
    """The comparison row of one input (manifest fields are ``None`` without a manifest)."""
    m = inp.manifest
    status = str(_get(m, "status") or ("ok" if inp.analysis is not None else "missing"))
    median = _float(_get(m, "timing", "median_ms"))
    # A CPU run's trace has no GPU side: its kernel, launch and busy columns do not apply.
    gpu = inp.analysis is not None and not _ran_on_cpu(inp.analysis)
    ps = inp.analysis.per_step if gpu else None
    counts = kernel_counts(inp.analysis) if gpu else None
    period_ms = ps.period_ns / 1e6 if ps is not None and ps.period_ns > 0 else None
    profiled_ms = _float(_get(m, "profiled", "step_ms"))
    profiled = profiled_ms if profiled_ms is not None else period_ms
    correct = _get(m, "correctness", "ok")
    detail = _get(m, "correctness")
    detail_text = None
    if isinstance(detail, dict):
        extra = {k: v for k, v in detail.items() if k != "ok"}
        detail_text = ", ".join(f"{k}={v}" for k, v in sorted(extra.items())) or None
    return ComparisonRow(
        mode=inp.mode,
        status=status,
        reason=_get(m, "reason"),
        trace=inp.trace_path,
        time_median_ms=median,
        time_p10_ms=_float(_get(m, "timing", "p10_ms")),
        time_p90_ms=_float(_get(m, "timing", "p90_ms")),
        time_noisy=bool(_get(m, "timing", "noisy")),
        period_ms=period_ms,
        profiled_step_ms=profiled_ms,
        inflation=_inflation(m, "profiled", profiled, median),
        kernels=counts.kernels if counts else None,
        launches=ps.launches if ps else None,
        kernels_per_launch=ps.kernels_per_launch if ps else None,
        gpu_busy_ms=ps.gpu_busy_ns / 1e6 if ps else None,
        cpu_bound_share=ps.cpu_bound_share if ps else None,
        first_call_s=_float(_get(m, "first_call_s")),
        peak_mem_bytes=_int(_get(m, "peak_mem_bytes")),
        correctness_ok=correct if isinstance(correct, bool) else None,
        correctness_detail=detail_text,
        graphs=_count(_get(m, "compile", "graphs")),
        graph_breaks=_count(_get(m, "compile", "graph_breaks")),
        break_reasons=_strings(_get(m, "compile", "break_reasons")),
        recompiles=_count(_get(m, "compile", "recompiles")),
        cudagraph_skips=skip_messages(_get(m, "compile", "cudagraph_skips")),
        stack_inflation=_inflation(m, "stack_profiled", None, median),
        comm_kernels=counts.comm_kernels if counts else None,
    )


def _gpu_works(inp: ModeInput, base: ModeInput) -> dict[str, Any]:
    """The lean-trace GPU work of both sides, for the split's bound call."""
    return {"baseline_gpu": None if base.analysis is None else gpu_work(base.analysis),
            "mode_gpu": None if inp.analysis is None else gpu_work(inp.analysis)}


def unprofiled_split(inp: ModeInput, ev: SpeedEvidence, t: Thresholds,
                     base: ModeInput | None = None) -> UnprofiledSplit | None:
    """The mode's unprofiled split, when its speed comes from paired timing with host issue
    times (manifest schema 3); ``base``: the baseline, whose lean trace the bound call reads."""
    paired = _get(inp.manifest, "paired")
    if ev.source != PAIRED or not isinstance(paired, dict):
        return None
    gpu = _gpu_works(inp, base) if base is not None else {}
    return split_from_paired(paired, t, **gpu)


def _bounding_lean(inp: ModeInput, base: ModeInput) -> tuple[LeanParts, LeanParts] | None:
    """The lean parts of the bounding ranks (baseline's, mode's), when both modes have one."""
    b, m = base.bounding, inp.bounding
    if b is None or m is None or b.lean is None or m.lean is None:
        return None
    return b.lean, m.lean


def confirmed_stragglers(inp: ModeInput, base: ModeInput, t: Thresholds
                         ) -> tuple[ModeInput, ModeInput]:
    """The mode and its baseline with their bounding ranks' host-caused stragglers confirmed,
    or not, by the mode's lockstep per-rank issue times (:func:`traceviz.analyze.distributed.
    bounding.confirm_stragglers`); an unconfirmed straggler leaves the launch evidence too."""
    if inp.bounding is None or base.bounding is None:
        return inp, base
    causes = (straggler_cause(base.ranks, t.straggler_min_share),
              straggler_cause(inp.ranks, t.straggler_min_share))
    b, m = confirm_stragglers(_get(inp.manifest, "paired"), (base.bounding, inp.bounding),
                              causes, t.straggler_min_host_share)
    return (replace(inp, bounding=m, ranks=without_unconfirmed(inp.ranks, m)),
            replace(base, bounding=b, ranks=without_unconfirmed(base.ranks, b)))


def bounding_split(inp: ModeInput, base: ModeInput, t: Thresholds) -> UnprofiledSplit | None:
    """The unprofiled split on the host issue times of the bounding ranks (baseline side: the
    baseline's, mode side: the mode's; :func:`traceviz.analyze.distributed.bounding.
    bounding_paired`); ``None`` unless both modes are distributed and the mode's paired block
    records every rank's issue times. Whether the host is the device (CPU) is the block's own
    split's."""
    paired = _get(inp.manifest, "paired")
    if inp.bounding is None or base.bounding is None or not isinstance(paired, dict):
        return None
    bounded = bounding_paired(paired, base.bounding.rank, inp.bounding.rank)
    split = (None if bounded is None
             else split_from_paired(bounded, t, **_gpu_works(inp, base)))
    own = split_from_paired(paired, t)
    if split is None or own is None:
        return None
    # On the CPU the host is the device on every rank: each block's issue time is its time,
    # which a bounding rank's issue time (against another rank's block) no longer shows.
    return replace(split, host_is_device=own.host_is_device)


def rules_note(inp: ModeInput, ev: SpeedEvidence) -> str:
    """Why a mode's fusion / launch verdicts use the profiled-trace rules."""
    if inp.manifest is None:
        return "profiled-trace rules: trace files carry no unprofiled timing"
    if ev.source == PAIRED:
        return ("profiled-trace rules: this run's paired timing has no host issue times "
                "(manifest schema 2 or older)")
    return "profiled-trace rules: no paired timing to split"


def _has_gpu_steps(analysis: Analysis | None) -> bool:
    return analysis is not None and bool((analysis.steps.column("period_ns") > 0).any())


def _ran_on_cpu(analysis: Analysis | None) -> bool:
    """A trace of a step that ran on the CPU (:attr:`Analysis.cpu_only`; a CUDA trace whose GPU
    activity CUPTI lost still has its launch calls)."""
    return analysis is not None and analysis.cpu_only


#: Why a comparison of CPU runs has no fusion, launch or count evidence.
CPU_RUN = ("the steps ran on the CPU (no GPU activity or launch in the traces): kernel counts, "
           "launches, fusion and launch verdicts need a GPU run")


def _median_copies(analysis: Analysis) -> tuple[float, float]:
    """Median cudagraph input copies per step and their median GPU time per step (ns)."""
    steps = analysis.compile.steps
    if not len(steps):
        return 0.0, 0.0
    return (float(statistics.median(steps.column("input_copies").tolist())),
            float(statistics.median(steps.column("input_copy_ns").tolist())))


def mode_context(row: ComparisonRow, analysis: Analysis | None) -> tuple[str, ...]:
    """What a reader must know about a mode beside its numbers, in words: cudagraph skips,
    graph breaks (with reasons), recompiles, a failed run or capture, input copies."""
    out = [f"cudagraphs skipped: {m}" for m in row.cudagraph_skips]
    if row.graph_breaks:
        reasons = f" ({'; '.join(row.break_reasons)})" if row.break_reasons else ""
        out.append(f"{row.graph_breaks} graph break{'s' if row.graph_breaks != 1 else ''}"
                   f"{reasons}")
    if row.recompiles:
        out.append(f"{row.recompiles} recompile{'s' if row.recompiles != 1 else ''}")
    if row.status not in ("ok", "missing"):
        out.append(f"{row.status}" + (f": {row.reason}" if row.reason else ""))
    if analysis is not None:
        n, ns = _median_copies(analysis)
        if n > 0:
            out.append(f"{n:g} cudagraph input cop{'y' if n == 1 else 'ies'} per step "
                       f"({ns / 1000:,.1f} µs/step)")
    return tuple(out)


def verdict_inputs(inp: ModeInput, row: ComparisonRow) -> VerdictInputs:
    """The numbers a verdict needs from one analysed mode."""
    a = inp.analysis
    assert a is not None
    ps = a.per_step
    copies, copy_ns = _median_copies(a)
    top = max(a.kernel_families, key=lambda f: f.total_ns, default=None)
    with_gpu = a.steps.column("period_ns") > 0
    busy = a.compute_busy()[with_gpu].astype(np.float64)
    p10, p90 = np.percentile(busy, [10, 90]) if busy.size else (0.0, 0.0)
    exposed = None if a.comm is None else a.comm.median_exposed_comm_ns(with_gpu)
    counts = kernel_counts(a)
    return VerdictInputs(
        mode=inp.mode,
        kernels=counts.kernels,
        activities=counts.activities,
        launches=ps.launches,
        gpu_busy_ns=ps.gpu_busy_ns if a.comm is None else
        float(np.median(busy)) if busy.size else 0.0,
        busy_spread_ns=float(p90 - p10),
        host_wait_ns=ps.host_wait_ns,
        period_ns=ps.period_ns,
        cpu_ns=ps.cpu_ns,
        input_copies=copies,
        input_copy_ns=copy_ns,
        correctness_ok=row.correctness_ok,
        inflation=row.inflation,
        top_family=top.family if top else None,
        top_family_share=top.share if top else None,
        context=mode_context(row, a),
        exposed_comm_ns=exposed,
        comm_kernels=counts.comm_kernels,
    )


def timing_of(inp: ModeInput, row: ComparisonRow) -> Timing:
    """A mode's speed inputs (manifest timing and ``paired``, profiled period)."""
    paired = _get(inp.manifest, "paired")
    return Timing(row.time_median_ms, row.time_p10_ms, row.time_p90_ms, row.period_ms,
                  paired if isinstance(paired, dict) else None)


def period_change(w: Waterfall) -> PeriodChange:
    """The waterfall as "saved" amounts (baseline − mode, ns per step)."""
    return PeriodChange(
        saved_ns=-w.delta_ns,
        wait_saved_ns=-(w.parts["host_wait_ns"] + w.parts["sync_wait_ns"]),
        busy_saved_ns=-w.compute_busy_delta_ns,
    )


def _different_devices(v: Verdict, base_device: str, device: str) -> Verdict:
    """Traces from different GPUs cannot show what the mode changed: ``INCONCLUSIVE``."""
    return replace(
        v, status=INCONCLUSIVE,
        explanation=f"not like for like: the baseline ran on {base_device}, this mode on "
        f"{device} (on the numbers alone it would be {v.status}: {v.explanation})",
    )


def _counts(base: ComparisonRow, row: ComparisonRow) -> dict[str, tuple[float, float]]:
    """The headline's counts (baseline, mode): launches, kernels (compute kernels) and, when
    either trace has communication kernels, those (0 for the side without)."""
    out = {}
    for name in ("launches", "kernels"):
        b, m = getattr(base, name), getattr(row, name)
        if b is not None and m is not None:
            out[name] = (b, m)
    if "kernels" in out and (base.comm_kernels is not None or row.comm_kernels is not None):
        out["communication kernels"] = (base.comm_kernels or 0.0, row.comm_kernels or 0.0)
    return out


def _not_run(mode: str, baseline: str, row: ComparisonRow, context: tuple[str, ...],
             verdicts: list[Verdict], headlines: list[Headline]) -> None:
    """A mode that failed or was skipped: three verdicts saying so, ``SKIPPED`` for a mode the
    run skipped, else ``INCONCLUSIVE``; its headline is why ("skipped: no CUDA device")."""
    what = f"{row.status}" + (f": {row.reason}" if row.reason else "")
    status = SKIPPED if row.status == "skipped" else INCONCLUSIVE
    verdicts.extend(
        Verdict(mode, kind, status,
                {"baseline": baseline, "evidence_source": NO_EVIDENCE, "context": list(context)},
                {}, f"the mode did not run ({what}), so it has no timing or trace to judge")
        for kind in KINDS
    )
    said = "; ".join(context) or what
    headlines.append(Headline(mode, said if status == SKIPPED else f"not measured: {said}",
                              status, NO_EVIDENCE, None, None, None, None))


def compare(
    inputs: list[ModeInput], baseline: str | None = None, thresholds: Thresholds | None = None
) -> Comparison:
    """Rows for every input; speed verdicts, waterfalls, fusion / launch verdicts and a
    headline for every non-baseline mode.

    ``baseline`` defaults to ``eager`` when present, else the first input. A mode (or baseline)
    without a step with GPU work gets no waterfall and ``INCONCLUSIVE`` fusion / launch
    verdicts; its speed verdict still uses the timing it has.
    """
    t = thresholds or Thresholds()
    names = [i.mode for i in inputs]
    if baseline is None:
        baseline = "eager" if "eager" in names else names[0]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of {', '.join(names)}")
    rows = tuple(build_row(i) for i in inputs)
    by_mode = dict(zip(names, zip(inputs, rows, strict=True), strict=True))
    base_inp, base_row = by_mode[baseline]
    notes: list[str] = []
    waterfalls: list[Waterfall] = []
    shifts: list[HostWaitShift] = []
    verdicts: list[Verdict] = []
    headlines: list[Headline] = []
    splits: dict[str, UnprofiledSplit] = {}
    base_ok = _has_gpu_steps(base_inp.analysis)
    base_cpu = _ran_on_cpu(base_inp.analysis)
    if base_cpu:
        notes.append(f"baseline {baseline!r}: {CPU_RUN}")
    elif not base_ok:
        notes.append(f"baseline {baseline!r} has no analysed step with GPU work: no fusion or "
                     "launch verdicts")
    base_vi = verdict_inputs(base_inp, base_row) if base_ok else None
    base_timing = timing_of(base_inp, base_row)
    for inp, row in zip(inputs, rows, strict=True):
        if inp.manifest and inp.manifest.get("exit"):
            notes.append(f"{inp.mode}: {inp.manifest['exit']}")
        if inp.mode == baseline:
            continue
        context = mode_context(row, inp.analysis)
        if row.status not in ("ok", "missing"):  # failed / skipped: nothing to time
            _not_run(inp.mode, baseline, row, context, verdicts, headlines)
            continue
        timing = timing_of(inp, row)
        ev = speed_evidence(timing, base_timing, baseline)
        drift = (baseline_drift(timing.paired, base_timing, t.baseline_drift_margin)
                 if ev.source == PAIRED else None)
        if drift is not None and drift.drifted:
            notes.append(f"{inp.mode}: {drift.sentence(baseline)}")
        speed = speed_verdict(inp.mode, baseline, ev, t, context, drift)
        other = (inp.device and base_inp.device and inp.device != base_inp.device)
        if other and ev.source == TRACE:
            speed = _different_devices(speed, base_inp.device or "", inp.device or "")
        verdicts.append(speed)
        if base_vi is None or not _has_gpu_steps(inp.analysis):
            if base_cpu and _ran_on_cpu(inp.analysis):
                why = CPU_RUN
            elif base_vi is not None:
                why = (f"mode did not produce a usable trace ({row.status}"
                       + (f": {row.reason}" if row.reason else "") + ")")
            else:
                why = f"baseline {baseline!r} has no usable trace"
            verdicts.extend(
                Verdict(inp.mode, kind, INCONCLUSIVE,
                        {"baseline": baseline, "evidence_source": ev.source,
                         "context": list(context)}, {},
                        why + (f"; context: {'; '.join(context)}" if context else ""))
                for kind in KINDS if kind != "speed"
            )
            headlines.append(build_headline(inp.mode, ev, speed.status, None,
                                            _counts(base_row, row), context, why,
                                            drift=None if drift is None else (baseline, drift)))
            continue
        assert inp.analysis is not None and base_inp.analysis is not None
        vi = verdict_inputs(inp, row)
        inp, mode_base = confirmed_stragglers(inp, base_inp, t)  # this mode's baseline ranks
        # a distributed mode with every rank's issue times: the bounding ranks' split
        bounded = bounding_split(inp, mode_base, t) if ev.source == PAIRED else None
        on_bounding = bounded is not None and bool(ev.speedup)  # the split below is used
        split = bounded or unprofiled_split(inp, ev, t, base_inp)
        if split is not None and ev.speedup:
            splits[inp.mode] = split
            w = build_unprofiled_waterfall(
                inp.mode, inp.analysis, baseline, base_inp.analysis,
                baseline_ms=split.baseline.period_ms, speedup=ev.speedup,
                issue_saved_ms=split.issue_saved_ms.value, lean=_bounding_lean(inp, mode_base))
            found = (fusion_verdict(vi, base_vi, speed, t, unprofiled_saved_ns=-w.delta_ns,
                                    unprofiled_busy_saved_ns=-w.compute_busy_delta_ns),
                     unprofiled_launch_verdict(vi, base_vi, speed, split, t))
        else:
            w = build_waterfall(inp.mode, inp.analysis, baseline, base_inp.analysis)
            found = verdicts_for(vi, base_vi, speed, period_change(w), t, rules_note(inp, ev))
        waterfalls.append(w)
        shift = _host_wait_shift(inp, base_inp)
        if shift is not None:
            shifts.append(shift)
        if shift is not None:  # the launch verdict names where the host wait is spent
            where = ("where the host waited, in the stacked traces (profiler cost included): "
                     if inp.stack_analysis is not None else "")
            found = tuple(replace(v, explanation=f"{v.explanation}; {where}{shift.phrase()}")
                          if v.kind == "launch" else v for v in found)
        bounding = (None if inp.bounding is None or mode_base.bounding is None
                    else (mode_base.bounding, inp.bounding))
        if inp.ranks is not None and mode_base.ranks is not None:  # distributed
            found = tuple(distributed_launch_verdict(v, mode_base.ranks, inp.ranks,
                                                     speed.status, t.launch_min_wait_share,
                                                     on_bounding)
                          if v.kind == "launch" else v for v in found)
        if bounding is not None:
            found = tuple(_with_bounding(v, bounding, on_bounding)
                          if v.kind == "launch" else v for v in found)
        if other:
            found = tuple(_different_devices(v, base_inp.device or "", inp.device or "")
                          for v in found)
        verdicts.extend(found)
        headlines.append(build_headline(inp.mode, ev, speed.status, w,
                                        _counts(base_row, row), context, bounding=bounding,
                                        drift=None if drift is None else (baseline, drift)))
    return Comparison(baseline, rows, tuple(waterfalls), tuple(verdicts), t, tuple(notes),
                      tuple(headlines), tuple(shifts), splits)


def _with_bounding(v: Verdict, bounding: tuple[BoundingRank, BoundingRank],
                   on_split: bool) -> Verdict:
    """A distributed mode's launch verdict with its bounding ranks in the evidence; ``on_split``:
    decided on their own host issue times, which the explanation then names."""
    base, mode = bounding
    text = v.explanation
    if on_split:
        text += (f"; host issue times of the bounding ranks (baseline rank {base.rank}, "
                 f"mode rank {mode.rank}) against the step's time (each block's slowest rank)")
    return replace(v, evidence={**v.evidence, **as_evidence(base, mode)}, explanation=text)


def _sources_of(inp: ModeInput) -> Analysis | None:
    """The analysis host-wait sources are read from: the stacked trace's when recorded."""
    return inp.stack_analysis if inp.stack_analysis is not None else inp.analysis


def _host_wait_shift(inp: ModeInput, base_inp: ModeInput) -> HostWaitShift | None:
    a, b = _sources_of(inp), _sources_of(base_inp)
    if a is None or b is None or a.host_wait_sources is None or b.host_wait_sources is None:
        return None
    return host_wait_shift(inp.mode, a.host_wait_sources, a.steps.column("period_ns"),
                           base_inp.mode, b.host_wait_sources, b.steps.column("period_ns"))

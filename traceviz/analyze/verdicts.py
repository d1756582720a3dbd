"""Verdicts: is a mode faster than the baseline, and where did the time go? Thresholds are data.

Three kinds of verdict per non-baseline mode (rules in ``docs/comparison.md``):

``speed``   the outcome on the stopwatch (:mod:`traceviz.analyze.compare.speed`: paired timing
            with a CI, else unpaired medians, else the profiled period).
``fusion``  kernels/step fell, GPU busy/step (lean trace; compute kernels and compute busy,
            communication kernels excluded, when the trace has them) fell by more than its
            step-to-step spread, outputs match, and the step did not get slower. With the
            unprofiled split (paired timing with host issue times) the speed must be a WIN and
            the busy saved at least ``fusion_min_busy_share`` of the unprofiled step time
            saved; without it (the profiled-trace rules), unless speed is WIN the median
            profiled period must be lower. REGRESSION: GPU busy rose beyond its spread without
            fewer kernels, and the step is not faster (speed not WIN).
``launch``  with the unprofiled split: :mod:`traceviz.analyze.compare.launch_unprofiled` (speed WIN,
            the baseline host-bound without the profiler, and the saving of host issue time
            explains at least ``launch_min_wait_share`` of the step time saved). Profiled-trace
            rules (no unprofiled split): speed WIN and at least ``launch_min_wait_share`` of
            the profiled period saved is Δhost_wait + Δsync_wait; for plain traces the profiled
            period must also fall more than ``max_profiler_inflation``-fold.

Each :class:`Verdict` carries its status (``WIN``, ``NO_WIN``, ``REGRESSION``,
``INCONCLUSIVE``; ``SKIPPED`` for every verdict of a mode the run skipped), the numbers it was
decided from (``evidence``), the thresholds used and a one-line explanation derived from the
data, ending with the mode's context (cudagraph skips, graph breaks, recompiles, input
copies). Relative drops are ``1 - mode / baseline`` (0.2 = "20 % fewer"). Per-step counts are
the medians of :class:`~traceviz.analyze.model.PerStep`; the attribution of the period saved
uses the waterfall's exact means.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from traceviz.errors import UsageError
from traceviz.file_kind import file_kind

WIN = "WIN"
NO_WIN = "NO_WIN"
REGRESSION = "REGRESSION"
INCONCLUSIVE = "INCONCLUSIVE"
#: The status of every verdict of a mode the run skipped (the manifest says why, e.g. no
#: CUDA for a CUDA-graph mode): nothing ran, so there is nothing to judge.
SKIPPED = "SKIPPED"
STATUSES = (WIN, NO_WIN, REGRESSION, INCONCLUSIVE, SKIPPED)
KINDS = ("speed", "fusion", "launch")


@dataclass(frozen=True)
class Range:
    """The valid values of one threshold: ``low`` to ``high`` (``math.inf``: no upper bound),
    each edge included or not, and why, in one line. Values must be finite numbers."""

    low: float
    high: float
    low_inclusive: bool
    high_inclusive: bool
    meaning: str

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if not math.isfinite(value):
            return False
        above = value >= self.low if self.low_inclusive else value > self.low
        below = value <= self.high if self.high_inclusive else value < self.high
        return above and below

    def __str__(self) -> str:
        """``[0, 1)``, ``(0, 1]``, ``[1, ∞)``: interval notation."""
        high = "∞" if math.isinf(self.high) else f"{self.high:g}"
        return (f"{'[' if self.low_inclusive else '('}{self.low:g}, {high}"
                f"{']' if self.high_inclusive and not math.isinf(self.high) else ')'}")


#: Every threshold's valid range, checked by :class:`Thresholds` itself (so the CLI, a
#: thresholds file and the Python API all refuse the same values); the table of
#: ``docs/comparison.md`` lists them.
THRESHOLD_RANGES: dict[str, Range] = {
    "min_speedup": Range(0.0, 1.0, True, False, "a relative margin around a speed-up of 1; at 1 "
                         "or more no CI could be a REGRESSION"),
    "fusion_min_kernel_drop": Range(0.0, 1.0, False, True, "a relative drop of kernels/step; 0 "
                                    "would call an unchanged count fused, 1 is every kernel gone"),
    "launch_min_wait_share": Range(0.0, 1.0, True, True, "a share of the step time saved"),
    "gpu_bound_busy_share": Range(0.0, 1.0, False, True, "a share of the period; 0 would call an "
                                  "idle GPU GPU-bound"),
    "max_profiler_inflation": Range(1.0, math.inf, True, False, "a ratio profiled / unprofiled "
                                    "step time; the profiler never makes a step faster"),
    "host_bound_max_lag_steps": Range(0.0, math.inf, True, False, "a count of steps the GPU may "
                                      "end behind the host"),
    "fusion_min_busy_share": Range(0.0, 1.0, True, True, "a share of the step time saved"),
    "baseline_drift_margin": Range(0.0, 1.0, True, True, "a relative widening of the "
                                   "baseline's own p10–p90; at 1 a faster baseline is never "
                                   "flagged"),
    "block_tail_allowance_us": Range(0.0, math.inf, True, False, "a time in µs a timed block "
                                     "may run on after the host's last call"),
    "gpu_bound_min_compute_share": Range(0.0, 1.0, True, True, "a share of the unprofiled "
                                         "step; 0 lets the lag alone decide"),
    "straggler_min_share": Range(0.0, 1.0, True, True, "a share of the slowest rank's step; 0 "
                                 "lets any compute excess beyond the waits' set a straggler "
                                 "apart by its GPU"),
    "straggler_min_host_share": Range(0.0, 1.0, True, True, "a share of the unprofiled step; 0 "
                                      "lets the CI alone decide"),
}


class ThresholdRangeError(UsageError, ValueError):
    """A threshold outside its valid range (:data:`THRESHOLD_RANGES`), or not a number: a usage
    error (CLI exit 2) and a ``ValueError`` (Python API)."""

    @classmethod
    def of(cls, name: str, value: object) -> ThresholdRangeError:
        """One line: the threshold, the value and the valid range with its meaning."""
        r = THRESHOLD_RANGES[name]
        valid = f"valid range {r} ({r.meaning}; see docs/comparison.md)"
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return cls(f"threshold {name} = {value!r} is not a number; {valid}")
        return cls(f"threshold {name} = {value:g} is outside its {valid}")


@dataclass(frozen=True)
class Thresholds:
    """Decision thresholds; every field is documented in ``docs/comparison.md``.

    Relative values are fractions of the baseline (0.2 = 20 %). Each must lie in its range of
    :data:`THRESHOLD_RANGES`, else :class:`ThresholdRangeError`.
    """

    min_speedup: float = 0.03  # speed: the CI must clear 1 ± this (relative)
    fusion_min_kernel_drop: float = 0.2  # kernels/step must fall by at least this much
    launch_min_wait_share: float = 0.5  # share of the period saved that host + sync wait explain
    gpu_bound_busy_share: float = 0.9  # busy/period at or above this: "GPU-bound" explanation
    max_profiler_inflation: float = 2.0  # profiled-period ratios up to this may be inflation
    host_bound_max_lag_steps: float = 0.5  # host-bound: GPU at most this many steps behind,
    # beyond the block's tail (unprofiled split; 1.0 before the tail was allowed for)
    fusion_min_busy_share: float = 0.25  # fusion WIN: busy saved / unprofiled time saved
    baseline_drift_margin: float = 0.1  # speed: flag the in-pairs baseline outside p10–p90 ± this
    # The bound call of the unprofiled split (traceviz.analyze.compare.unprofiled.bound_call, whose
    # docstring names the calibration cells): a block's tail beyond one step's compute busy
    # (launch latency, event record; the committed H100/H200 runs: at most 106 µs), and the
    # share of the unprofiled step the lean trace's compute busy must fill for GPU-bound.
    block_tail_allowance_us: float = 150.0
    gpu_bound_min_compute_share: float = 0.5
    # A straggler is set apart by its GPU when its compute busy exceeds its peers' by more than
    # its waits do and by at least this share of the step (one rank's compute x2;
    # traceviz.analyze.distributed.metrics.relative_cause).
    straggler_min_share: float = 0.05
    # A host-caused straggler is named only when, without the profiler, its host issue time per
    # step exceeds the median of the other ranks' by at least this share of the unprofiled
    # step: more than identical processes' host speed differs (traceviz.analyze.distributed.
    # bounding.straggler_check names the calibration cells).
    straggler_min_host_share: float = 0.15

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in THRESHOLD_RANGES[f.name]:
                raise ThresholdRangeError.of(f.name, value)

    def as_dict(self) -> dict[str, float]:
        """Field name → value (for JSON and the report)."""
        return asdict(self)


#: Thresholds of earlier versions that no longer gate anything, and what replaced them.
REMOVED_THRESHOLDS = {
    "fusion_min_busy_drop": "GPU busy must fall by more than its step-to-step spread",
    "launch_min_launch_drop": "the launch count is evidence, not a gate; launch WIN needs a "
    "speed WIN explained by host + sync wait (launch_min_wait_share)",
    "launch_min_host_wait_drop": "replaced by launch_min_wait_share",
    "time_noise_k": "the speed verdict uses the paired CI and min_speedup",
    "regression_min_rise": "regressions come from the speed verdict (min_speedup) and, for "
    "fusion, GPU busy rising beyond its step-to-step spread",
}


def threshold_names() -> tuple[str, ...]:
    """The configurable threshold names."""
    return tuple(f.name for f in fields(Thresholds))


def parse_thresholds(overrides: list[str] | None = None, config: Path | None = None) -> Thresholds:
    """Defaults, then a config file (TOML ``[thresholds]`` table or JSON object), then
    ``name=value`` overrides. Unknown names or non-numbers raise :class:`UsageError`, a value
    outside its range :class:`ThresholdRangeError` (a :class:`UsageError` too)."""
    values: dict[str, float] = {}
    if config is not None:
        values.update(_read_config(config))
    for item in overrides or []:
        name, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--threshold {item!r}: expected name=value")
        values[name.strip()] = _number(name.strip(), raw.strip())
    removed = sorted(set(values) & set(REMOVED_THRESHOLDS))
    if removed:
        raise UsageError("; ".join(f"threshold {name} no longer exists: "
                                   f"{REMOVED_THRESHOLDS[name]}" for name in removed)
                         + " (see docs/comparison.md)")
    unknown = sorted(set(values) - set(threshold_names()))
    if unknown:
        raise UsageError(
            f"unknown threshold(s) {', '.join(unknown)}; known: {', '.join(threshold_names())}"
        )
    return replace(Thresholds(), **values)


#: A thresholds file is a few lines; a larger one is refused unread (not a thresholds file).
MAX_CONFIG_BYTES = 1 << 20



def _config_text(path: Path) -> str:
    """The text of a thresholds file, which must be a regular UTF-8 file of at most
    :data:`MAX_CONFIG_BYTES`; anything else (missing, unreadable, a directory, FIFO or device,
    not UTF-8) is a one-line :class:`UsageError` naming ``path``. The file is opened without
    blocking and checked on the open descriptor, so a FIFO never waits for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"threshold config {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"threshold config {path}: not a regular file "
                             f"({file_kind(st.st_mode)})")
        if st.st_size > MAX_CONFIG_BYTES:
            raise UsageError(f"threshold config {path}: {st.st_size:,} bytes; a thresholds "
                             f"file is at most {MAX_CONFIG_BYTES:,}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_CONFIG_BYTES)
    except OSError as exc:
        raise UsageError(f"threshold config {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"threshold config {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} "
                         f"at offset {exc.start})") from None


def _read_config(path: Path) -> dict[str, float]:
    text = _config_text(path)
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except ValueError as exc:  # includes TOMLDecodeError
        raise UsageError(f"threshold config {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("thresholds"), dict):
        data = data["thresholds"]
    if not isinstance(data, dict):
        raise UsageError(f"threshold config {path}: expected a table of name = number")
    return {str(k): _number(str(k), v) for k, v in data.items()}


def _number(name: str, raw: object) -> float:
    try:
        return float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(f"threshold {name}: {raw!r} is not a number") from None


@dataclass(frozen=True)
class Verdict:
    """One decision about one mode, with the numbers and thresholds it came from."""

    mode: str
    kind: str  # one of KINDS
    status: str  # one of STATUSES (SKIPPED: the mode did not run)
    evidence: dict[str, Any]
    thresholds: dict[str, float]
    explanation: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerdictInputs:
    """What one mode contributes to a verdict (per-step medians unless said; ns as named)."""

    mode: str
    kernels: float  # compute kernels: communication kernels left out
    activities: float  # kernels + memcpys + memsets (communication kernels left out)
    launches: float
    gpu_busy_ns: float  # compute busy when the trace has communication kernels
    busy_spread_ns: float  # p90 - p10 of the per-step GPU (compute) busy (steps with GPU work)
    host_wait_ns: float
    period_ns: float
    cpu_ns: float
    input_copies: float  # cudagraph input-copy activities per step (trace, median)
    input_copy_ns: float  # their summed GPU duration per step (median)
    correctness_ok: bool | None  # None: not checked (no manifest)
    inflation: float | None  # profiled / unprofiled step time
    top_family: str | None  # kernel family with the most GPU time
    top_family_share: float | None
    context: tuple[str, ...] = ()  # skips, graph breaks, recompiles, input copies (in words)
    # Median exposed communication per step (docs/metrics.md "Communication, one trace"); None
    # when the trace has no communication kernel (then gpu_busy_ns is the whole GPU busy).
    exposed_comm_ns: float | None = None
    # Median communication kernels per step; None when the trace has none.
    comm_kernels: float | None = None


@dataclass(frozen=True)
class PeriodChange:
    """Where the profiled period went: baseline minus mode, of the waterfall's exact means (ns).

    ``saved_ns > 0``: the mode's mean period is shorter. ``wait_saved_ns`` is
    −(Δhost_wait + Δsync_wait), ``busy_saved_ns`` is −Δbusy.
    """

    saved_ns: float
    wait_saved_ns: float
    busy_saved_ns: float


def relative_drop(base: float, mode: float) -> float | None:
    """``1 - mode / base``; ``None`` when the baseline is zero."""
    return None if base == 0 else 1.0 - mode / base


#: A share or relative drop within this of a threshold counts as reaching it: ``1 − 16/20`` is
#: 0.19999999999999996 in binary floating point, and an exact 20 % drop must meet a 0.2 rule.
SHARE_TOLERANCE = 1e-9


def reaches(value: float, threshold: float) -> bool:
    """``value ≥ threshold`` for shares and relative drops, up to :data:`SHARE_TOLERANCE`."""
    return value >= threshold - SHARE_TOLERANCE


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "±0%" if abs(x) < 0.005 else f"{x * 100:+.0f}%"


def _change(drop: float | None) -> str:
    """Format a relative drop as a signed change (a 30 % drop reads "-30%")."""
    return "n/a" if drop is None else _pct(-drop)


def _with_context(text: str, mode: VerdictInputs) -> str:
    return f"{text}; context: {'; '.join(mode.context)}" if mode.context else text


def _speed_text(speed: Verdict) -> str:
    return f"speed {speed.status}: {speed.evidence.get('outcome', '')}".rstrip(": ")


def _copies(mode: VerdictInputs) -> str:
    n = mode.input_copies
    return (f"CUDA graphs add {n:g} input-copy {'activity' if n == 1 else 'activities'} per step "
            f"({mode.input_copy_ns / 1000:,.1f} µs/step)")


def fusion_verdict(
    mode: VerdictInputs, base: VerdictInputs, speed: Verdict, t: Thresholds,
    unprofiled_saved_ns: float | None = None, rules_note: str = "",
    unprofiled_busy_saved_ns: float | None = None,
) -> Verdict:
    """Fewer kernels, GPU busy down beyond its step-to-step spread, and not slower.

    ``unprofiled_saved_ns``: the step time saved per step without the profiler (the unprofiled
    waterfall's baseline − mode), when the run has the unprofiled split; then a WIN also needs
    the GPU busy saved to be at least ``fusion_min_busy_share`` of it: the unprofiled
    waterfall's GPU-busy part (``unprofiled_busy_saved_ns``, the lean traces' mean per step,
    the number the headline shows) when given, else the median saving. Without it the
    profiled-trace rules apply and ``rules_note`` says why.
    """
    k_drop = relative_drop(base.kernels, mode.kernels)
    busy_saved = base.gpu_busy_ns - mode.gpu_busy_ns
    spread = max(base.busy_spread_ns, mode.busy_spread_ns)
    unprofiled = unprofiled_saved_ns is not None
    used = {"fusion_min_kernel_drop": t.fusion_min_kernel_drop,
            "gpu_bound_busy_share": t.gpu_bound_busy_share}
    if unprofiled:
        used["fusion_min_busy_share"] = t.fusion_min_busy_share
    share_of = busy_saved if unprofiled_busy_saved_ns is None else unprofiled_busy_saved_ns
    busy_share = (share_of / unprofiled_saved_ns
                  if unprofiled_saved_ns is not None and unprofiled_saved_ns > 0 else None)
    evidence: dict[str, Any] = {
        "baseline": base.mode,
        "rules": "unprofiled" if unprofiled else "profiled-trace",
        "unprofiled_saved_us": None if unprofiled_saved_ns is None else unprofiled_saved_ns / 1000,
        "busy_share_of_saved": busy_share,
        "evidence_source": speed.evidence.get("evidence_source"),
        "kernels_per_step": [base.kernels, mode.kernels],
        "kernel_drop": k_drop,
        "gpu_busy_us_per_step": [base.gpu_busy_ns / 1000, mode.gpu_busy_ns / 1000],
        "busy_drop": relative_drop(base.gpu_busy_ns, mode.gpu_busy_ns),
        "busy_spread_us": spread / 1000,
        "profiled_period_us": [base.period_ns / 1000, mode.period_ns / 1000],
        "speed": speed.status,
        "correctness_ok": mode.correctness_ok,
        "context": list(mode.context),
    }
    comm = base.exposed_comm_ns is not None or mode.exposed_comm_ns is not None
    if comm:  # communication kernels: busy is compute busy, exposed communication beside it
        evidence["busy_basis"] = "compute busy (communication kernels excluded)"
        evidence["kernels_basis"] = "compute kernels (communication kernels excluded)"
        evidence["comm_kernels_per_step"] = [x.comm_kernels or 0.0 for x in (base, mode)]
        evidence["exposed_comm_us_per_step"] = [
            None if x.exposed_comm_ns is None else x.exposed_comm_ns / 1000 for x in (base, mode)]
    busy = (f"{'compute' if comm else 'GPU'} busy/step {base.gpu_busy_ns / 1000:,.1f} → "
            f"{mode.gpu_busy_ns / 1000:,.1f} µs "
            f"({_change(relative_drop(base.gpu_busy_ns, mode.gpu_busy_ns))}; step-to-step "
            f"spread ±{spread / 1000:,.1f} µs)")
    kernels = (f"compute kernels/step {base.kernels:,g} → {mode.kernels:,g} ({_change(k_drop)}; "
               f"communication kernels/step {base.comm_kernels or 0:,g} → "
               f"{mode.comm_kernels or 0:,g}, not counted)" if comm else
               f"kernels/step {base.kernels:,g} → {mode.kernels:,g} ({_change(k_drop)})")
    facts = f"medians over steps: {kernels}, {busy}"

    def verdict(status: str, text: str) -> Verdict:
        if rules_note:
            text = f"{text} ({rules_note})"
        return Verdict(mode.mode, "fusion", status, evidence, used, _with_context(text, mode))

    if mode.correctness_ok is False:
        return verdict(INCONCLUSIVE, f"outputs do not match the baseline, so no speed claim "
                       f"stands; {facts}")
    if k_drop is None:
        return verdict(INCONCLUSIVE, f"the baseline has no GPU work per step to compare "
                       f"against; {facts}")
    fused = reaches(k_drop, t.fusion_min_kernel_drop)
    busy_fell = busy_saved > 0 and busy_saved > spread
    busy_rose = -busy_saved > spread and busy_saved < 0
    if busy_rose and k_drop <= 0:
        extra = ["kernel count not lower, so nothing was fused"]
        if mode.input_copies > 0:
            extra.append(_copies(mode))
        copies = (mode.activities - mode.kernels) - (base.activities - base.kernels)
        if copies > 0 and mode.input_copies <= 0:
            extra.append(f"{copies:g} more memcpy/memset activities per step than the baseline")
        text = f"GPU busy time per step rose beyond its spread ({'; '.join(extra)})"
        if speed.status == WIN:  # a cost paid inside a faster step is not a regression
            return verdict(NO_WIN, f"{text}, but the step is faster overall "
                           f"({_speed_text(speed)}): {facts}")
        return verdict(REGRESSION, f"{text}: {facts}")
    if fused and busy_fell:
        if speed.status in (NO_WIN, REGRESSION):
            return verdict(NO_WIN, f"fused {base.kernels:,g} → {mode.kernels:,g} kernels and GPU "
                           f"busy fell, but the step did not get faster ({_speed_text(speed)}) "
                           f"({facts})")
        if unprofiled:
            return _fusion_on_unprofiled(verdict, speed, share_of, busy_share,
                                         unprofiled_saved_ns or 0.0, facts, t,
                                         unprofiled_busy_saved_ns is not None)
        if speed.status != WIN and mode.period_ns >= base.period_ns:  # stopwatch silent
            return verdict(NO_WIN, f"fused {base.kernels:,g} → {mode.kernels:,g} kernels and GPU "
                           "busy fell, but the profiled period did not fall "
                           f"({base.period_ns / 1000:,.1f} → {mode.period_ns / 1000:,.1f} µs) "
                           f"({facts})")
        unchecked = "" if mode.correctness_ok else " (outputs not checked: no manifest)"
        return verdict(WIN, facts + unchecked)
    if fused:
        rose = busy_saved < 0
        moved = abs(busy_saved) / max(base.gpu_busy_ns, 1.0) * 100
        why = (f"fused {base.kernels:,g} → {mode.kernels:,g} kernels but GPU busy "
               f"{'rose' if rose else 'fell'} {moved:.0f}%"
               f"{'' if rose else ', within its step-to-step spread'}")
    elif k_drop > 0:
        why = (f"kernel count fell {k_drop * 100:.1f}%, short of the "
               f"{t.fusion_min_kernel_drop * 100:.0f}% drop that fusion needs")
    else:
        why = ("kernel count unchanged, so nothing was fused" if k_drop == 0
               else f"kernel count rose {-k_drop * 100:.1f}%")
    if mode.input_copies > 0:
        why += "; " + _copies(mode)
    extra = (mode.activities - mode.kernels) - (base.activities - base.kernels)
    if extra > 0 and mode.input_copies <= 0:
        why += f"; {extra:g} more memcpy/memset activities per step than the baseline"
    bound = _gpu_bound(mode, t)
    if bound:
        why = f"{bound}; {why}"
    return verdict(NO_WIN, f"{why} ({facts})")


def _fusion_on_unprofiled(
    verdict: Any, speed: Verdict, busy_saved: float, busy_share: float | None,
    saved_ns: float, facts: str, t: Thresholds, mean: bool = False,
) -> Verdict:
    """Fused and GPU busy fell: judged against the unprofiled step time saved (``mean``:
    ``busy_saved`` is the lean traces' mean per step, as in the waterfall, else a median)."""
    if speed.status != WIN:
        return verdict(INCONCLUSIVE, f"fused and GPU busy fell, but the stopwatch cannot tell "
                       f"whether the step got faster ({_speed_text(speed)}) ({facts})")
    if busy_share is None:  # a WIN whose unprofiled total is not a saving: cannot happen
        return verdict(INCONCLUSIVE, f"no unprofiled step time saved to compare with ({facts})")
    stat = "lean-trace mean" if mean else "median"
    of_saved = (f"{busy_saved / 1000:,.1f} µs/step of GPU busy saved ({stat}) is "
                f"{busy_share * 100:.0f}% of the {saved_ns / 1000:,.1f} µs/step saved without "
                "the profiler (pair-level median)")
    if reaches(busy_share, t.fusion_min_busy_share):
        return verdict(WIN, f"{of_saved}: fusion paid ({facts})")
    return verdict(NO_WIN, f"kernels fused and GPU busy fell, but {of_saved} (at least "
                   f"{t.fusion_min_busy_share * 100:.0f}% needed): the step got faster on the "
                   f"host side, not through less GPU work ({facts})")


def _gpu_bound(mode: VerdictInputs, t: Thresholds) -> str:
    """ "GPU-bound: …" when busy/period is at or above ``gpu_bound_busy_share``, else ""."""
    if mode.period_ns <= 0:
        return ""
    share = mode.gpu_busy_ns / mode.period_ns
    if share < t.gpu_bound_busy_share:
        return ""
    family = ""
    if mode.top_family and mode.top_family_share is not None:
        family = f" ({mode.top_family} kernels take {mode.top_family_share * 100:.0f}% of GPU time)"
    return (
        f"GPU-bound{family}: GPU busy is {share * 100:.0f}% of the period, removing launch "
        f"overhead can save at most {(1 - share) * 100:.0f}%"
    )


def launch_verdict(
    mode: VerdictInputs, base: VerdictInputs, speed: Verdict, change: PeriodChange,
    t: Thresholds, rules_note: str = "",
) -> Verdict:
    """The profiled-trace rule: speed WIN, and host + sync wait explain at least
    ``launch_min_wait_share`` of the profiled period saved (plain traces: the period also fell
    beyond profiler inflation). ``rules_note`` says why these rules apply (no unprofiled
    split); the unprofiled rule is
    :func:`traceviz.analyze.compare.launch_unprofiled.launch_verdict`."""
    source = speed.evidence.get("evidence_source")
    l_drop = relative_drop(base.launches, mode.launches)
    h_drop = relative_drop(base.host_wait_ns, mode.host_wait_ns)
    share = change.wait_saved_ns / change.saved_ns if change.saved_ns > 0 else None
    used = {"launch_min_wait_share": t.launch_min_wait_share,
            "max_profiler_inflation": t.max_profiler_inflation,
            "gpu_bound_busy_share": t.gpu_bound_busy_share}
    evidence: dict[str, Any] = {
        "baseline": base.mode,
        "rules": "profiled-trace",
        "evidence_source": source,
        "speed": speed.status,
        "launches_per_step": [base.launches, mode.launches],
        "launch_drop": l_drop,
        "host_wait_us_per_step": [base.host_wait_ns / 1000, mode.host_wait_ns / 1000],
        "host_wait_drop": h_drop,
        "period_saved_us": change.saved_ns / 1000,
        "wait_saved_us": change.wait_saved_ns / 1000,
        "busy_saved_us": change.busy_saved_ns / 1000,
        "wait_share_of_saved": share,
        "profiler_inflation": mode.inflation,
        "correctness_ok": mode.correctness_ok,
        "context": list(mode.context),
    }
    facts = (
        f"medians over steps: launches/step {base.launches:,g} → {mode.launches:,g} "
        f"({_change(l_drop)}), "
        f"host_wait/step {base.host_wait_ns / 1000:,.1f} → {mode.host_wait_ns / 1000:,.1f} µs "
        f"({_change(h_drop)}); means over steps: profiled period saved "
        f"{change.saved_ns / 1000:,.1f} µs/step, "
        f"by host + sync wait {change.wait_saved_ns / 1000:,.1f} µs/step"
    )

    note = f"; {rules_note}" if rules_note else ""

    def verdict(status: str, text: str) -> Verdict:
        return Verdict(mode.mode, "launch", status, evidence, used,
                       _with_context(f"{text} ({facts}{note})", mode))

    if mode.correctness_ok is False:
        return verdict(INCONCLUSIVE, "outputs do not match the baseline")
    why_not = _no_launch_win_why(mode, base, t, h_drop)
    # Plain traces: only a speed WIN (period fell beyond inflation) can be judged at all.
    otherwise = INCONCLUSIVE if source == "trace" else NO_WIN
    if speed.status == WIN:
        if change.saved_ns <= 0:
            inflation = (f" (profiler inflation {mode.inflation:.1f}×)"
                         if mode.inflation is not None else "")
            return verdict(INCONCLUSIVE, f"{_speed_text(speed)}, but the profiled period did "
                           f"not fall{inflation}, so the trace cannot say where the time went")
        assert share is not None
        if reaches(share, t.launch_min_wait_share):
            return verdict(WIN, f"host + sync wait explain {share * 100:.0f}% of the period "
                           f"saved: launch overhead removed ({_speed_text(speed)})")
        return verdict(otherwise, f"{_speed_text(speed)}, but host + sync wait explain only "
                       f"{(share if share > 0 else 0.0) * 100:.0f}% of the period saved (at least "
                       f"{t.launch_min_wait_share * 100:.0f}% needed): the time came from "
                       f"elsewhere; {why_not}")
    if speed.status == REGRESSION:
        added, wait_added = -change.saved_ns, -change.wait_saved_ns
        if added > 0 and wait_added >= t.launch_min_wait_share * added:
            return verdict(REGRESSION, f"{_speed_text(speed)}, and host + sync wait grew by "
                           f"{wait_added / 1000:,.1f} µs/step, {wait_added / added * 100:.0f}% "
                           f"of the period added; {why_not}")
        return verdict(otherwise, f"{_speed_text(speed)}, not from launch overhead; {why_not}")
    if speed.status == NO_WIN:
        return verdict(NO_WIN, f"{_speed_text(speed)}; {why_not}")
    return verdict(INCONCLUSIVE, f"{_speed_text(speed)}; {why_not}")


def _no_launch_win_why(
    mode: VerdictInputs, base: VerdictInputs, t: Thresholds, h_drop: float | None
) -> str:
    """Why removing launch overhead did (or could) not pay off, from the data."""
    parts: list[str] = []
    if base.host_wait_ns == 0:
        parts.append("the baseline has no host wait to remove")
    bound = _gpu_bound(base, t)
    if bound:
        parts.append(bound.replace("GPU-bound", "baseline GPU-bound", 1))
    if mode.input_copies > 0:
        text = _copies(mode)
        if mode.cpu_ns >= base.cpu_ns:
            text += (f" and the CPU time per step ({mode.cpu_ns / 1000:.1f} µs) is not below "
                     f"the baseline's ({base.cpu_ns / 1000:.1f} µs)")
        parts.append(text)
    if h_drop is not None and abs(h_drop) < 0.1:
        parts.append(f"host wait unchanged ({_change(h_drop)})")
    if h_drop is not None and h_drop < 0 and mode.cpu_ns > mode.gpu_busy_ns:
        parts.append(
            f"under the profiler the step is CPU-bound: CPU time per step "
            f"{mode.cpu_ns / 1000:,.1f} µs vs GPU busy {mode.gpu_busy_ns / 1000:,.1f} µs, so the "
            "GPU waits for Python / dispatch between launches rather than for the launches"
        )
    if not parts and h_drop is not None and h_drop >= 0.1:
        parts.append(f"host wait fell {h_drop * 100:.0f}% under the profiler, which the "
                     "stopwatch does not confirm as a speed-up")
    return "; ".join(parts) if parts else "launch overhead did not clearly fall"


def verdicts_for(
    mode: VerdictInputs, base: VerdictInputs, speed: Verdict, change: PeriodChange,
    t: Thresholds, rules_note: str = "",
) -> tuple[Verdict, ...]:
    """The fusion and launch verdicts of one mode on the profiled-trace rules, given its speed
    verdict; ``rules_note`` says why no unprofiled split was used."""
    return (fusion_verdict(mode, base, speed, t, rules_note=rules_note),
            launch_verdict(mode, base, speed, change, t, rules_note))

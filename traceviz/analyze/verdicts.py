"""Verdicts: did a mode's claimed win hold up against the baseline? Thresholds are data.

Two kinds of verdict per non-baseline mode (see ``docs/comparison.md``):

``fusion``  kernels/step and GPU busy/step both clearly down vs the baseline, outputs match.
``launch``  launches/step and host_wait/step clearly down, and the *unprofiled* step time
            improved by more than its noise (``time_noise_k`` x the larger p10–p90 spread).

Each :class:`Verdict` carries its status (``WIN``, ``NO_WIN``, ``REGRESSION``,
``INCONCLUSIVE``), the numbers it was decided from (``evidence``), the thresholds used and a
one-line explanation derived from the data. Relative drops are ``1 - mode / baseline``
(0.2 = "20 % fewer"). Per-step inputs are the medians of :class:`~traceviz.analyze.model.PerStep`.

Without unprofiled timing (plain traces via ``traceviz compare``) the launch verdict cannot
confirm a wall-clock win: it is ``INCONCLUSIVE`` when the trace-side criteria hold, and
``NO_WIN`` when they already fail (the trace alone shows no launch-overhead reduction).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from traceviz.errors import UsageError

WIN = "WIN"
NO_WIN = "NO_WIN"
REGRESSION = "REGRESSION"
INCONCLUSIVE = "INCONCLUSIVE"
STATUSES = (WIN, NO_WIN, REGRESSION, INCONCLUSIVE)
KINDS = ("fusion", "launch")


@dataclass(frozen=True)
class Thresholds:
    """Decision thresholds; every field is documented in ``docs/comparison.md``.

    Relative values are fractions of the baseline (0.2 = 20 %).
    """

    fusion_min_kernel_drop: float = 0.2  # kernels/step must fall by at least this much
    fusion_min_busy_drop: float = 0.05  # GPU busy/step must fall by at least this much
    launch_min_launch_drop: float = 0.5  # launch calls/step must fall by at least this much
    launch_min_host_wait_drop: float = 0.2  # host_wait/step must fall by at least this much
    time_noise_k: float = 1.0  # time win must exceed k x max(p10–p90 spread of both modes)
    regression_min_rise: float = 0.05  # a rise beyond this (relative) is a REGRESSION
    gpu_bound_busy_share: float = 0.9  # busy/period at or above this: "GPU-bound" explanation
    max_profiler_inflation: float = 2.0  # above: the trace's host wait is not trusted alone

    def as_dict(self) -> dict[str, float]:
        """Field name → value (for JSON and the report)."""
        return asdict(self)


def threshold_names() -> tuple[str, ...]:
    """The configurable threshold names."""
    return tuple(f.name for f in fields(Thresholds))


def parse_thresholds(overrides: list[str] | None = None, config: Path | None = None) -> Thresholds:
    """Defaults, then a config file (TOML ``[thresholds]`` table or JSON object), then
    ``name=value`` overrides. Unknown names or non-numbers raise :class:`UsageError`."""
    values: dict[str, float] = {}
    if config is not None:
        values.update(_read_config(config))
    for item in overrides or []:
        name, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--threshold {item!r}: expected name=value")
        values[name.strip()] = _number(name.strip(), raw.strip())
    unknown = sorted(set(values) - set(threshold_names()))
    if unknown:
        raise UsageError(
            f"unknown threshold(s) {', '.join(unknown)}; known: {', '.join(threshold_names())}"
        )
    return replace(Thresholds(), **values)


def _read_config(path: Path) -> dict[str, float]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"threshold config {path}: {exc.strerror}") from exc
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
    kind: str  # "fusion" or "launch"
    status: str  # WIN, NO_WIN, REGRESSION, INCONCLUSIVE
    evidence: dict[str, Any]
    thresholds: dict[str, float]
    explanation: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerdictInputs:
    """What one mode contributes to a verdict (per-step medians; times in ns / ms as named)."""

    mode: str
    kernels: float
    activities: float  # kernels + memcpys + memsets
    launches: float
    gpu_busy_ns: float
    host_wait_ns: float
    period_ns: float
    cpu_ns: float
    input_copies: float  # cudagraph input-copy activities per step (trace, median)
    correctness_ok: bool | None  # None: not checked (no manifest)
    time_median_ms: float | None  # unprofiled step time (manifest)
    time_spread_ms: float | None  # unprofiled p90 - p10
    time_noisy: bool
    inflation: float | None  # profiled / unprofiled step time
    cudagraph_skips: tuple[str, ...]
    graph_breaks: int | None
    top_family: str | None  # kernel family with the most GPU time
    top_family_share: float | None


def relative_drop(base: float, mode: float) -> float | None:
    """``1 - mode / base``; ``None`` when the baseline is zero."""
    return None if base == 0 else 1.0 - mode / base


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "±0%" if abs(x) < 0.005 else f"{x * 100:+.0f}%"


def _change(base: float | None) -> str:
    """Format a relative drop as a signed change (a 30 % drop reads "-30%")."""
    return "n/a" if base is None else _pct(-base)


def _short(what: str, drop: float, needed: float) -> str:
    """"kernel count fell 3%, short of the 20% needed" (or "rose 3%")."""
    if drop < 0:
        return f"{what} rose {-drop * 100:.1f}% (a {needed * 100:.0f}% drop is needed)"
    return f"{what} fell {drop * 100:.1f}%, short of the {needed * 100:.0f}% drop needed"


def _fusion_context(mode: VerdictInputs, base: VerdictInputs, k_drop: float) -> str:
    """Why busy time may have risen: no fusion, CUDA-graph input copies, extra copies."""
    parts = []
    if abs(k_drop) < 0.005 and mode.input_copies <= 0:
        parts.append("kernel count unchanged, so nothing was fused")
    if mode.input_copies > 0:
        parts.append(_copies(mode))
    extra = (mode.activities - mode.kernels) - (base.activities - base.kernels)
    if extra > 0 and mode.input_copies <= 0:
        parts.append(f"{extra:g} more memcpy/memset activities per step than the baseline")
    return f" ({'; '.join(parts)})" if parts else ""


def fusion_verdict(mode: VerdictInputs, base: VerdictInputs, t: Thresholds) -> Verdict:
    """Kernels/step and GPU busy/step both clearly down, outputs match (see module doc)."""
    k_drop = relative_drop(base.kernels, mode.kernels)
    b_drop = relative_drop(base.gpu_busy_ns, mode.gpu_busy_ns)
    used = {
        "fusion_min_kernel_drop": t.fusion_min_kernel_drop,
        "fusion_min_busy_drop": t.fusion_min_busy_drop,
        "regression_min_rise": t.regression_min_rise,
    }
    evidence: dict[str, Any] = {
        "baseline": base.mode,
        "kernels_per_step": [base.kernels, mode.kernels],
        "kernel_drop": k_drop,
        "gpu_busy_us_per_step": [base.gpu_busy_ns / 1000, mode.gpu_busy_ns / 1000],
        "busy_drop": b_drop,
        "correctness_ok": mode.correctness_ok,
    }
    facts = (
        f"kernels/step {base.kernels:,g} → {mode.kernels:,g} ({_change(k_drop)}), "
        f"GPU busy/step {base.gpu_busy_ns / 1000:,.1f} → {mode.gpu_busy_ns / 1000:,.1f} µs "
        f"({_change(b_drop)})"
    )
    if mode.correctness_ok is False:
        return Verdict(
            mode.mode,
            "fusion",
            INCONCLUSIVE,
            evidence,
            used,
            f"outputs do not match the baseline, so no speed claim stands; {facts}",
        )
    if k_drop is None or b_drop is None:
        return Verdict(
            mode.mode,
            "fusion",
            INCONCLUSIVE,
            evidence,
            used,
            f"the baseline has no GPU work per step to compare against; {facts}",
        )
    unchecked = "" if mode.correctness_ok else " (outputs not checked: no manifest)"
    if b_drop <= -t.regression_min_rise:
        return Verdict(
            mode.mode, "fusion", REGRESSION, evidence, used,
            f"GPU busy time per step rose{_fusion_context(mode, base, k_drop)}: {facts}",
        )
    if k_drop >= t.fusion_min_kernel_drop and b_drop >= t.fusion_min_busy_drop:
        return Verdict(mode.mode, "fusion", WIN, evidence, used, facts + unchecked)
    reasons = []
    if k_drop < t.fusion_min_kernel_drop:
        reasons.append(_short("kernel count", k_drop, t.fusion_min_kernel_drop))
    if b_drop < t.fusion_min_busy_drop:
        reasons.append(_short("GPU busy time", b_drop, t.fusion_min_busy_drop))
    if mode.input_copies > 0:
        reasons.append(_copies(mode))
    why = "; ".join(reasons)
    bound = _gpu_bound(mode, t)
    if bound:
        why = f"{bound}; {why}"
    return Verdict(mode.mode, "fusion", NO_WIN, evidence, used, f"{why} ({facts})")


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


def launch_verdict(mode: VerdictInputs, base: VerdictInputs, t: Thresholds) -> Verdict:
    """Launches/step and host_wait/step clearly down, and unprofiled time beyond noise."""
    l_drop = relative_drop(base.launches, mode.launches)
    h_drop = relative_drop(base.host_wait_ns, mode.host_wait_ns)
    used = {
        "max_profiler_inflation": t.max_profiler_inflation,
        "launch_min_launch_drop": t.launch_min_launch_drop,
        "launch_min_host_wait_drop": t.launch_min_host_wait_drop,
        "time_noise_k": t.time_noise_k,
        "regression_min_rise": t.regression_min_rise,
    }
    gain_ms = noise_ms = None
    if mode.time_median_ms is not None and base.time_median_ms is not None:
        gain_ms = base.time_median_ms - mode.time_median_ms
        spreads = [s for s in (mode.time_spread_ms, base.time_spread_ms) if s is not None]
        noise_ms = t.time_noise_k * max(spreads) if spreads else None
    evidence: dict[str, Any] = {
        "baseline": base.mode,
        "launches_per_step": [base.launches, mode.launches],
        "launch_drop": l_drop,
        "host_wait_us_per_step": [base.host_wait_ns / 1000, mode.host_wait_ns / 1000],
        "host_wait_drop": h_drop,
        "step_time_ms": [base.time_median_ms, mode.time_median_ms],
        "time_gain_ms": gain_ms,
        "time_noise_ms": noise_ms,
        "timing_noisy": [base.time_noisy, mode.time_noisy],
        "profiler_inflation": mode.inflation,
        "correctness_ok": mode.correctness_ok,
    }
    facts = (
        f"launches/step {base.launches:,g} → {mode.launches:,g} ({_change(l_drop)}), "
        f"host_wait/step {base.host_wait_ns / 1000:,.1f} → {mode.host_wait_ns / 1000:,.1f} µs "
        f"({_change(h_drop)})"
    )
    if gain_ms is not None:
        facts += (
            f", step time {base.time_median_ms:.3f} → {mode.time_median_ms:.3f} ms "
            f"(noise ±{noise_ms or 0:.3f} ms)"
        )

    def verdict(status: str, text: str) -> Verdict:
        return Verdict(mode.mode, "launch", status, evidence, used, text)

    if mode.correctness_ok is False:
        return verdict(INCONCLUSIVE, f"outputs do not match the baseline; {facts}")
    if (
        gain_ms is not None
        and noise_ms is not None
        and -gain_ms
        > max(
            noise_ms,
            t.regression_min_rise * base.time_median_ms,  # type: ignore[operator]
        )
    ):
        return verdict(REGRESSION, _slower_why(mode, base, t) + f" ({facts})")
    trace_ok = (
        l_drop is not None
        and h_drop is not None
        and l_drop >= t.launch_min_launch_drop
        and h_drop >= t.launch_min_host_wait_drop
    )
    if not trace_ok:
        why = _no_launch_win_why(mode, base, t, l_drop, h_drop)
        if (
            l_drop is not None
            and l_drop >= t.launch_min_launch_drop
            and gain_ms is not None
            and noise_ms is not None
            and gain_ms > noise_ms
            and (mode.inflation or 0.0) > t.max_profiler_inflation
        ):
            return verdict(
                INCONCLUSIVE,
                f"launch calls fell and the unprofiled step is faster beyond its noise, but the "
                f"profiler inflated this mode's step {mode.inflation:.1f}× (above "
                f"{t.max_profiler_inflation:g}×), so its host wait cannot show the launch "
                f"overhead: {why} ({facts})",
            )
        return verdict(NO_WIN, f"{why} ({facts})")
    if gain_ms is None:
        return verdict(
            INCONCLUSIVE,
            "the trace shows fewer launches and less host wait, but there is no unprofiled "
            f"step timing (no manifest) to confirm a wall-clock win ({facts})",
        )
    noisy = base.time_noisy or mode.time_noisy
    if noise_ms is None:
        return verdict(INCONCLUSIVE, f"no p10–p90 spread recorded to judge noise ({facts})")
    if gain_ms > noise_ms:
        note = " (timing flagged noisy, but the gain clears its p10–p90 spread)" if noisy else ""
        return verdict(WIN, facts + note)
    if noisy:
        return verdict(INCONCLUSIVE, f"step timing is too noisy to call ({facts})")
    why = (
        f"launches and host wait fell, but the unprofiled step time did not improve beyond its "
        f"noise (it changed {-gain_ms:+.3f} ms; noise ±{noise_ms:.3f} ms)"
    )
    bound = _gpu_bound(base, t)
    if bound:
        why += "; " + bound.replace("GPU-bound", "baseline GPU-bound", 1)
    return verdict(NO_WIN, f"{why} ({facts})")


def _no_launch_win_why(
    mode: VerdictInputs,
    base: VerdictInputs,
    t: Thresholds,
    l_drop: float | None,
    h_drop: float | None,
) -> str:
    """Why launch overhead did not fall, from the data (skips, GPU-bound, input copies)."""
    parts: list[str] = []
    if mode.cudagraph_skips:
        parts.append("cudagraphs skipped: " + "; ".join(mode.cudagraph_skips))
    if base.host_wait_ns == 0:
        parts.append("the baseline has no host wait to remove")
    bound = _gpu_bound(base, t)
    if bound:
        parts.append(bound.replace("GPU-bound", "baseline GPU-bound", 1))
    if l_drop is not None and l_drop < t.launch_min_launch_drop:
        parts.append(_short("launch calls", l_drop, t.launch_min_launch_drop))
    if h_drop is not None and h_drop < t.launch_min_host_wait_drop:
        parts.append(_short("host wait", h_drop, t.launch_min_host_wait_drop))
    parts.extend(_copy_overhead(mode, base))
    if h_drop is not None and h_drop < 0 and mode.cpu_ns > mode.gpu_busy_ns:
        parts.append(
            f"under the profiler the step is CPU-bound: CPU time per step "
            f"{mode.cpu_ns / 1000:,.1f} µs vs GPU busy {mode.gpu_busy_ns / 1000:,.1f} µs, so the "
            "GPU waits for Python / dispatch between launches rather than for the launches"
        )
    return "; ".join(parts) if parts else "launch overhead did not clearly fall"


def _copies(mode: VerdictInputs) -> str:
    n = mode.input_copies
    return f"CUDA graphs add {n:g} input-copy {'activity' if n == 1 else 'activities'} per step"


def _copy_overhead(mode: VerdictInputs, base: VerdictInputs) -> list[str]:
    if mode.input_copies <= 0:
        return []
    text = _copies(mode)
    if mode.cpu_ns >= base.cpu_ns:
        text += (
            f" and the CPU time per step ({mode.cpu_ns / 1000:.1f} µs) is not below the "
            f"baseline's ({base.cpu_ns / 1000:.1f} µs)"
        )
    return [text]


def _slower_why(mode: VerdictInputs, base: VerdictInputs, t: Thresholds) -> str:
    parts = ["unprofiled step time got slower beyond its noise"]
    if mode.cudagraph_skips:
        parts.append("cudagraphs skipped: " + "; ".join(mode.cudagraph_skips))
    if mode.graph_breaks:
        parts.append(f"{mode.graph_breaks} graph break(s)")
    b_rise = -(relative_drop(base.gpu_busy_ns, mode.gpu_busy_ns) or 0.0)
    if b_rise > t.regression_min_rise:
        parts.append(f"GPU busy per step rose {b_rise * 100:.0f}%")
    parts.extend(_copy_overhead(mode, base))
    return "; ".join(parts)


def verdicts_for(mode: VerdictInputs, base: VerdictInputs, t: Thresholds) -> tuple[Verdict, ...]:
    """Both verdicts for one mode against the baseline."""
    return (fusion_verdict(mode, base, t), launch_verdict(mode, base, t))

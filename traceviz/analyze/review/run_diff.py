"""Two runs of one workload (A → B): per mode, the step time change with its verdict and why.

Inputs: each run's manifest and, per mode, the per-step medians of its lean trace
(:class:`~traceviz.analyze.model.PerStep`) and its kernel profile
(:mod:`traceviz.analyze.review.kernel_diff`). Output: a frozen :class:`RunComparison`:

* the **environment diff** (GPU, GPU count, driver, torch, triton, CUDA, cuDNN, Python, the
  workload's name and file hash), each field with both values and whether it changed;
* per mode (every mode of either manifest, A's order first): its status on both sides, the
  step time change (:mod:`traceviz.analyze.review.run_speed`: speed-up A → B, CI, verdict, the
  drift-robust ratio of the paired speed-ups), and why: kernels / launches / graph replays per
  step, GPU busy and host wait per step (lean trace medians), the host's unprofiled issue time
  per step (median of the paired blocks' issue times; the baseline: over every process), the
  correctness status, graph breaks, recompiles, cudagraph skips and capture failures added or
  removed (their messages), the kernel diff, and the **floor** (the fastest paired block per
  step: :func:`~traceviz.analyze.review.run_speed.mode_floor`, what the review gate compares).

A mode that did not run (status other than ``ok``) or has no timing blocks on a side gets the
verdict ``inconclusive`` with the reason (``RunModeDiff.note``).

**Host-only changes** (:func:`host_only_note`, GPU runs only): a mode called faster or slower
whose kernel diff adds and removes no kernel group and whose GPU time per step changed by less
than :data:`HOST_ONLY_MAX_GPU_SHARE` of the step time's change is ``inconclusive`` instead (the
speed-up and its CI stay): the change is host time per step, and a host-bound step's host time
can differ between processes running the same code by more than the baseline's process factors
show (an H100 compiled ``rmsnorm_residual`` step ran at 0.049 and 0.082 ms/step in two
processes of one run, its kernels identical: ``docs/comparison.md``, "Two runs"). Timing both
versions in one process (``profile NEW --against OLD``) separates them. This is the report's
reading only: the review gate (:mod:`traceviz.analyze.review.run_gate`) fails a slowdown beyond the
runs' measured between-process spread (:attr:`RunComparison.spread`), host-side or not. A run
on the CPU gets no host-only note: there the host is the device, every change is host time.

**Between-process spread** (:attr:`RunComparison.spread`): each run's
:func:`~traceviz.analyze.review.run_speed.run_spread` (the spread of the baseline's identical code
across that run's processes), the larger of the two.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass
from typing import Any

from traceviz.analyze.compare.modes import skip_messages
from traceviz.analyze.model import PerStep
from traceviz.analyze.review.kernel_diff import (
    ADDED,
    MIN_CHANGE,
    REMOVED,
    KernelDiff,
    KernelProfile,
    kernel_diff,
)
from traceviz.analyze.review.run_speed import (
    FASTER,
    INCONCLUSIVE,
    SLOWER,
    RunSpeedChange,
    RunSpread,
    mode_floor,
    mode_timing,
    run_speed_change,
    run_spread,
)
from traceviz.analyze.verdicts import Thresholds

#: (label, where in the manifest) of the environment fields compared.
ENV_FIELDS = (
    ("GPU", ("environment", "gpu")), ("GPU count", ("environment", "gpu_count")),
    ("driver", ("environment", "driver")), ("torch", ("environment", "torch")),
    ("triton", ("environment", "triton")), ("CUDA", ("environment", "cuda")),
    ("cuDNN", ("environment", "cudnn")), ("Python", ("environment", "python")),
    ("workload", ("workload", "name")), ("workload sha256", ("workload", "sha256")),
)


@dataclass(frozen=True)
class RunModeData:
    """One mode of one run as loaded: its manifest entry and its lean trace's numbers.

    ``compute_kernels``: compute kernels per step (median; communication kernels left out, as
    in :func:`traceviz.analyze.compare.modes.kernel_counts`); ``None``: ``per_step.kernels`` is the
    count (a trace without communication kernels, or data loaded without it)."""

    mode: str
    entry: dict[str, Any] | None
    per_step: PerStep | None = None
    kernels: KernelProfile | None = None
    compute_kernels: float | None = None


#: A two-run change is host-only when the kernels' GPU time per step changed by less than this
#: share of the step time's change (and no kernel group was added or removed).
HOST_ONLY_MAX_GPU_SHARE = 0.5


@dataclass(frozen=True)
class RunData:
    """One run directory: where it is, its manifest, its modes."""

    path: str
    manifest: dict[str, Any]
    modes: tuple[RunModeData, ...]

    def mode(self, name: str) -> RunModeData | None:
        return next((m for m in self.modes if m.mode == name), None)

    def fingerprint(self) -> str:
        """sha256 of the manifest (two paths holding the same recording share it)."""
        return hashlib.sha256(json.dumps(self.manifest, sort_keys=True, default=str)
                              .encode()).hexdigest()


@dataclass(frozen=True)
class EnvField:
    name: str
    a: str | None
    b: str | None

    @property
    def changed(self) -> bool:
        return self.a != self.b


@dataclass(frozen=True)
class Pair:
    """A number on both sides (``None``: not known there)."""

    a: float | None
    b: float | None


@dataclass(frozen=True)
class MessageChange:
    """A diagnostic message present on one side only (``side``: "added" in B / "removed")."""

    what: str  # "graph break", "recompile", "cudagraph skip", "failure"
    side: str
    message: str


@dataclass(frozen=True)
class RunModeDiff:
    """One mode, A → B (module doc)."""

    mode: str
    status_a: str
    status_b: str
    speed: RunSpeedChange | None
    verdict: str  # faster / slower / unchanged / inconclusive
    note: str  # why there is no speed change or it is not judged (host-only), or ""
    kernels: Pair
    launches: Pair
    graph_launches: Pair
    gpu_busy_ns: Pair
    host_wait_ns: Pair  # host + sync wait per step, lean trace
    host_issue_ms: Pair  # unprofiled host issue time per step (paired blocks)
    correctness: tuple[bool | None, bool | None]
    graph_breaks: Pair
    recompiles: Pair
    messages: tuple[MessageChange, ...]
    kernel_diff: KernelDiff | None
    floor_ms: Pair = Pair(None, None)  # fastest paired block per step (run_speed's floor)

    def top_cause(self) -> str | None:
        """The kernel group that added the most GPU time per step, in words (``None``: none
        did)."""
        if self.kernel_diff is None:
            return None
        worst = max(self.kernel_diff.changes, key=lambda r: r.delta_ns, default=None)
        return worst.phrase() if worst is not None and worst.delta_ns > 0 else None


@dataclass(frozen=True)
class RunComparison:
    """Run A against run B."""

    a: str
    b: str
    baseline: str
    same_recording: bool
    environment: tuple[EnvField, ...]
    modes: tuple[RunModeDiff, ...]
    min_speedup: float
    notes: tuple[str, ...] = ()
    spread_a: RunSpread | None = None  # run A's between-process spread (module doc)
    spread_b: RunSpread | None = None

    def mode(self, name: str) -> RunModeDiff | None:
        return next((m for m in self.modes if m.mode == name), None)

    @property
    def spread(self) -> tuple[str, RunSpread] | None:
        """("A" or "B", its spread): the larger of the two runs' between-process spreads
        (module doc; A on a tie); ``None`` when neither run could measure one."""
        found = [(side, s) for side, s in (("A", self.spread_a), ("B", self.spread_b))
                 if s is not None]
        return max(found, key=lambda f: f[1].value, default=None)


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def environment_diff(a: dict[str, Any], b: dict[str, Any]) -> tuple[EnvField, ...]:
    """The :data:`ENV_FIELDS` of two manifests."""
    return tuple(EnvField(name, _text(_get(a, *path)), _text(_get(b, *path)))
                 for name, path in ENV_FIELDS)


def _count(v: Any) -> float | None:
    if isinstance(v, (list, tuple)):
        return float(len(v))
    return float(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _messages(entry: dict[str, Any] | None) -> dict[str, set[str]]:
    c = _get(entry, "compile")
    breaks = _get(c, "break_reasons")
    breaks = breaks.values() if isinstance(breaks, dict) else breaks
    out = {
        "graph break": {str(m) for m in breaks or ()},
        "recompile": {str(m) for m in (_get(c, "recompile_reasons") or ())},
        "cudagraph skip": set(skip_messages(_get(c, "cudagraph_skips"))),
        "failure": set(),
    }
    if _get(entry, "status") not in (None, "ok"):
        out["failure"].add(f"{_get(entry, 'status')}: {_get(entry, 'reason') or 'no reason'}")
    return out


def message_changes(a: dict[str, Any] | None, b: dict[str, Any] | None
                    ) -> tuple[MessageChange, ...]:
    """Diagnostic messages on one side only: graph-break and recompile reasons, cudagraph skips
    and a mode's failure (status and reason)."""
    ma, mb = _messages(a), _messages(b)
    out = []
    for what in ma:
        out += [MessageChange(what, "added", m) for m in sorted(mb[what] - ma[what])]
        out += [MessageChange(what, "removed", m) for m in sorted(ma[what] - mb[what])]
    return tuple(out)


def _issue_ms(run: RunData, mode: str, baseline: str) -> float | None:
    """Median unprofiled host issue time per step: the mode's paired issue times, or the
    baseline's over every process paired against it."""
    key = "baseline_issue_ms" if mode == baseline else "mode_issue_ms"
    entries = ([m.entry for m in run.modes if m.mode != baseline] if mode == baseline
               else [e.entry for e in run.modes if e.mode == mode])
    values = []
    for e in entries:
        p = _get(e, "paired")
        if _get(p, "baseline") == baseline and isinstance(_get(p, key), list):
            values += [float(v) for v in p[key] if isinstance(v, (int, float))]
    return float(statistics.median(values)) if values else None


def _ps(d: RunModeData | None, name: str) -> float | None:
    ps = d.per_step if d is not None else None
    if ps is None:
        return None
    if name == "kernels" and d is not None and d.compute_kernels is not None:
        return d.compute_kernels
    if name == "host_wait_ns":
        return ps.host_wait_ns + ps.sync_wait_ns
    return float(getattr(ps, name))


def _status(d: RunModeData | None) -> str:
    if d is None:
        return "absent"
    return str(_get(d.entry, "status") or "ok")


def on_cpu(manifest: dict[str, Any]) -> bool:
    """Whether a run's steps ran on the CPU: ``settings.device`` ``cpu``, or an environment
    that recorded no GPU (``gpu_count`` 0, or ``gpu`` present and empty)."""
    env = _get(manifest, "environment")
    return (_get(manifest, "settings", "device") == "cpu"
            or (isinstance(env, dict) and (env.get("gpu_count") == 0
                                           or ("gpu" in env and not env["gpu"]))))


def host_only_note(speed: RunSpeedChange | None, kd: KernelDiff | None, *,
                   cpu: bool = False) -> str | None:
    """Why a faster / slower two-run change is not judged: the step's GPU work did not change
    enough to explain it (module doc, "Host-only changes"); ``None`` when it did, when there
    is no call or no kernel diff to read, or on the CPU (``cpu``: either run's steps ran there,
    where every change is host time)."""
    if cpu or speed is None or kd is None or speed.status not in (FASTER, SLOWER):
        return None
    if any(r.status in (ADDED, REMOVED) for r in kd.rows):
        return None
    step_ns = (speed.step_ms_b - speed.step_ms_a) * 1e6
    if abs(kd.delta_ns) >= HOST_ONLY_MAX_GPU_SHARE * abs(step_ns):
        return None
    return (f"the two runs' kernels match (none added or removed) and their GPU time per step "
            f"changed by {kd.delta_ns / 1000:+,.1f} µs of the step's {step_ns / 1000:+,.1f} µs: "
            "the change is host time, which can differ between processes running the same "
            "code by more than the baseline's processes show (docs/comparison.md, Two runs); "
            "time both versions in one process: profile NEW --against OLD")


def mode_diff(a: RunData, b: RunData, mode: str, baseline: str, t: Thresholds,
              same: bool, min_change: float = MIN_CHANGE) -> RunModeDiff:
    """One mode of ``a`` against ``b`` (module doc)."""
    da, db = a.mode(mode), b.mode(mode)
    sa, sb = _status(da), _status(db)
    speed, note = None, ""
    if sa != "ok" or sb != "ok":
        note = f"the mode did not run on both sides (A: {sa}, B: {sb})"
    else:
        ta = mode_timing(dict(a.manifest.get("modes") or {}), mode, baseline)
        tb = mode_timing(dict(b.manifest.get("modes") or {}), mode, baseline)
        if ta is None or tb is None:
            side = " and ".join(s for s, x in (("A", ta), ("B", tb)) if x is None)
            note = (f"no paired timing blocks against {baseline!r} in {side} (manifest schema "
                    "1, or the pairing failed)")
        else:
            speed = run_speed_change(ta, tb, t.min_speedup, same_recording=same)
    ea, eb = (da.entry if da else None), (db.entry if db else None)
    kd = (kernel_diff(da.kernels, db.kernels, min_change)
          if da is not None and db is not None and da.kernels is not None
          and db.kernels is not None else None)
    ok_a, ok_b = _get(ea, "correctness", "ok"), _get(eb, "correctness", "ok")
    verdict = speed.status if speed is not None else INCONCLUSIVE
    cpu = on_cpu(a.manifest) or on_cpu(b.manifest)
    if (host_only := host_only_note(speed, kd, cpu=cpu)) is not None:
        verdict, note = INCONCLUSIVE, host_only
    return RunModeDiff(
        mode, sa, sb, speed, verdict, note,
        *(Pair(_ps(da, n), _ps(db, n)) for n in ("kernels", "launches", "graph_launches",
                                                 "gpu_busy_ns", "host_wait_ns")),
        Pair(_issue_ms(a, mode, baseline), _issue_ms(b, mode, baseline)),
        (ok_a if isinstance(ok_a, bool) else None, ok_b if isinstance(ok_b, bool) else None),
        Pair(_count(_get(ea, "compile", "graph_breaks")),
             _count(_get(eb, "compile", "graph_breaks"))),
        Pair(_count(_get(ea, "compile", "recompiles")),
             _count(_get(eb, "compile", "recompiles"))),
        message_changes(ea, eb), kd,
        Pair(*(mode_floor(dict(r.manifest.get("modes") or {}), mode, baseline)
               for r in (a, b))),
    )


def compare_runs(a: RunData, b: RunData, thresholds: Thresholds | None = None,
                 baseline: str = "eager", min_change: float = MIN_CHANGE) -> RunComparison:
    """Run ``a`` against run ``b``, every mode of either (module doc)."""
    t = thresholds or Thresholds()
    same = a.fingerprint() == b.fingerprint()
    names = [m.mode for m in a.modes] + [m.mode for m in b.modes if a.mode(m.mode) is None]
    env = environment_diff(a.manifest, b.manifest)
    notes = []
    if same:
        notes.append("A and B are the same recording (identical manifests): one measurement, "
                     "so every step time is unchanged with CI [1, 1]")
    wl = next(f for f in env if f.name == "workload")
    if wl.changed:
        notes.append(f"different workloads: {wl.a or 'unknown'} → {wl.b or 'unknown'}; the "
                     "comparison is not like for like")
    gpu = next(f for f in env if f.name == "GPU")
    if gpu.changed:
        a_gpu, b_gpu = ((g or ("no GPU (a CPU run)" if on_cpu(r.manifest) else "unknown"))
                        for g, r in ((gpu.a, a), (gpu.b, b)))
        notes.append(f"different GPUs: {a_gpu} → {b_gpu}; each mode's change includes the "
                     "GPU's (the ratio of paired speed-ups cancels what the GPU does to the "
                     "baseline too)")
    modes = tuple(mode_diff(a, b, m, baseline, t, same, min_change) for m in names)
    spreads = (run_spread(dict(r.manifest.get("modes") or {}), baseline) for r in (a, b))
    return RunComparison(a.path, b.path, baseline, same, env, modes, t.min_speedup,
                         tuple(notes), *spreads)

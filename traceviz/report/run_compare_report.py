"""``traceviz compare RUN_A RUN_B``: two run directories of one workload, mode by mode.

:func:`load_run` reads a run directory (manifest, and per mode the lean trace's per-step
medians and kernel profile; for ``profile --nproc`` the slowest rank's), :func:`build` compares
(:mod:`traceviz.analyze.review.run_diff`) and builds the report model, :func:`render` formats it.
Definitions: ``docs/comparison.md``, "Two runs".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.analyze.model import PerStep
from traceviz.analyze.review.kernel_diff import MIN_CHANGE, KernelProfile, kernel_profile
from traceviz.analyze.review.run_diff import (
    Pair,
    RunComparison,
    RunData,
    RunModeData,
    RunModeDiff,
    compare_runs,
)
from traceviz.analyze.verdicts import Thresholds
from traceviz.errors import UsageError
from traceviz.report.kernel_diff_section import kernel_table
from traceviz.report.model import Report, Section, Table, num
from traceviz.report.run_dir import MANIFEST, is_run_dir, read_run_manifest

if TYPE_CHECKING:
    from traceviz.analyze.analysis import Analysis

SCHEMA = "traceviz.compare-runs/1"

#: Traces a caller has already analysed, by the path it read them at (``run_dir / name``):
#: their analysis and kernel profile, which :func:`load_run` takes instead of reading them again.
Analysed = Mapping[Path, "tuple[Analysis, KernelProfile]"]


def _analyse(paths: list[Path], workers: int | None, analysed: Analysed
             ) -> tuple[PerStep | None, KernelProfile | None, float | None]:
    """Per-step medians, kernel profile and compute kernels per step (``None`` without
    communication kernels) of a mode's trace (the slowest rank's of several), each trace loaded
    and analysed by ``workers`` unless ``analysed`` holds it."""
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.compare.modes import kernel_counts
    from traceviz.analyze.distributed.slowest import slowest_rank_index
    from traceviz.trace import load

    found = []
    for p in paths:
        if p in analysed:
            found.append(analysed[p])
            continue
        trace = load(p, workers=workers)
        a = analyze(trace, workers=workers)
        found.append((a, kernel_profile(trace, a)))
    if not found:
        return None, None, None
    i = slowest_rank_index([a for a, _ in found]) if len(found) > 1 else 0
    a, profile = found[i]
    counts = kernel_counts(a)
    return a.per_step, profile, (counts.kernels if counts.comm_kernels is not None else None)


def load_run(path: Path, *, workers: int | None = None, analysed: Analysed | None = None
             ) -> RunData:
    """A run directory's manifest and, per mode with a lean trace, its numbers (its traces
    loaded and analysed by ``workers``, ``None``: every usable core; those in ``analysed`` taken
    from there)."""
    if not is_run_dir(path):
        raise UsageError(f"{path}: not a run directory (no {MANIFEST})")
    manifest, modes = read_run_manifest(path)
    out = []
    for mode, entry in modes.items():
        prof = entry.get("profiled") if isinstance(entry, dict) else None
        names = (prof.get("traces") if isinstance(prof, dict) else None) or (
            [prof["trace"]] if isinstance(prof, dict) and prof.get("trace") else [])
        files = [path / str(n) for n in names if (path / str(n)).is_file()]
        per_step, kernels, compute = _analyse(files, workers, analysed or {})
        out.append(RunModeData(str(mode), entry if isinstance(entry, dict) else None, per_step,
                               kernels, compute))
    return RunData(str(path), manifest, tuple(out))


def load_pair(a: Path, b: Path, *, workers: int | None = None) -> tuple[RunData, RunData]:
    """Both runs (one load when both paths are the same directory), by ``workers``; both
    manifests are checked before either run's traces are read."""
    if is_run_dir(b):
        read_run_manifest(b)
    ra = load_run(a, workers=workers)
    same = a.resolve() == b.resolve()
    return ra, (RunData(str(b), ra.manifest, ra.modes) if same
                else load_run(b, workers=workers))


# --- the report model ------------------------------------------------------------------------


def _ms(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:,.3f}" if abs(x) >= 0.1 else f"{x:.4f}"


def _pair(p: Pair, scale: float = 1.0, digits: int = 1) -> str:
    """"48 → 29", "120.5 → 98.0" (``scale`` divides: 1000 for ns → µs), "–" sides unknown."""
    def one(v: float | None) -> str:
        return "–" if v is None else num(v / scale, digits if (v / scale) % 1 else 0)
    if p.a is None and p.b is None:
        return "–"
    return one(p.a) if p.a == p.b else f"{one(p.a)} → {one(p.b)}"


def _ok(v: bool | None) -> str:
    return {True: "match", False: "MISMATCH", None: "not checked"}[v]


def speed_cells(d: RunModeDiff) -> tuple[str, str, str, str]:
    """(step ms A → B, speed-up A → B with CI, drift-robust ratio with CI, change)."""
    s = d.speed
    if s is None:
        return "–", "–", "–", d.note
    lvl = f"{s.level * 100:.0f} %"
    ratio = ("–" if s.ratio is None else
             f"{s.ratio.value:.3f} ({s.ratio.low:.3f}–{s.ratio.high:.3f})")
    return (f"{_ms(s.step_ms_a)} → {_ms(s.step_ms_b)}",
            f"{s.speedup.value:.3f} ({lvl} CI {s.speedup.low:.3f}–{s.speedup.high:.3f})",
            ratio, f"{s.change * 100:+.1f} %")


def _speed_table(c: RunComparison) -> Table:
    rows = []
    for d in c.modes:
        step, up, ratio, change = speed_cells(d)
        status = d.status_a if d.status_a == d.status_b else f"{d.status_a} → {d.status_b}"
        verdict = d.verdict if not (d.speed and d.note) else f"{d.verdict} (host-only change)"
        rows.append((d.mode, status, verdict, step, change, up, ratio))
    return Table("tbl-run-speed", "Step time A → B",
                 ("mode", "ran", "verdict", "step ms A → B", "B vs A", "speed-up A → B",
                  "paired speed-up B / A"), tuple(rows),
                 (False, False, False, True, True, True, True), sortable=True)


def why_table(c: RunComparison, title: str = "Per step, A → B") -> Table:
    """Per mode, A → B: counts, GPU busy, host wait and issue per step, outputs, graph breaks
    and recompiles."""
    rows = [(d.mode, _pair(d.kernels), _pair(d.launches), _pair(d.graph_launches),
             _pair(d.gpu_busy_ns, 1000), _pair(d.host_wait_ns, 1000),
             _pair(d.host_issue_ms, 1 / 1000),
             _ok(d.correctness[0]) if d.correctness[0] == d.correctness[1]
             else f"{_ok(d.correctness[0])} → {_ok(d.correctness[1])}",
             _pair(d.graph_breaks), _pair(d.recompiles))
            for d in c.modes]
    return Table("tbl-run-why", title,
                 ("mode", "kernels", "launches", "graph replays", "GPU busy µs",
                  "host wait µs", "host issue µs (unprofiled)", "outputs", "graph breaks",
                  "recompiles"), tuple(rows),
                 (False, True, True, True, True, True, True, False, True, True), sortable=True)


def messages_table(c: RunComparison, title: str = "Diagnostics added or removed in B",
                   side: str = "in B") -> Table:
    """Graph-break and recompile reasons, cudagraph skips and failures on one side only."""
    return Table("tbl-run-messages", title, ("mode", "what", side, "message"),
                 tuple((d.mode, m.what, m.side, m.message) for d in c.modes for m in d.messages),
                 (False, False, False, False), clip=(False, False, False, True))


def kernel_tables(c: RunComparison, what: str = "changed kernels") -> tuple[Table, ...]:
    """One kernel-diff table per mode that has one."""
    return tuple(kernel_table(d.kernel_diff, f"tbl-kernels-{i}", f"{d.mode}: {what}")
                 for i, d in enumerate(c.modes) if d.kernel_diff is not None)


def mode_document(d: RunModeDiff) -> dict[str, Any]:
    """One mode's JSON row (speed and kernel diff as dicts, the top cause in words)."""
    row = asdict(d)
    row["speed"] = d.speed.as_dict() if d.speed is not None else None
    row["kernel_diff"] = d.kernel_diff.as_dict() if d.kernel_diff is not None else None
    row["top_cause"] = d.top_cause()
    return row


def build(a: Path, b: Path, thresholds: Thresholds | None = None,
          min_change: float = MIN_CHANGE, *, workers: int | None = None
          ) -> tuple[RunComparison, Report]:
    """Compare run ``a`` with run ``b`` (their traces loaded and analysed by ``workers``;
    ``None``: every usable core) and build the report model."""
    from traceviz.analyze.review.manifest_check import manifest_warnings

    ra, rb = load_pair(a, b, workers=workers)
    c = compare_runs(ra, rb, thresholds, min_change=min_change)
    named = tuple(f"{side}: {w}" for side, run in (("A", ra), ("B", rb))
                  for w in manifest_warnings(run.manifest))
    c = replace(c, notes=c.notes + named) if named else c
    return c, report_of(c)


def report_of(c: RunComparison) -> Report:
    """The report model of a run comparison."""
    env = Table("tbl-run-env", "Environment", ("", "A", "B", "changed"),
                tuple((f.name, f.a or "–", f.b or "–", "CHANGED" if f.changed else "")
                      for f in c.environment), (False, False, False, False))
    msgs = messages_table(c)
    pct = f"{c.min_speedup * 100:g} %"
    sections = [
        Section("environment", "Environment", "What differs between the two runs' machines and "
                "software; a changed GPU, driver or library is part of every change below.",
                (env,)),
        Section("speed", "Step time", f"Per mode, A → B. speed-up = A's step time / B's (> 1: "
                "B faster); step time = median block time per step (the baseline: median over "
                "its processes). CI: bootstrap over each run's timing blocks, times a process "
                "factor drawn from the run's baseline-per-process spread (the runs are separate "
                f"processes). faster / slower: the whole CI beyond ±{pct}; unchanged: within; "
                "else inconclusive. Paired speed-up B / A: each run's own ABBA speed-up over "
                "the baseline, B's over A's (drift-robust: a uniformly slower machine cancels). "
                "Definitions: docs/comparison.md, Two runs.", (_speed_table(c),)),
        Section("why", "Why", "Medians per step with GPU work of each run's lean trace; host "
                "issue: the paired blocks' unprofiled host issue time; outputs: the correctness "
                "check; graph breaks and recompiles from the manifest.",
                (why_table(c), msgs)),
    ]
    kernels = kernel_tables(c)
    if kernels:
        sections.append(Section("kernels", "Kernel diff per mode", "Each mode's kernels "
                                "matched across the runs, by impact on the step.", kernels))
    facts = (("A", c.a), ("B", c.b), ("baseline", c.baseline),
             ("verdicts", ", ".join(f"{d.mode} {d.verdict}" for d in c.modes)))
    return Report(kind="runs", title="traceviz run comparison: A → B", facts=facts,
                  warnings=c.notes + tuple(f"{d.mode}: {d.note}" for d in c.modes
                                           if d.speed is not None and d.note),
                  sections=tuple(sections))


def document(c: RunComparison) -> dict[str, Any]:
    """The JSON document (``--format json``)."""
    modes = [mode_document(d) for d in c.modes]
    return {"schema": SCHEMA, "a": c.a, "b": c.b, "baseline": c.baseline,
            "same_recording": c.same_recording, "min_speedup": c.min_speedup,
            "notes": list(c.notes),
            "spread": {side: None if sp is None else sp.as_dict()
                       for side, sp in (("a", c.spread_a), ("b", c.spread_b))},
            "environment": [{**asdict(f), "changed": f.changed} for f in c.environment],
            "modes": modes}


def render(c: RunComparison, report: Report, fmt: str, plotlyjs: str = "inline") -> str:
    """The run comparison as ``html``, ``md``, ``json`` or ``text``."""
    if fmt == "html":
        from traceviz.report.html import render_html

        return render_html(report, plotlyjs)
    if fmt == "md":
        from traceviz.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from traceviz.report.jsonout import dumps

        return dumps(document(c))
    if fmt == "text":
        from traceviz.report.report_text import render_report_text

        return render_report_text(report)
    raise UsageError(f"unknown format {fmt!r}; one of html, json, md, text")

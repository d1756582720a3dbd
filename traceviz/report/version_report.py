"""The old → new part of a ``profile NEW --against OLD`` run's report, in the report model.

:func:`load_version_runs` reads the run (NEW's run directory and OLD's in ``old/``), which
:mod:`traceviz.analyze.review.version_diff` compares; :func:`version_sections` are the sections the
comparison report leads with, :func:`version_document` the JSON's ``against`` object and
:func:`version_text` the terminal table. Definitions: ``docs/comparison.md``, "Two versions of a
step".
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from traceviz.analyze.review.kernel_diff import ADDED, REMOVED, KernelChange, KernelDiff
from traceviz.analyze.review.run_diff import RunData
from traceviz.analyze.review.version_diff import (
    CAPTURE_SPREAD_NS,
    VersionComparison,
    VersionModeDiff,
)
from traceviz.report.kernel_diff_section import kernel_table
from traceviz.report.model import Section, Table
from traceviz.report.run_compare_report import (
    Analysed,
    load_run,
    messages_table,
    mode_document,
    why_table,
)
from traceviz.report.shorten import middle_ellipsis

SCHEMA = "traceviz.versions/1"
_FUNCTOR = re.compile(r"(\w+Functor)\b")
_BASE = re.compile(r"at::native::(?:\w+::)*(\w+_kernel\w*)<")
#: The speed table's columns (numeric ones right-aligned).
SPEED_COLUMNS = (("mode", False), ("verdict", False), ("step ms old → new", True),
                 ("new vs old", True), ("speed-up old/new (95 % CI)", True), ("pairs", True),
                 ("separate processes", True), ("outputs vs old", False),
                 ("first kernel change", False))


def load_version_runs(run_dir: Path, manifest: dict[str, Any], *, workers: int | None = None,
                      analysed: Analysed | None = None) -> tuple[RunData, RunData] | None:
    """OLD's and NEW's runs of a ``profile --against`` run directory whose ``manifest`` the
    caller read, their traces analysed by ``workers``, NEW's taken from ``analysed`` where the
    caller already analysed them (``None``: the run has no old version)."""
    against = manifest.get("against")
    if not isinstance(against, dict) or not against.get("run"):
        return None
    return (load_run(run_dir / str(against["run"]), workers=workers),
            load_run(run_dir, workers=workers, analysed=analysed))


def _outputs(d: VersionModeDiff) -> str:
    o = d.outputs_vs_old
    if o is None:
        return "–"
    if not o.get("compared"):
        return "not compared"
    return "match" if o.get("ok") else "DIFFER"


def added_first(diff: KernelDiff) -> KernelDiff:
    """The diff with added and removed kernel groups first (each part by impact): what a new
    version brought in or dropped is the first thing a reviewer asks about."""
    rows = sorted(diff.rows, key=lambda r: r.status not in (ADDED, REMOVED))
    return replace(diff, rows=tuple(rows))


def _first(d: VersionModeDiff) -> KernelChange | None:
    kd = d.why.kernel_diff
    changes = added_first(kd).changes if kd is not None else ()
    return changes[0] if changes else None


def first_change(d: VersionModeDiff) -> str:
    """The first changed kernel group (added / removed first, then by impact), in words."""
    first = _first(d)
    return first.phrase() if first is not None else "–"


def kernel_label(key: str, width: int = 60) -> str:
    """A kernel name short enough for a table cell: an ATen elementwise kernel as its base name
    and functor (``vectorized_elementwise_kernel<MulFunctor>``), else the name with a middle
    ellipsis."""
    functors = _FUNCTOR.findall(key)
    base = _BASE.search(key)
    if functors and base:
        return f"{base.group(1)}<{functors[-1]}>"
    return middle_ellipsis(key, width)


def first_change_cell(d: VersionModeDiff) -> str:
    """:func:`first_change` for a table cell: the kernel as :func:`kernel_label`, its status and
    the change of GPU time per step."""
    first = _first(d)
    if first is None:
        return "–"
    return (f"{kernel_label(first.key)} {first.status}: {first.delta_ns / 1000:+,.1f} µs/step, "
            f"{first.count_a:g} → {first.count_b:g} per step")


def _ms(x: float) -> str:
    return f"{x:,.3f}" if abs(x) >= 0.1 else f"{x:.4f}"


def speed_rows(vc: VersionComparison) -> list[tuple[str, ...]]:
    """One row per mode: the paired verdict and numbers, the separate-process estimate."""
    rows = []
    for d in vc.modes:
        s = d.speed
        w = d.why.speed
        separate = (f"{w.speedup.value:.3f} ({w.speedup.low:.3f}–{w.speedup.high:.3f}) "
                    f"{d.why.verdict}" if w is not None else "–")
        if s is None:
            rows.append((d.mode, d.verdict, "–", "–", d.note, "–", separate, _outputs(d),
                         first_change_cell(d)))
            continue
        verdict = (f"{d.verdict} (±{s.threshold * 100:.1f} %: graph captures)"
                   if s.threshold > s.min_speedup else d.verdict)
        rows.append((d.mode, verdict, f"{_ms(s.old_ms)} → {_ms(s.new_ms)}",
                     f"{s.change * 100:+.1f} %",
                     f"{s.speedup.value:.3f} ({s.speedup.low:.3f}–{s.speedup.high:.3f})",
                     str(s.pairs), separate, _outputs(d), first_change_cell(d)))
    return rows


def version_facts(vc: VersionComparison) -> tuple[tuple[str, str], ...]:
    """The header facts: both files and the verdicts."""
    return (("old version", vc.old), ("new version", vc.new),
            ("old → new", ", ".join(f"{d.mode} {d.verdict}" for d in vc.modes)))


def version_sections(vc: VersionComparison) -> tuple[Section, ...]:
    """The sections the report leads with: speed, why, kernels."""
    pct = f"{vc.min_speedup * 100:g} %"
    speed = Table("tbl-version-speed", "Old → new, per mode",
                  tuple(c for c, _ in SPEED_COLUMNS), tuple(speed_rows(vc)),
                  tuple(n for _, n in SPEED_COLUMNS), sortable=True)
    sections = [
        Section("versions", "Old → new", "Per mode, the new version of the step timed against "
                "the old one in ABBA pairs in one process. speed-up = old's block time / new's, "
                "median over pairs (> 1: new is faster), 95 % bootstrap CI over the pairs. "
                f"faster / slower: the whole CI beyond ±{pct}; unchanged: within; else "
                "inconclusive. A mode that replays CUDA graphs: beyond at least "
                f"{CAPTURE_SPREAD_NS / 1e3:g} µs per step of the old step (two captures of the "
                "same kernels replay that far apart), the band shown beside its verdict. "
                "Separate processes: the same change estimated from the two "
                "versions' own runs (two-run method, shown beside, not judged). Outputs vs old: "
                "the two versions' outputs compared when their inputs are equal. Definitions: "
                "docs/comparison.md, Two versions of a step.", (speed,)),
        Section("versions-why", "Why, old → new", "Each version's own run (old: RUN/old): "
                "medians per step with GPU work of its lean trace, the unprofiled host issue "
                "time of its paired blocks, its correctness check and compile diagnostics.",
                (why_table(vc.runs, "Per step, old → new"),
                 messages_table(vc.runs, "Diagnostics added or removed in the new version",
                                "in new"))),
    ]
    kernels = tuple(kernel_table(added_first(d.why.kernel_diff), f"tbl-version-kernels-{i}",
                                 f"{d.mode}: changed kernels, old → new")
                    for i, d in enumerate(vc.modes) if d.why.kernel_diff is not None)
    if kernels:
        sections.append(Section("versions-kernels", "Kernel diff, old → new", "Each mode's "
                                "kernels matched across the versions (A: old, B: new): added "
                                "and removed groups first, then by impact on the step.",
                                kernels))
    return tuple(sections)


def version_document(vc: VersionComparison) -> dict[str, Any]:
    """The JSON object of the old → new comparison."""
    return {
        "schema": SCHEMA, "old": vc.old, "new": vc.new, "min_speedup": vc.min_speedup,
        "modes": [{"mode": d.mode, "against_status": d.against_status, "verdict": d.verdict,
                   "note": d.note,
                   "speed": d.speed.as_dict() if d.speed is not None else None,
                   "outputs_vs_old": d.outputs_vs_old, "first_kernel_change": first_change(d),
                   "why": mode_document(d.why)}
                  for d in vc.modes],
    }


def version_text(vc: VersionComparison, width: int | None) -> Any:
    """The speed table as a rich renderable fitted to ``width`` columns."""
    from traceviz.report.fit import KEEP, Column, fit_table

    priority = {"mode": KEEP, "verdict": KEEP, "speed-up old/new (95 % CI)": 9,
                "step ms old → new": 8, "new vs old": 7, "outputs vs old": 5, "pairs": 2,
                "separate processes": 1, "first kernel change": 6}
    columns = [Column(name, numeric, priority[name],
                      30 if name == "first kernel change" else None)
               for name, numeric in SPEED_COLUMNS]
    return fit_table(columns, speed_rows(vc), width,
                     title=f"Old → new ({Path(vc.old).name} → {Path(vc.new).name})")

"""The comparison report's "where the time went" parts: the unprofiled split and the waterfalls.

:func:`split_table` (one row per mode with an unprofiled split: pair-level and separate-process
step times, host issue time, host-bound or GPU-bound, and the saving with its CIs),
:func:`unprofiled_section` (that table with what it means) and :func:`waterfall_section` (one
figure per mode, one table per waterfall kind). Definitions:
:mod:`traceviz.analyze.compare.unprofiled` and :mod:`traceviz.analyze.compare.waterfall`.
"""

from __future__ import annotations

from traceviz.analyze.compare.modes import Comparison
from traceviz.analyze.compare.unprofiled import Estimate, Side
from traceviz.analyze.compare.waterfall import UNPROFILED, UNPROFILED_COMPONENTS, Waterfall
from traceviz.report import figures
from traceviz.report.model import Figure, Section, Table, ms, us

SPLIT_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("mode", False), ("pairs", True), ("step ms in pairs", True),
    ("step ms, own processes", True), ("host issue ms", True), ("GPU behind host (steps)", True),
    ("bound", False), ("saved ms/step", True), ("issue saved ms/step", True),
    ("issue share", True), ("inflation lean / stacked", True),
)


def _pair(a: float | None, b: float | None) -> str:
    return f"{ms(a)} → {ms(b)}"


def _est(e: Estimate) -> str:
    return f"{e.value:+,.4f} ({e.low:+,.4f} – {e.high:+,.4f})"


def _share(e: Estimate | None) -> str:
    if e is None:
        return "– (saving's CI reaches 0)"
    return f"{e.value * 100:.0f}% ({e.low * 100:.0f}–{e.high * 100:.0f}%)"


def _bound(side: Side) -> str:
    return "host" if side.host_bound else "GPU"


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def split_rows(c: Comparison) -> list[tuple[str, ...]]:
    """One formatted row per mode with an unprofiled split, in the comparison's row order."""
    rows = {r.mode: r for r in c.rows}
    base = rows.get(c.baseline)
    out = []
    for mode, s in ((r.mode, c.unprofiled.get(r.mode)) for r in c.rows):
        if s is None:
            continue
        r = rows[mode]
        out.append((
            mode, f"{s.pairs}", _pair(s.baseline.period_ms, s.mode.period_ms),
            _pair(base.time_median_ms if base else None, r.time_median_ms),
            _pair(s.baseline.issue_ms, s.mode.issue_ms),
            f"{s.baseline.lag_steps.value:,.2f} / {s.mode.lag_steps.value:,.2f}",
            f"{_bound(s.baseline)} / {_bound(s.mode)}",
            _est(s.saved_ms), _est(s.issue_saved_ms), _share(s.issue_share),
            f"{_x(r.inflation)} / {_x(r.stack_inflation)}",
        ))
    return out


def split_table(c: Comparison) -> Table:
    """The unprofiled split of every mode that has one (baseline → mode in each cell)."""
    level = next(iter(c.unprofiled.values())).level if c.unprofiled else 0.95
    return Table(
        "tbl-unprofiled", "Unprofiled host/GPU split (baseline → mode, ms per step)",
        tuple(n for n, _ in SPLIT_COLUMNS), tuple(split_rows(c)),
        tuple(n for _, n in SPLIT_COLUMNS),
        f"Medians over the pairs; brackets: {level * 100:.0f} % bootstrap CIs from the "
        "speed-up's resamples. bound: host when the GPU ended at most "
        f"{c.thresholds.host_bound_max_lag_steps:g} step behind the host in a block "
        "(host_bound_max_lag_steps), else GPU.",
    )


def unprofiled_section(c: Comparison) -> Section | None:
    """The unprofiled split with what it means, or ``None`` when no mode has one."""
    if not c.unprofiled:
        return None
    return Section(
        "unprofiled", "Where the time went, without the profiler",
        "Measured in the paired blocks, with no profiler running. step ms in pairs: the "
        "baseline and the mode timed in alternation (ABBA) in the mode's own process: the "
        "verdicts use these. step ms, own processes: each mode's median from its own process, "
        "minutes apart; they differ from the pair-level numbers by drift between processes "
        "(clocks, temperature, allocator and cache state), which pairing cancels, so a small "
        "win can show there as two equal times. host issue ms: CPU time per step to issue the "
        "work (first call to last return, before the synchronize). GPU behind host: how many "
        "steps of GPU work were still queued when the host returned from the last call. "
        "issue share: the share of the step time saved that the saving of host issue time "
        "explains (launch verdict). inflation: profiled step time / unprofiled (medians over "
        "steps), of the lean trace the verdicts read and of the stacked trace the host-wait "
        "sources come from. The two are recorded in two processes, and a trace's inflation "
        "varies between processes (docs/comparison.md, \"How far a trace's inflation can be "
        "trusted\"), so where stacks cost little, as in GPU-bound steps, the stacked trace can "
        "come out the less inflated.",
        (split_table(c),),
    )


def _waterfall_table(waterfalls: list[Waterfall]) -> Table:
    unprofiled = waterfalls[0].units == UNPROFILED
    parts = next((w for w in waterfalls if w.comm), waterfalls[0]).components
    columns = [("mode", False), ("baseline", True), ("mode step", True), ("Δ total", True),
               *((label, True) for _, label in parts)]
    if unprofiled:
        columns.append(("Δhost issue (cross-check)", True))
    rows = []
    for w in waterfalls:
        row = [w.mode, us(w.baseline_period_ns), us(w.period_ns), f"{w.delta_ns / 1000:+,.1f}",
               *(f"{w.part(k) / 1000:+,.1f}" for k, _ in parts)]
        if unprofiled:
            row.append(f"{w.cross_check.get('issue_delta_ns', 0.0) / 1000:+,.1f}")
        rows.append(tuple(row))
    if unprofiled:
        return Table(
            "tbl-waterfall-unprofiled", "Change in step time per step, without the profiler (µs)",
            tuple(c for c, _ in columns), tuple(rows), tuple(n for _, n in columns),
            "baseline: median baseline block in the pairs; mode step = baseline / speed-up, so "
            "Δ total has the speed-up's sign. ΔGPU busy and Δother idle (in-graph gaps and "
            "queued work) are mean changes of the lean traces; Δhost overhead is the rest. "
            "Δhost issue: the change of the host's unprofiled issue time, beside it.",
        )
    return Table(
        "tbl-waterfall", "Change in mean GPU period per step, profiled (µs)",
        tuple(c for c, _ in columns), tuple(rows), tuple(n for _, n in columns),
        "Means over the profiled steps with GPU work; the six parts add up to Δ total. The "
        "profiler's own cost is inside these numbers (no unprofiled split for these modes).",
    )


def waterfall_section(c: Comparison) -> Section | None:
    """One waterfall figure per mode and a table per waterfall kind, or ``None``."""
    if not c.waterfalls:
        return None
    items: list[Table | Figure] = [Figure(f"fig-waterfall-{i}", figures.waterfall(w))
                                   for i, w in enumerate(c.waterfalls)]
    for units in (UNPROFILED, "profiled"):
        same = [w for w in c.waterfalls if w.units == units]
        if same:
            items.append(_waterfall_table(same))
    labels = ", ".join(label for _, label in UNPROFILED_COMPONENTS)
    return Section(
        "waterfall", "What changed the step time",
        f"Without the profiler (modes with an unprofiled split): {labels}. Profiled (trace "
        "files, older runs): Δbusy is GPU work saved or added; Δhost_wait is launch overhead "
        "the GPU no longer waits for; Δsync_wait, Δqueued (work launched, not yet started: "
        "not launch overhead), Δgraph_internal and Δother are the other idle classes. Green "
        "bars shorten the step.",
        tuple(items), grid=len(c.waterfalls) > 1,
    )


"""What ``traceviz profile`` shows on the terminal: a progress display over the modes, then a
summary table that fits the terminal and the per-mode headlines.

Progress: one line per mode (its current phase as the child reports it — loading, reference,
building, compiling / capturing, checking, timing, tracing — then its status and elapsed time)
under an overall line with modes done / total, elapsed time and an ETA (rich's estimate from the
modes finished so far; unknown until the first one ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group
from rich.progress import (
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from traceviz.report.fit import KEEP, Column, fit_table
from traceviz.report.headlines import manifest_headlines
from traceviz.report.inert import inert_text, visible

#: The summary table's columns; the lowest priorities are dropped first on a narrow terminal.
SUMMARY_COLUMNS = (
    Column("mode", priority=KEEP),
    Column("status", priority=9, abbreviate_to=8),
    Column("1st call s", True, 3),
    Column("step ms (p10-p90)", True, 8),
    Column("profiled ms (x)", True, 4),
    Column("speed-up (95% CI)", True, 10),
    Column("kernels /step", True, 7),
    Column("launches /step", True, 6),
    Column("graphs /step", True, 2),
    Column("peak MiB", True, 1),
)


class _OverallColumn(ProgressColumn):
    """Modes done / total and the ETA, on the overall line only (blank on mode lines)."""

    def __init__(self) -> None:
        super().__init__()
        self._remaining = TimeRemainingColumn()

    def render(self, task: Task) -> Text:
        if not task.fields.get("overall"):
            return Text("")
        eta = self._remaining.render(task).plain
        return Text(f"{int(task.completed)}/{int(task.total or 0)} ETA {eta}")


class ModeProgress:
    """The live display: call :meth:`start` for each mode (it returns the ``on_phase``
    callback), then :meth:`finish` or :meth:`skip`."""

    def __init__(self, progress: Progress, total: int) -> None:
        self._progress = progress
        self._overall = progress.add_task("modes", total=total, mode="all modes", phase="",
                                          overall=True)
        self._task: Any = None

    def start(self, mode: str) -> Callable[[str], None]:
        task = self._progress.add_task(mode, total=None, mode=visible(mode), phase="starting")
        self._task = task

        def on_phase(phase: str) -> None:
            self._progress.update(task, phase=visible(phase))
            self._progress.refresh()

        return on_phase

    def finish(self, status: str) -> None:
        self._progress.update(self._task, phase=visible(status), total=1, completed=1)
        self._progress.advance(self._overall)

    def skip(self, mode: str, reason: str) -> None:
        self._progress.console.print(inert_text(f"  {mode}: skipped ({reason})"))
        self._progress.advance(self._overall)


@contextmanager
def mode_progress(console: Console, total: int) -> Iterator[ModeProgress]:
    """A rich live display over ``total`` modes on ``console``."""
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.fields[mode]}", style="bold", markup=False),
        TextColumn("{task.fields[phase]}", markup=False),
        TimeElapsedColumn(),
        _OverallColumn(),
        console=console,
    ) as progress:
        yield ModeProgress(progress, total)


def _num(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def summary_rows(modes: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """The summary table's cells from the manifest's mode entries."""
    rows = []
    for mode, e in modes.items():
        t = e.get("timing") or {}
        p = e.get("profiled") or {}
        a = e.get("analysis_summary") or {}
        step = (f"{t['median_ms']:.4g} ({t['p10_ms']:.4g}-{t['p90_ms']:.4g})"
                + (" noisy" if t.get("noisy") else "")) if t else "-"
        prof = (f"{p['step_ms']:.4g} ({p['inflation']:.2f}x)"
                if p.get("step_ms") is not None and p.get("inflation") else "-")
        peak = e.get("peak_mem_bytes")
        pr = e.get("paired") or {}
        speed = (f"{pr['speedup']:.2f}x ({pr['ci_low']:.2f}-{pr['ci_high']:.2f})"
                 if pr.get("speedup") is not None else "-")
        # A trace with no GPU activity in a mode that finished ok ran on the CPU (a CUDA mode
        # with none is failed): kernels and launches do not apply.
        cpu = e["status"] == "ok" and p.get("gpu_activities") == 0
        counts = [None if cpu else a.get(k) for k in
                  ("kernels_per_step", "launches_per_step", "graph_launches_per_step")]
        rows.append((
            mode, str(e["status"]), _num(e.get("first_call_s"), ".2f"), step, prof, speed,
            *(_num(c, ".1f") for c in counts),
            "-" if peak is None else f"{peak / 2**20:.1f}",
        ))
    return rows


def inflation_bases(modes: Mapping[str, Mapping[str, Any]]) -> str | None:
    """What the "(x)" of "profiled ms (x)" is over, said when it would not read as profiled ms
    over the step column: for each mode whose unprofiled steps just before its trace
    (``profiled.adjacent_unprofiled_ms``, the inflation's denominator) lie outside its step
    column's own p10–p90 (``timing``), both numbers; ``None`` when no mode's do."""
    apart = []
    for mode, e in modes.items():
        t, p = e.get("timing") or {}, e.get("profiled") or {}
        base, low, high = p.get("adjacent_unprofiled_ms"), t.get("p10_ms"), t.get("p90_ms")
        numbers = all(isinstance(v, (int, float)) for v in (base, low, high))
        if numbers and p.get("inflation") and not low <= base <= high:
            apart.append(f"{mode} {base:.4g}")
    if not apart:
        return None
    return ("(x): the profiled step over the unprofiled steps timed one by one just before "
            "the trace, not over the step column (blocks of steps, timed earlier); where they "
            f"fell outside its p10-p90, in ms: {', '.join(apart)}")


def profile_summary(modes: Mapping[str, Mapping[str, Any]], width: int | None) -> Group:
    """The summary table fitted to ``width``, what "noisy" means when a step time is, what
    the inflation is over when it is not the step column (:func:`inflation_bases`), and one
    line per mode headline (when the modes carry one:
    :func:`~traceviz.report.headlines.manifest_headlines`)."""
    from traceviz.report.noisy import NOISY_LEGEND

    table = fit_table(SUMMARY_COLUMNS, summary_rows(modes), width, title="traceviz profile")
    noisy = any((e.get("timing") or {}).get("noisy") for e in modes.values())
    bases = inflation_bases(modes)
    legend = ([Text(NOISY_LEGEND, style="dim")] if noisy else []) + (
        [Text(bases, style="dim")] if bases else [])
    lines = [Text.assemble((visible(mode), "bold"), ": ", visible(text))
             for mode, text in manifest_headlines(modes).items()]
    return Group(table, *legend, *lines)


def time_spent(modes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Where each mode's time went, one line per mode: its wall seconds, then the seconds per
    phase of its own process (its stacked trace the phase ``stacks``), of the stacked-trace
    process of runs before 2026-11-28 (``stacks``, its record's ``wall_s``) and of its
    ``--against`` process (``against``), from the manifest entries' ``phase_s`` (absent: no
    line)."""
    lines = []
    for mode, e in modes.items():
        parts = [f"{name} {s:.1f}" for name, s in (e.get("phase_s") or {}).items()]
        for key, label in (("stack_profiled", "stacks"), ("against", "against")):
            side = e.get(key) or {}
            if isinstance(side.get("wall_s"), (int, float)):
                parts.append(f"{label} {side['wall_s']:.1f}")
        total = sum(float(x) for x in (e.get("wall_s"),
                                       (e.get("stack_profiled") or {}).get("wall_s"),
                                       (e.get("against") or {}).get("wall_s"))
                    if isinstance(x, (int, float)))
        if parts:
            lines.append(f"{mode}: {total:.0f} s ({', '.join(parts)})")
    return lines


def against_summary(modes: Mapping[str, Mapping[str, Any]], width: int | None) -> Any:
    """``profile --against``'s old → new table from the manifest's mode entries (verdicts at
    the default ``min_speedup``; the report says the same with the run's thresholds)."""
    from traceviz.analyze.review.version_diff import entry_capture_spread_ns, version_speed
    from traceviz.analyze.verdicts import Thresholds

    min_speedup = Thresholds().min_speedup
    rows = []
    for mode, e in modes.items():
        against = e.get("against") or {}
        s = (version_speed(against, min_speedup, entry_capture_spread_ns(e))
             if against.get("status") == "ok" else None)
        if s is None:
            rows.append((mode, str(against.get("status") or "-"), "-", "-", "-"))
            continue
        rows.append((mode, s.status, f"{s.old_ms:.4g} -> {s.new_ms:.4g}",
                     f"{s.change * 100:+.1f}%",
                     f"{s.speedup.value:.3f} ({s.speedup.low:.3f}-{s.speedup.high:.3f})"))
    columns = (Column("mode", priority=KEEP), Column("old -> new", priority=KEEP),
               Column("step ms", True, 5), Column("new vs old", True, 7),
               Column("speed-up old/new (95% CI)", True, 9))
    return fit_table(columns, rows, width, title="old -> new (paired in one process)")

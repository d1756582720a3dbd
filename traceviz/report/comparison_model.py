"""The comparison report's model: the headline, verdict and mode tables, and the sections
built from a :class:`~traceviz.analyze.compare.modes.Comparison` (types and formatting helpers:
:mod:`traceviz.report.model`)."""

from __future__ import annotations

from traceviz.analyze.compare.headline import Headline
from traceviz.analyze.compare.modes import Comparison, ComparisonRow
from traceviz.analyze.verdicts import Verdict
from traceviz.report import figures
from traceviz.report.badges import badge, not_run_badges
from traceviz.report.model import Figure, Report, Section, Table, mib, ms, num, table
from traceviz.report.noisy import NOISY_LEGEND
from traceviz.report.units import pct
from traceviz.report.unprofiled_section import unprofiled_section, waterfall_section

# --- comparison ------------------------------------------------------------------------------


def row_cells(r: ComparisonRow) -> tuple[str, ...]:
    time = "–"
    if r.time_median_ms is not None:
        time = ms(r.time_median_ms)
        if r.time_p10_ms is not None and r.time_p90_ms is not None:
            time += f" ({ms(r.time_p10_ms)}–{ms(r.time_p90_ms)})"
        if r.time_noisy:
            time += " noisy"
    correct = {True: "match", False: "MISMATCH", None: "not checked"}[r.correctness_ok]
    if r.correctness_detail and r.correctness_ok is False:
        correct += f" ({r.correctness_detail})"
    status = r.status + (f": {r.reason}" if r.reason else "")
    return (
        r.mode, status, time, ms(r.period_ms),
        "–" if r.inflation is None else f"{r.inflation:.2f}×",
        "–" if r.stack_inflation is None else f"{r.stack_inflation:.2f}×",
        _kernels_cell(r),
        num(r.launches, 1 if r.launches and r.launches % 1 else 0),
        num(r.kernels_per_launch, 2), ms(r.gpu_busy_ms), pct(r.cpu_bound_share),
        "–" if r.first_call_s is None else f"{r.first_call_s:,.2f} s", mib(r.peak_mem_bytes),
        correct,
    )


def _kernels_cell(r: ComparisonRow) -> str:
    """Compute kernels per step, and the communication kernels beside them ("4 + 1 comm")."""
    def count(x: float | None) -> str:
        return num(x, 1 if x and x % 1 else 0)

    if r.comm_kernels is None:
        return count(r.kernels)
    return f"{count(r.kernels)} + {count(r.comm_kernels)} comm"


ROW_COLUMNS = [
    ("mode", False), ("status", False), ("step ms (p10–p90)", True), ("profiled ms", True),
    ("inflation", True), ("stacked", True), ("kernels/step", True), ("launches/step", True),
    ("kernels/launch", True), ("busy ms/step", True), ("cpu-bound (median step)", True),
    ("first call", True), ("peak mem", True), ("outputs", False),
]


def noisy_note(rows: tuple[ComparisonRow, ...]) -> str:
    """What "noisy" means, when a row's step time is noisy ("" when none is)."""
    return NOISY_LEGEND if any(r.time_noisy for r in rows) else ""


def speedup_cell(h: Headline | None) -> str:
    """"1.71 (95 % CI 1.62–1.80)", "1.71 (unpaired)", "4.04 (profiled)" or "–"."""
    if h is None or h.speedup is None:
        return "–"
    if h.evidence_source == "paired" and h.ci_low is not None and h.ci_high is not None:
        return (f"{h.speedup:.2f} ({(h.level or 0.95) * 100:.0f} % CI "
                f"{h.ci_low:.2f}–{h.ci_high:.2f})")
    return f"{h.speedup:.2f} ({'profiled' if h.evidence_source == 'trace' else 'unpaired'})"


def headline_table(headlines: tuple[Headline, ...],
                   not_run: dict[str, str] | None = None) -> Table:
    """One line per mode: its speed badge (:mod:`traceviz.report.badges`; ``not_run``: the
    modes that did not run), speed-up with CI, and the headline."""
    skipped = not_run or {}
    return Table(
        "tbl-headlines", "Headline per mode",
        ("mode", "speed", "speed-up", "headline"),
        tuple((h.mode, badge(h.speed_status, h.mode, skipped), speedup_cell(h), h.text)
              for h in headlines),
        (False, False, True, False),
    )


def verdict_table(verdicts: tuple[Verdict, ...], headlines: tuple[Headline, ...] = (),
                  not_run: dict[str, str] | None = None) -> Table:
    by_mode = {h.mode: h for h in headlines}
    skipped = not_run or {}
    return Table(
        "tbl-verdicts", "Verdicts",
        ("mode", "verdict", "status", "speed-up", "evidence", "why"),
        tuple((v.mode, v.kind, badge(v.status, v.mode, skipped), speedup_cell(by_mode.get(v.mode)),
               str(v.evidence.get("evidence_source") or "–"), v.explanation)
              for v in verdicts),
        (False, False, False, True, False, False),
    )


def build_comparison_report(
    comparison: Comparison, title: str, facts: list[tuple[str, str]],
    warnings: list[str] | None = None,
) -> Report:
    """The comparison report: verdicts, the comparison table, figures, waterfalls, diagnostics."""
    c = comparison
    not_run = not_run_badges(c.rows)
    sections: list[Section] = [
        Section("headline", "Headline",
                f"Each mode against the baseline {c.baseline!r}: the outcome on the stopwatch "
                "(speed-up = baseline time / mode time; paired: median of ABBA pair ratios with "
                "a bootstrap CI; unpaired: separate-process medians; profiled: the traces' GPU "
                "period), where the time went (without the profiler when the run has the "
                "unprofiled split, else in the profiled trace, said so), the counts, and what "
                "to know about the mode.", (headline_table(c.headlines, not_run),)),
        Section("verdicts", "Verdicts",
                "speed: the CI (or the unpaired / profiled evidence) against ±min_speedup. "
                "fusion: fewer kernels and GPU busy (lean trace) down beyond its step-to-step "
                "spread, with matching outputs, a faster step and, with the unprofiled split, "
                "at least fusion_min_busy_share of the time saved. launch (unprofiled split): a "
                "speed win, the baseline host-bound without the profiler, and the saving of "
                "host issue time explaining at least launch_min_wait_share of the time saved; "
                "without the split (trace files, older runs) the profiled-trace rule, said so "
                "in the verdict. Thresholds are listed at the end of the report; rules in "
                "docs/comparison.md.",
                (verdict_table(c.verdicts, c.headlines, not_run),)),
        Section("modes", "Modes side by side",
                "step ms: unprofiled step time from the run manifest (median, p10–p90). "
                "profiled ms: GPU period per step under the profiler (median, lean trace); "
                "inflation = profiled wall time per step (manifest; else the GPU period) / "
                "unprofiled, of the lean trace; stacked: the same of the stacked trace. "
                "Per-step counts and times are medians over the steps with GPU work; "
                "cpu-bound (median step) = the median over those steps of cpu_bound_share, "
                "(host wait + sync wait) / period; "
                "kernels/step counts compute kernels (\"+ N comm\": the communication "
                "kernels, apart); kernels/launch counts all GPU activities per launch call.",
                (table("tbl-modes", "Comparison", ROW_COLUMNS,
                       [row_cells(r) for r in c.rows], note=noisy_note(c.rows)),
                 Figure("fig-times", figures.compare_times(c)),
                 Figure("fig-counts", figures.compare_counts(c)))),
    ]
    for extra in (unprofiled_section(c), waterfall_section(c)):
        if extra is not None:
            sections.append(extra)
    diag = [
        (r.mode, num(r.graphs) if r.graphs is not None else "–",
         num(r.graph_breaks) if r.graph_breaks is not None else "–",
         "; ".join(r.break_reasons) or "–",
         num(r.recompiles) if r.recompiles is not None else "–",
         "; ".join(r.cudagraph_skips) or "–")
        for r in c.rows
    ]
    sections.append(Section(
        "diagnostics", "Compile diagnostics",
        "From the run manifest (torch._dynamo counters and logs); '–' when not recorded.",
        (table("tbl-diag", "Compile diagnostics",
                [("mode", False), ("graphs", True), ("graph breaks", True),
                 ("break reasons", False), ("recompiles", True), ("cudagraph skips", False)],
                diag),),
    ))
    sections.append(Section(
        "thresholds", "Thresholds", "Change them with --threshold name=value or a config file.",
        (Table("tbl-thresholds", "Thresholds", ("name", "value"),
               tuple((k, f"{v:g}") for k, v in c.thresholds.as_dict().items()), (False, True)),),
    ))
    return Report(
        kind="comparison", title=title, facts=tuple(facts),
        warnings=tuple([*(warnings or []), *c.notes]), sections=tuple(sections),
        verdicts=c.verdicts,
    )

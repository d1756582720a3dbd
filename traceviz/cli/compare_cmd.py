"""``traceviz compare`` (a comparison report) and ``traceviz check`` (a CI gate on verdicts).

Both take one run directory (from ``traceviz profile``: its modes against the baseline) or two
or more trace files; ``compare`` also takes two run directories (run A against run B, mode by
mode: :mod:`traceviz.report.run_compare_report`), and ``check --against BASELINE_RUN`` gates a
run on a baseline run (:func:`check_against`, :mod:`traceviz.analyze.review.run_gate`).
Heavy imports (pandas via the loader, plotly) happen inside the commands. Each command parses
its thresholds once and passes the :class:`~traceviz.analyze.verdicts.Thresholds` down.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from traceviz.cli.comparison_output import (
    comparison_default,
    comparison_output,
    print_fitted_comparison,
)
from traceviz.cli.errors import user_errors
from traceviz.cli.options import (
    BaselineOpt,
    ForceOpt,
    Format,
    FormatOpt,
    MaxMemoryOpt,
    OutOpt,
    PlotlyJs,
    PlotlyOpt,
    ThresholdFileOpt,
    ThresholdOpt,
    WorkersOpt,
    apply_max_memory,
)
from traceviz.cli.outputs import emit, output_path
from traceviz.cli.strict import StrictOpt, enforce_strict
from traceviz.cli.version import VersionOpt
from traceviz.errors import UsageError
from traceviz.output_guard import preflight

if TYPE_CHECKING:
    from traceviz.analyze.verdicts import Thresholds

#: Exit code of ``check`` when an expectation does not hold.
EXIT_UNMET = 3

InputsArg = Annotated[
    list[Path], typer.Argument(metavar="INPUT...",
                               help="One run directory (its modes), two run directories "
                               "(run A → run B), or two or more trace files.")
]

#: Where ``compare RUN_A RUN_B`` writes HTML without ``-o``.
RUNS_DEFAULT_HTML = Path("traceviz-compare-runs.html")


def two_runs(inputs: list[Path]) -> bool:
    """``compare RUN_A RUN_B``: exactly two inputs, both run directories."""
    from traceviz.report.run_dir import is_run_dir

    return len(inputs) == 2 and all(is_run_dir(p) for p in inputs)


def compare_two_runs(inputs: list[Path], fmt: str, out: Path | None, force: bool,
                     plotlyjs: str, thresholds: Thresholds, thresholds_file: Path | None,
                     workers: int | None) -> None:
    """Run A against run B, mode by mode (``docs/comparison.md``, "Two runs"); ``workers``:
    ``--workers``, passed to the loader and the analysis; ``thresholds_file`` is named only to
    refuse it as the output file."""
    from traceviz.report import run_compare_report

    preflight(output_path(fmt, out, RUNS_DEFAULT_HTML), [*inputs, thresholds_file], force=force)
    result, report = run_compare_report.build(inputs[0], inputs[1], thresholds, workers=workers)
    emit(run_compare_report.render(result, report, fmt, plotlyjs), fmt, out, RUNS_DEFAULT_HTML,
         force)


@user_errors
def compare(
    inputs: InputsArg,
    baseline: BaselineOpt = None,
    fmt: FormatOpt = Format.html,
    out: OutOpt = None,
    force: ForceOpt = False,
    plotlyjs: PlotlyOpt = PlotlyJs.inline,
    threshold: ThresholdOpt = None,
    thresholds_file: ThresholdFileOpt = None,
    max_memory: MaxMemoryOpt = None,
    workers: WorkersOpt = None,
    strict: StrictOpt = False,
    version: VersionOpt = False,
) -> None:
    """Compare modes: step time, kernels and launches per step, waterfall, verdicts.

    Two run directories: run A → run B per mode (step time with CI and verdict, environment,
    counts, diagnostics and kernel diff)."""
    apply_max_memory(max_memory)
    from traceviz.analyze.verdicts import parse_thresholds

    if two_runs(inputs):
        if baseline is not None:
            raise UsageError("--baseline applies to one run's modes; two runs compare each "
                             "mode with itself")
        compare_two_runs(inputs, fmt.value, out, force, plotlyjs.value,
                         parse_thresholds(threshold, thresholds_file), thresholds_file, workers)
        return

    thresholds = parse_thresholds(threshold, thresholds_file)  # fails before any reading
    health: list[tuple[str, Any]] = []
    if fmt is Format.text and out is None and sys.stdout.isatty():
        print_fitted_comparison(inputs, baseline, thresholds, workers, health)
        if strict:
            enforce_strict(health)
        return
    default = comparison_default(inputs)
    preflight(output_path(fmt.value, out, default), [*inputs, thresholds_file], force=force)
    payload = comparison_output(inputs, baseline, thresholds, fmt.value, plotlyjs.value,
                                workers, health_out=health)
    emit(payload, fmt.value, out, default, force)
    if strict:
        enforce_strict(health)


_EXPECT = re.compile(r"^(?P<mode>[^:=!]+):(?P<kind>[A-Za-z]+)(?P<op>!?=)(?P<status>[A-Za-z_-]+)$")


def parse_expectation(text: str) -> tuple[str, str, str, str]:
    """``MODE:KIND=STATUS`` or ``MODE:KIND!=STATUS`` → (mode, kind, op, status). KIND and
    STATUS are read in any case (``speed=win``, ``Speed=No-Win`` → ``speed``, ``NO_WIN``);
    STATUS is one of :data:`~traceviz.analyze.verdicts.STATUSES` (``SKIPPED`` included)."""
    from traceviz.analyze.verdicts import KINDS, STATUSES

    m = _EXPECT.match(text.strip())
    if not m:
        raise UsageError(f"--expect {text!r}: expected MODE:KIND=STATUS, e.g. compile:fusion=WIN")
    mode, kind, op = m["mode"], m["kind"].lower(), m["op"]
    status = m["status"].upper().replace("-", "_")
    if kind not in KINDS:
        raise UsageError(f"--expect {text!r}: kind must be one of {', '.join(KINDS)}")
    if status not in STATUSES:
        raise UsageError(f"--expect {text!r}: status must be one of {', '.join(STATUSES)}")
    return mode, kind, op, status


@user_errors
def check(
    inputs: InputsArg,
    expect: Annotated[
        list[str] | None,
        typer.Option("--expect", "-e", metavar="MODE:KIND=STATUS",
                     help="A verdict that must hold, e.g. compile:fusion=WIN or "
                     "cudagraph:launch!=REGRESSION (repeatable); STATUS: WIN, NO_WIN, "
                     "REGRESSION, INCONCLUSIVE or SKIPPED."),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option("--against", metavar="BASELINE_RUN", help="Gate the run directory on "
                     "this baseline run: exit 3 when a mode is slower (whole CI) beyond "
                     "--max-slowdown and beyond the runs' measured between-process spread of "
                     "identical code, on any device and whatever the cause, or a mode that ran "
                     "there fails, mismatches or newly breaks the graph."),
    ] = None,
    max_slowdown: Annotated[
        str, typer.Option("--max-slowdown", metavar="PCT", help="With --against: the "
                          "slowdown a mode may have, as a percentage (5%) or a fraction below "
                          "1 (0.05); a bare 5 is refused (5 % or 500 %?).")] = "5%",
    allow_skipped: Annotated[
        bool, typer.Option("--allow-skipped", help="With --expect: an expectation on a mode "
                           "the run skipped (e.g. cudagraph on a CPU-only machine) passes as "
                           "'skipped' instead of failing; name SKIPPED to expect a skip "
                           "(cudagraph:launch=SKIPPED).")] = False,
    baseline: BaselineOpt = None,
    threshold: ThresholdOpt = None,
    thresholds_file: ThresholdFileOpt = None,
    max_memory: MaxMemoryOpt = None,
    workers: WorkersOpt = None,
    strict: StrictOpt = False,
    version: VersionOpt = False,
) -> None:
    """Exit 3 when an expected verdict does not hold (a CI regression gate); 0 when all do.

    A mode the run skipped has SKIPPED verdicts: an expectation on it fails unless it names
    SKIPPED or --allow-skipped is given. With --strict, a data-validity or ambiguity health
    warning exits 1 (before the exit 3 of unmet expectations: verdicts on invalid or
    ambiguous data are not evidence)."""
    from rich.console import Console
    from rich.text import Text

    from traceviz.analyze.verdicts import SKIPPED, parse_thresholds
    from traceviz.api import Comparison
    from traceviz.report.fit import KEEP, Column, fit_table
    from traceviz.report.text_width import text_width

    apply_max_memory(max_memory)
    if allow_skipped and against is not None:
        raise UsageError("--allow-skipped applies to --expect; --against gates every mode "
                         "that ran in the baseline run")
    if against is not None:
        if expect:
            raise UsageError("--against gates a run on a baseline run; --expect checks one "
                             "run's verdicts: use one at a time")
        check_against(inputs, against, max_slowdown, threshold, thresholds_file, workers)
        return
    if not expect:
        raise UsageError("check needs --expect MODE:KIND=STATUS or --against BASELINE_RUN")
    wanted = [parse_expectation(e) for e in expect]
    comparison = Comparison.from_paths(inputs, baseline,
                                       parse_thresholds(threshold, thresholds_file),
                                       workers=workers)
    modes = sorted({v.mode for v in comparison.result.verdicts})
    rows = []
    results = []
    for mode, kind, op, status in wanted:
        v = comparison.verdict(mode, kind)
        if v is None:
            raise UsageError(f"--expect {mode}:{kind}: no such verdict; modes with verdicts: "
                             f"{', '.join(modes) or 'none'}")
        result = expectation_result(v.status, op, status, allow_skipped)
        results.append(result)
        rows.append((f"{mode}:{kind}{op}{status}", v.status,
                     Text(result, style=_RESULT_STYLE[result]), v.explanation))
    console = Console(stderr=False, width=None if sys.stdout.isatty() else text_width(160))
    console.print(fit_table(
        [Column("expectation", priority=KEEP), Column("actual", priority=KEEP),
         Column("result", priority=KEEP), Column("why", priority=KEEP, abbreviate_to=20)],
        rows, console.width, title=f"traceviz check (baseline {comparison.baseline})"))
    if strict:
        enforce_strict(comparison.mode_health())
    unmet = results.count(UNMET)
    if unmet:
        on_skipped = sum(r == UNMET and row[1] == SKIPPED for r, row in zip(results, rows,
                                                                              strict=True))
        why = (f" ({on_skipped} on a skipped mode: --allow-skipped lets them pass)"
               if on_skipped else "")
        print(f"traceviz check: {unmet} of {len(wanted)} expectation(s) not met{why}",
              file=sys.stderr)
        raise typer.Exit(EXIT_UNMET)


#: The result of one ``--expect``: it holds, it does not, or (``--allow-skipped``) the mode
#: was skipped and the expectation is let through; each with its style in the table.
OK, UNMET, SKIPPED_OK = "ok", "UNMET", "skipped"
_RESULT_STYLE = {OK: "green", UNMET: "bold red", SKIPPED_OK: "bold blue"}


def expectation_result(actual: str, op: str, status: str, allow_skipped: bool) -> str:
    """:data:`OK`, :data:`UNMET` or :data:`SKIPPED_OK` for an expectation ``op status``
    (``=`` or ``!=``) on a verdict whose status is ``actual``. A SKIPPED verdict says nothing
    about the mode, so an expectation that does not name SKIPPED is not met on it (not even
    ``!=REGRESSION``), unless ``allow_skipped``."""
    from traceviz.analyze.verdicts import SKIPPED

    if actual == SKIPPED and status != SKIPPED:
        return SKIPPED_OK if allow_skipped else UNMET
    return OK if (actual == status) == (op == "=") else UNMET


def check_against(inputs: list[Path], against: Path, max_slowdown: str,
                  thresholds: list[str] | None, thresholds_file: Path | None,
                  workers: int | None) -> None:
    """``check RUN --against BASELINE_RUN``: print every mode's A → B verdict, the allowed
    slowdown and where it comes from (``--max-slowdown`` or the runs' between-process spread),
    the warnings and the gate's failures (:mod:`traceviz.analyze.review.run_gate`; both runs loaded
    by ``workers``); exit 3 when there is a failure. The thresholds options are parsed here,
    once, after ``max_slowdown`` and the run directories are checked."""
    from rich.console import Console
    from rich.text import Text

    from traceviz.analyze.review.run_gate import gate, limit_of, parse_slowdown, warnings
    from traceviz.analyze.verdicts import parse_thresholds
    from traceviz.report import run_compare_report
    from traceviz.report.fit import KEEP, Column, fit_table
    from traceviz.report.inert import visible
    from traceviz.report.run_dir import is_run_dir
    from traceviz.report.text_width import text_width

    try:
        limit = parse_slowdown(max_slowdown)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(inputs) != 1 or not is_run_dir(inputs[0]) or not is_run_dir(against):
        raise UsageError("check --against takes one run directory and a baseline run directory")
    t = parse_thresholds(thresholds, thresholds_file)
    result, _ = run_compare_report.build(against, inputs[0], t, workers=workers)
    failures = gate(result, limit)
    failed = {f.mode for f in failures}
    rows = []
    for d in result.modes:
        step, up, _, change = run_compare_report.speed_cells(d)
        rows.append((d.mode, d.verdict, step, change, up,
                     Text("FAIL", style="bold red") if d.mode in failed else
                     Text("ok", style="green")))
    console = Console(stderr=False, width=None if sys.stdout.isatty() else text_width(160))
    console.print(fit_table(
        [Column("mode", priority=KEEP), Column("verdict", priority=KEEP),
         Column("step ms baseline → run", True, 5), Column("change", True, KEEP),
         Column("speed-up (CI)", True, 3), Column("gate", priority=KEEP)],
        rows, console.width,
        title=f"traceviz check {inputs[0]} --against {against} (max slowdown {limit * 100:g} %)"))
    for note in result.notes:
        print(visible(f"note: {note}"))
    allowed = limit_of(result, limit)
    print(f"allowed slowdown {allowed.value * 100:.1f} %: {allowed.phrase(result.baseline)}")
    for w in warnings(result, limit):
        print(visible(f"WARN {w.rule}: {w.message}"))
    for f in failures:
        print(visible(f"FAIL {f.rule}: {f.message}"))
    if failures:
        print(f"traceviz check: {len(failures)} failure(s) against {against}", file=sys.stderr)
        raise typer.Exit(EXIT_UNMET)

"""``traceviz compare`` (a comparison report) and ``traceviz check`` (a CI gate on verdicts).

Both take one run directory (from ``traceviz profile``) or two or more trace files. Heavy
imports (pandas via the loader, plotly) happen inside the commands.
"""

from __future__ import annotations

import enum
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from traceviz.cli.errors import user_errors
from traceviz.cli.strict import StrictOpt, enforce_strict
from traceviz.errors import UsageError

#: Exit code of ``check`` when an expectation does not hold.
EXIT_UNMET = 3


class Format(str, enum.Enum):
    html = "html"
    json = "json"
    md = "md"
    text = "text"


class PlotlyJs(str, enum.Enum):
    inline = "inline"
    cdn = "cdn"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutOpt = Annotated[
    Path | None,
    typer.Option("-o", "--out", help="Write here (default: html → a file, others → stdout)."),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")]
PlotlyOpt = Annotated[
    PlotlyJs,
    typer.Option("--plotlyjs", help="inline: works offline (~4.8 MB); cdn: small file, needs "
                 "internet to view."),
]
ThresholdOpt = Annotated[
    list[str] | None,
    typer.Option("--threshold", "-t", metavar="NAME=VALUE",
                 help="Override a verdict threshold (repeatable); see docs/comparison.md."),
]
ThresholdFileOpt = Annotated[
    Path | None,
    typer.Option("--thresholds-file", help="TOML ([thresholds] table) or JSON file of "
                 "thresholds."),
]
BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", "-b", help="Mode/trace to compare against "
                             "(default: eager, else the first).")
]
InputsArg = Annotated[
    list[Path], typer.Argument(help="One run directory, or two or more trace files.")
]


def emit(payload: str, fmt: str, out: Path | None, default_html: Path, force: bool) -> None:
    """Write ``payload`` to ``out`` (HTML defaults to ``default_html``; others to stdout) and
    say on stderr where it went and what to open next."""
    from traceviz.report.output import write_atomic

    if out is None and fmt != "html":
        sys.stdout.write(payload)
        return
    written = write_atomic(out or default_html, payload, force=force)
    hint = {"html": "open it in a browser", "md": "paste it into a pull-request comment",
            "json": "read it with jq or Python"}.get(fmt, "view it with less -R")
    print(f"wrote {written} ({len(payload.encode()) / 1024:,.0f} KiB); {hint}: "
          f"{written.resolve().as_uri() if fmt == 'html' else written}", file=sys.stderr)


def comparison_output(
    inputs: list[Path], baseline: str | None, thresholds: list[str] | None,
    thresholds_file: Path | None, fmt: str, plotlyjs: str,
    health_out: list[tuple[str, Any]] | None = None,
) -> tuple[str, Path]:
    """Render the comparison of ``inputs``; also return the default HTML path.

    ``health_out`` receives ``(mode, health warnings)`` of each analysed mode (``--strict``).
    """
    from traceviz.analyze.verdicts import parse_thresholds
    from traceviz.report import compare_report

    t = parse_thresholds(thresholds, thresholds_file)
    loaded = compare_report.load_inputs(inputs)
    if health_out is not None:
        health_out.extend(_mode_health(loaded))
    comparison, report = compare_report.build(loaded, baseline, t)
    default = (inputs[0] / "report.html" if compare_report.is_run_dir(inputs[0])
               else Path("traceviz-compare.html"))
    return compare_report.render(comparison, report, fmt, plotlyjs), default


def _mode_health(loaded: Any) -> list[tuple[str, Any]]:
    return [(m.mode, m.analysis.health) for m in loaded.modes if m.analysis is not None]


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
    strict: StrictOpt = False,
) -> None:
    """Compare modes: step time, kernels and launches per step, waterfall, verdicts."""
    health: list[tuple[str, Any]] = []
    payload, default = comparison_output(inputs, baseline, threshold, thresholds_file,
                                         fmt.value, plotlyjs.value, health_out=health)
    emit(payload, fmt.value, out, default, force)
    if strict:
        enforce_strict(health)


_EXPECT = re.compile(r"^(?P<mode>[^:=!]+):(?P<kind>[a-z]+)(?P<op>!?=)(?P<status>[A-Z_]+)$")


def parse_expectation(text: str) -> tuple[str, str, str, str]:
    """``MODE:KIND=STATUS`` or ``MODE:KIND!=STATUS`` → (mode, kind, op, status)."""
    from traceviz.analyze.verdicts import KINDS, STATUSES

    m = _EXPECT.match(text.strip())
    if not m:
        raise UsageError(f"--expect {text!r}: expected MODE:KIND=STATUS, e.g. compile:fusion=WIN")
    mode, kind, op, status = m["mode"], m["kind"], m["op"], m["status"]
    if kind not in KINDS:
        raise UsageError(f"--expect {text!r}: kind must be one of {', '.join(KINDS)}")
    if status not in STATUSES:
        raise UsageError(f"--expect {text!r}: status must be one of {', '.join(STATUSES)}")
    return mode, kind, op, status


@user_errors
def check(
    inputs: InputsArg,
    expect: Annotated[
        list[str],
        typer.Option("--expect", "-e", metavar="MODE:KIND=STATUS",
                     help="A verdict that must hold, e.g. compile:fusion=WIN or "
                     "cudagraph:launch!=REGRESSION (repeatable)."),
    ],
    baseline: BaselineOpt = None,
    threshold: ThresholdOpt = None,
    thresholds_file: ThresholdFileOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Exit 3 when an expected verdict does not hold (a CI regression gate); 0 when all do.

    With ``--strict``, a data-validity health warning exits 1 (before the exit 3 of unmet
    expectations: verdicts on invalid data are not evidence)."""
    from rich.console import Console
    from rich.table import Table

    from traceviz.analyze.verdicts import parse_thresholds
    from traceviz.report import compare_report

    wanted = [parse_expectation(e) for e in expect]
    t = parse_thresholds(threshold, thresholds_file)
    loaded = compare_report.load_inputs(inputs)
    comparison, _ = compare_report.build(loaded, baseline, t)
    got = {(v.mode, v.kind): v for v in comparison.verdicts}
    modes = sorted({m for m, _ in got})
    table = Table(title=f"traceviz check (baseline {comparison.baseline})", title_justify="left")
    for col in ("expectation", "actual", "result", "why"):
        table.add_column(col, overflow="fold")
    unmet = 0
    for mode, kind, op, status in wanted:
        v = got.get((mode, kind))
        if v is None:
            raise UsageError(f"--expect {mode}:{kind}: no such verdict; modes with verdicts: "
                             f"{', '.join(modes) or 'none'}")
        ok = (v.status == status) == (op == "=")
        unmet += not ok
        table.add_row(f"{mode}:{kind}{op}{status}", v.status,
                      "[green]ok[/]" if ok else "[bold red]UNMET[/]", v.explanation)
    Console(stderr=False, width=None if sys.stdout.isatty() else 160).print(table)
    if strict:
        enforce_strict(_mode_health(loaded))
    if unmet:
        print(f"traceviz check: {unmet} of {len(wanted)} expectation(s) not met",
              file=sys.stderr)
        raise typer.Exit(EXIT_UNMET)

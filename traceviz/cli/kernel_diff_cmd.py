"""``traceviz kernel-diff A B``: which kernels were added, removed, got faster or slower
between two traces (or one mode of two run directories)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from traceviz.cli.errors import user_errors
from traceviz.cli.options import (
    ForceOpt,
    Format,
    FormatOpt,
    MaxMemoryOpt,
    OutOpt,
    PlotlyJs,
    PlotlyOpt,
    WorkersOpt,
    apply_max_memory,
)
from traceviz.cli.outputs import emit, output_path
from traceviz.cli.version import VersionOpt
from traceviz.output_guard import preflight

DEFAULT_HTML = Path("traceviz-kernel-diff.html")


@user_errors
def kernel_diff(
    a: Annotated[Path, typer.Argument(help="Trace A (before), or a run directory (--mode).")],
    b: Annotated[Path, typer.Argument(help="Trace B (after), or a run directory (--mode).")],
    mode: Annotated[str | None, typer.Option("--mode", "-m", metavar="MODE",
                                             help="The mode whose lean traces "
                                             "to diff when A and B are run directories.")] = None,
    min_change: Annotated[float | None, typer.Option(
        "--min-change", min=0.0, metavar="FRACTION",
help="Relative change of a kernel's GPU time per step counted "
        "as faster / slower (default 0.05).")] = None,
    fmt: FormatOpt = Format.text,
    out: OutOpt = None,
    force: ForceOpt = False,
    plotlyjs: PlotlyOpt = PlotlyJs.inline,
    max_memory: MaxMemoryOpt = None,
    workers: WorkersOpt = None,
    version: VersionOpt = False,
) -> None:
    """Kernel-level diff A → B: kernels per step added, removed, faster, slower, by impact."""
    from traceviz.report import kernel_diff_report

    apply_max_memory(max_memory)
    preflight(output_path(fmt.value, out, DEFAULT_HTML), [a, b], force=force)
    diff, report = kernel_diff_report.build(a, b, mode, min_change, workers=workers)
    emit(kernel_diff_report.render(diff, report, fmt.value, plotlyjs.value), fmt.value, out,
         DEFAULT_HTML, force)

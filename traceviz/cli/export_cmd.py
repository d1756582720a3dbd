"""``traceviz export TRACE -o OUT.json.gz``: the trace plus traceviz's analysis as timeline
tracks, for ui.perfetto.dev or chrome://tracing (see :mod:`traceviz.export.perfetto`)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from traceviz.cli.errors import user_errors
from traceviz.cli.version import VersionOpt


class ExportFormat(str, enum.Enum):
    perfetto = "perfetto"


@user_errors
def export(
    trace: Annotated[Path, typer.Argument(help="A trace file (.json or .json.gz).")],
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", metavar="FILE",
                     help="Output file; gzip-compressed when it ends in .gz "
                     "(default: TRACE's name with .traceviz.json.gz, in the working directory, "
                     "not beside TRACE); - for standard output (uncompressed)."),
    ] = None,
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="Output format (Chrome trace-event "
                                   "JSON that Perfetto and chrome://tracing open).")
    ] = ExportFormat.perfetto,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing output file "
                                       "(a regular file: never a link or special file).")]
    = False,
    version: VersionOpt = False,
) -> None:
    """Write TRACE plus traceviz's analysis as tracks, for Perfetto or chrome://tracing.

    The tracks (idle gaps by class, step periods, graph replays) are in a process named
    `traceviz`; a CPU-only trace has none of them (no GPU work to mark)."""
    import traceviz
    from traceviz.cli.progress import load_progress
    from traceviz.export.perfetto import default_output, empty_overlay_reason
    from traceviz.output_guard import preflight
    from traceviz.publish import is_stdout

    target = out or default_output(trace)
    preflight(target, [trace], force=force)
    with load_progress(trace) as progress:
        analysis = traceviz.analyze(trace, progress=progress)
    result = analysis.export_perfetto(target, force=force)
    where = "standard output" if is_stdout(result.path) else result.path
    if result.gap_slices or result.step_slices or result.replay_slices:
        added = (f"{result.gap_slices:,} gap, {result.step_slices:,} step and "
                 f"{result.replay_slices:,} graph-replay slices")
    else:
        added = f"no overlay slice ({empty_overlay_reason(analysis.result)})"
    print(f"wrote {where}: the trace plus {added} in process 'traceviz' (pid {result.pid}); "
          "open it in https://ui.perfetto.dev or chrome://tracing", file=sys.stderr)

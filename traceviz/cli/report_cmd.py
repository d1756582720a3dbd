"""``traceviz report TRACE``: analyze one trace and write JSON / text (HTML: see report issue)."""

from __future__ import annotations

import enum
import io
import sys
from pathlib import Path
from typing import Annotated

import typer

from traceviz.cli.errors import fail, user_errors


class Format(str, enum.Enum):
    json = "json"
    text = "text"
    html = "html"


@user_errors
def report(
    trace: Annotated[Path, typer.Argument(help="Trace file (.json or .json.gz).")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.json,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Write here (default: stdout).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite an existing output file.")
    ] = False,
) -> None:
    """Analyze one profiler trace: steps, launch gaps, CPU-bound share, graph replays, kernels."""
    import traceviz
    from traceviz.cli.progress import load_progress

    if fmt is Format.html:
        raise fail("--format html is not available yet; use json or text", 2)
    with load_progress(trace) as progress:
        tr = traceviz.load(trace, progress=progress)
    analysis = traceviz.analyze(tr)
    if fmt is Format.text:
        from rich.console import Console

        from traceviz.report.text import render_text

        if out is None:
            Console(width=None if sys.stdout.isatty() else 140).print(render_text(tr, analysis))
            return
        console = Console(record=True, width=140, file=io.StringIO())
        console.print(render_text(tr, analysis))
        payload = console.export_text()
    else:
        import msgspec

        from traceviz.report.jsonout import analysis_to_dict

        payload = (
            msgspec.json.format(
                msgspec.json.encode(analysis_to_dict(tr, analysis)), indent=2
            ).decode()
            + "\n"
        )
        if out is None:
            sys.stdout.write(payload)
            return
    from traceviz.report.output import write_atomic

    written = write_atomic(out, payload, force=force)
    print(f"wrote {written}", file=sys.stderr)

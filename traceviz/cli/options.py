"""The options that several commands share (``compare``, ``check``, ``report``,
``kernel-diff``): output format and file, Plotly.js, verdict thresholds, the baseline mode, and
how traces are loaded (``--max-memory``, ``--workers``).

Each is a typer ``Annotated`` alias, so a command declares one as ``fmt: FormatOpt =
Format.html``; the commands parse the values themselves (thresholds once per invocation:
:func:`traceviz.analyze.verdicts.parse_thresholds`).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer


class Format(str, enum.Enum):
    """``--format``: what a report is written as."""

    html = "html"
    json = "json"
    md = "md"
    text = "text"


class PlotlyJs(str, enum.Enum):
    """``--plotlyjs``: Plotly.js inlined in the HTML, or loaded from a CDN."""

    inline = "inline"
    cdn = "cdn"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutOpt = Annotated[
    Path | None,
    typer.Option("-o", "--out", metavar="FILE",
                 help="Write here; - for standard output (default: html → a file, others → "
                 "stdout)."),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file "
                                       "(a regular file: never a link or special file).")]
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
    typer.Option("--thresholds-file", metavar="FILE",
                 help="TOML (\\[thresholds] table) or JSON file of thresholds."),
]
BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", "-b", metavar="MODE",
                             help="Mode to compare against: a mode name, a trace path or a "
                             "trace's file name (default: eager, else the first).")
]
MaxMemoryOpt = Annotated[
    str | None,
    typer.Option("--max-memory", metavar="SIZE", help="Refuse a trace whose JSON text (inflated) "
                 "is larger than this, e.g. 4GB or 500MiB (default: 80% of available memory)."),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", "-j", min=1, metavar="N", help="Processes decoding a big trace "
                 "and analysing it (at most 12 analysing; default: every usable core, decoding "
                 "capped by memory)."),
]


def apply_max_memory(size: str | None) -> None:
    """Pass ``--max-memory`` (a size such as ``4GB``; bytes once parsed) to the loader
    (``None``: its default)."""
    from traceviz.trace.limits import parse_size, set_max_memory

    set_max_memory(None if size is None else parse_size(size))

"""Any :class:`~traceviz.report.model.Report` as terminal text: facts, warnings, then every
section's tables fitted to the width (figures live in the HTML report). Used by the kernel
diff and the run-vs-run comparison."""

from __future__ import annotations

import io
from typing import Any

from traceviz.report.fit import KEEP, Column, fit_table
from traceviz.report.model import Report, Table

#: Long text cells (kernel names, messages) may be cut down to this many characters.
ABBREVIATE_TO = 24
#: A clipped column's cells (kernel names) are shown on one line, at most this long.
CLIP_CHARS = 70


def _clipped(t: Table) -> list[tuple[str, ...]]:
    clip = t.clip or (False,) * len(t.columns)
    return [tuple(c[:CLIP_CHARS - 1] + "…" if k and len(c) > CLIP_CHARS else c
                  for c, k in zip(r, clip, strict=True)) for r in t.rows]


def _columns(t: Table) -> list[Column]:
    numeric = t.numeric or (False,) * len(t.columns)
    clip = t.clip or (False,) * len(t.columns)
    return [Column(name, n, KEEP if i == 0 or not (n or k) else len(t.columns) - i,
                   None if n else ABBREVIATE_TO)
            for i, (name, n, k) in enumerate(zip(t.columns, numeric, clip, strict=True))]


def report_renderable(report: Report, width: int | None = None) -> Any:
    """A rich renderable of ``report`` fitted to ``width`` columns (``None``: all)."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [Text(report.title, style="bold")]
    parts += [Text.assemble((f"{k}: ", "bold"), v) for k, v in report.facts]
    parts += [Text(f"! {w}", style="yellow") for w in report.warnings]
    for s in report.sections:
        tables = [i for i in s.items if isinstance(i, Table)]
        if not tables:
            continue
        parts.append(Text(f"\n{s.title}", style="bold underline"))
        for t in tables:
            parts.append(fit_table(_columns(t), _clipped(t) or
                                   [tuple("–" for _ in t.columns)], width, title=t.title))
            if t.note:
                parts.append(Text(t.note, style="dim"))
    return Group(*parts)


def render_report_text(report: Report, width: int = 200) -> str:
    """The report as plain text ``width`` columns wide."""
    from rich.console import Console

    console = Console(record=True, width=width, file=io.StringIO())
    console.print(report_renderable(report, width))
    return console.export_text()

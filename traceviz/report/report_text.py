"""Any :class:`~traceviz.report.model.Report` as terminal text: facts, warnings, then every
section's tables fitted to the width (figures live in the HTML report). Used by the kernel
diff and the run-vs-run comparison."""

from __future__ import annotations

import io
from typing import Any

from traceviz.report.fit import KEEP, Column, fit_table
from traceviz.report.inert import inert_text, visible
from traceviz.report.model import Report, Table

#: Long text cells (kernel names, messages) may be cut down to this many characters.
ABBREVIATE_TO = 24
#: A clipped column's cells (kernel names) are shown on one line, at most this long.
CLIP_CHARS = 70


def _clipped(t: Table) -> list[tuple[str, ...]]:
    """The rows as shown (:func:`~traceviz.report.inert.visible`), clipped cells cut down."""
    clip = t.clip or (False,) * len(t.columns)
    rows = [tuple(visible(c) for c in r) for r in t.rows]
    return [tuple(c[:CLIP_CHARS - 1] + "…" if k and len(c) > CLIP_CHARS else c
                  for c, k in zip(r, clip, strict=True)) for r in rows]


def _columns(t: Table) -> list[Column]:
    numeric = t.numeric or (False,) * len(t.columns)
    clip = t.clip or (False,) * len(t.columns)
    return [Column(name, n, KEEP if i == 0 or not (n or k) else len(t.columns) - i,
                   None if n else ABBREVIATE_TO)
            for i, (name, n, k) in enumerate(zip(t.columns, numeric, clip, strict=True))]


def report_renderable(report: Report, width: int | None = None) -> Any:
    """A rich renderable of ``report`` fitted to ``width`` columns (``None``: all); every
    string inert (:mod:`traceviz.report.inert`)."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = [inert_text(report.title, "bold")]
    parts += [Text.assemble((f"{visible(k)}: ", "bold"), visible(v)) for k, v in report.facts]
    parts += [inert_text(f"! {w}", "yellow") for w in report.warnings]
    for s in report.sections:
        tables = [i for i in s.items if isinstance(i, Table)]
        if not tables:
            continue
        parts.append(Text(f"\n{visible(s.title)}", style="bold underline"))
        for t in tables:
            title = s.table_title(t)
            if not t.rows:  # the word, not a row of dashes
                parts.append(inert_text(f"{title}: none" if title else "none"))
            else:
                parts.append(fit_table(_columns(t), _clipped(t), width, title=title))
            if t.note:
                parts.append(inert_text(t.note, "dim"))
    return Group(*parts)


#: Width of the text report (characters) unless ``COLUMNS`` says otherwise.
TEXT_WIDTH = 200


def render_report_text(report: Report, width: int | None = None) -> str:
    """The report as plain text ``width`` columns wide (``None``: ``COLUMNS`` when set, else
    :data:`TEXT_WIDTH`: :mod:`traceviz.report.text_width`)."""
    from rich.console import Console

    from traceviz.report.text_width import text_width

    width = width or text_width(TEXT_WIDTH)
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(report_renderable(report, width))
    return console.export_text()

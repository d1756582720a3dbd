"""A report-model :class:`~traceviz.report.elements.Table` as a width-fitted rich table, so the
terminal report shows the same kernel, CUDA-graph, compile and gap tables as Markdown and HTML
(long names, e.g. kernels, shortened in the middle with distinct names kept distinct)."""

from __future__ import annotations

from rich.table import Table as RichTable

from traceviz.report.elements import Table
from traceviz.report.fit import KEEP, Column, fit_table
from traceviz.report.inert import inert_markup, visible
from traceviz.report.shorten import shorten_names

#: Clipped columns (kernel names) are shortened to this many characters in the terminal.
NAME_CHARS = 60


def rich_table(t: Table, width: int | None) -> RichTable:
    """``t`` fitted to ``width`` columns: the first column always kept, the others dropped from
    the right when the terminal is too narrow; a note becomes the caption."""
    numeric = t.numeric or (False,) * len(t.columns)
    clip = t.clip or (False,) * len(t.columns)
    columns = [Column(name, n, KEEP if i == 0 else len(t.columns) - i,
                      None if n else NAME_CHARS if k else 24)
               for i, (name, n, k) in enumerate(zip(t.columns, numeric, clip, strict=True))]
    cells = [list(r) for r in t.rows]
    for i, k in enumerate(clip):
        if k and cells:
            shown = [visible(r[i]) for r in cells]  # shortened as shown: escapes count
            for row, short in zip(cells, shorten_names(shown, NAME_CHARS), strict=True):
                row[i] = short
    out = fit_table(columns, [tuple(r) for r in cells], width, title=t.title,
                    header_style="bold")
    if t.note and not out.caption:
        out.caption = inert_markup(t.note)
    return out

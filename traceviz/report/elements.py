"""The report's building blocks: formatted tables, plotly figures and the sections holding them
(:mod:`traceviz.report.model` assembles them into a :class:`~traceviz.report.model.Report`;
section builders such as :mod:`traceviz.report.host_wait_section` import them from here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import plotly.graph_objects as go


@dataclass(frozen=True)
class Table:
    """A formatted table. ``numeric[i]``: column i is right-aligned; ``clip[i]``: long values
    (kernel names) may be shown shortened, expandable (HTML); ``sortable``: a click on a column
    header sorts the rows by it (HTML; numbers by value, "–" last)."""

    id: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...] = ()
    note: str = ""
    clip: tuple[bool, ...] = ()
    sortable: bool = False


@dataclass(frozen=True)
class Figure:
    """A plotly figure with a fixed DOM id (so output is reproducible)."""

    id: str
    figure: go.Figure
    note: str = ""


@dataclass(frozen=True)
class Section:
    """A titled part of the report; ``grid``: lay its figures out two per row."""

    id: str
    title: str
    intro: str
    items: tuple[Table | Figure, ...]
    grid: bool = False

    def table_title(self, t: Table) -> str | None:
        """``t``'s title as the plain-text formats (text, Markdown) show it under this
        section's heading: ``None`` when it only repeats the heading (the same words, or
        the section's one table titled after it: "Step time" → "Step time A → B")."""
        tables = [i for i in self.items if isinstance(i, Table)]
        head, title = self.title.casefold(), t.title.casefold()
        if title == head or (len(tables) == 1 and title.startswith(head)):
            return None
        return t.title

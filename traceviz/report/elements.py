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

"""Rich tables that fit a terminal width: drop or abbreviate columns, never break a word.

A cell wraps only at spaces; a word wider than its column is abbreviated with "…" (rich's
``ellipsis`` overflow), never folded onto the next line. When even the narrowest layout (each
column as wide as its longest word, abbreviable columns down to ``min_width``) is wider than
the terminal, columns are left out — first those with no value in any row (every cell blank or
a dash: :data:`EMPTY_CELLS`), then those with the lowest ``priority`` — and the table's caption
names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from traceviz.report.inert import inert_markup, inert_text, visible

Cell = str | Text

#: Columns with this priority are never dropped.
KEEP = 1_000
#: What a cell with no value shows: nothing, or a dash.
EMPTY_CELLS = frozenset({"", "-", "–", "—"})


@dataclass(frozen=True)
class Column:
    """A column to fit. ``priority``: higher stays longer (:data:`KEEP`: always);
    ``abbreviate_to``: a text column may be cut down to this many characters (``None``: its
    longest word always shows whole)."""

    name: str
    numeric: bool = False
    priority: int = 0
    abbreviate_to: int | None = None


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _plain(cell: Cell) -> str:
    """The text a cell shows (a ``str`` cell: its visible form, as :func:`fit_table` shows it)."""
    return cell.plain if isinstance(cell, Text) else visible(cell)


def _min_width(col: Column, cells: Sequence[Cell]) -> int:
    widest = max([_longest_word(col.name), *(_longest_word(_plain(c)) for c in cells)],
                 default=1)
    if col.abbreviate_to is not None:
        widest = min(widest, max(col.abbreviate_to, _longest_word(col.name)))
    return max(widest, 1)


def is_empty(cells: Sequence[Cell]) -> bool:
    """Whether a column (its cells) holds no value in any row (:data:`EMPTY_CELLS`)."""
    return all(_plain(c).strip() in EMPTY_CELLS for c in cells)


def table_overhead(columns: int) -> int:
    """Characters a rich box table adds: a padding space each side per column + n+1 rules."""
    return 3 * columns + 1


def fitted_columns(columns: Sequence[Column], rows: Sequence[Sequence[Cell]],
                   width: int | None) -> tuple[list[int], list[int]]:
    """Indices of the columns kept (in order) and their minimum widths, for ``width``
    (``None``: keep all). Columns with no value (:func:`is_empty`) go first, then the lowest
    priority."""
    mins = [_min_width(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    empty = [bool(rows) and is_empty([r[i] for r in rows]) for i in range(len(columns))]
    kept = list(range(len(columns)))
    if width is None:
        return kept, mins

    def need() -> int:
        return sum(mins[i] for i in kept) + table_overhead(len(kept))

    while need() > width:
        droppable = [i for i in kept if columns[i].priority < KEEP]
        if not droppable:
            break
        # empty first, then the lowest priority; among equals, the rightmost
        kept.remove(min(droppable, key=lambda i: (not empty[i], columns[i].priority, -i)))
    return kept, mins


def _natural_width(col: Column, cells: Sequence[Cell]) -> int:
    """Width that shows the header and every cell on one line."""
    return max([len(col.name), *(len(_plain(c)) for c in cells)], default=1)


def fit_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int | None,
              *, title: str | None = None, **kwargs: object) -> Table:
    """A rich :class:`Table` of ``rows`` that fits ``width`` columns (see the module doc).

    With a ``width``, every kept column gets a fixed width: its minimum, plus what is left of
    ``width`` handed out in priority order up to the column's natural width (so rich never has
    to squeeze a column below its longest word). ``str`` cells, the title and the column names
    are inert (:mod:`traceviz.report.inert`: never parsed as markup, control characters
    shown escaped); pass a :class:`~rich.text.Text` for styled cells. Extra keyword arguments
    go to :class:`Table`.
    """
    kept, mins = fitted_columns(columns, rows, width)
    dropped = [columns[i].name + (" (empty)" if rows and is_empty([r[i] for r in rows]) else "")
               for i in range(len(columns)) if i not in kept]
    caption = (f"not shown at this width: {', '.join(dropped)}" if dropped else None)
    widths: dict[int, int | None] = dict.fromkeys(kept)
    if width is not None:
        spare = width - sum(mins[i] for i in kept) - table_overhead(len(kept))
        for i in sorted(kept, key=lambda i: (-columns[i].priority, i)):
            natural = _natural_width(columns[i], [r[i] for r in rows])
            grow = max(0, min(natural - mins[i], spare))
            widths[i] = mins[i] + grow
            spare -= grow
    table = Table(title=None if title is None else inert_markup(title), title_justify="left",
                  caption=None if caption is None else inert_markup(caption),
                  caption_justify="left", **kwargs)  # type: ignore[arg-type]
    for i in kept:
        c = columns[i]
        table.add_column(inert_markup(c.name), justify="right" if c.numeric else "left",
                         overflow="ellipsis", min_width=mins[i], width=widths[i])
    for r in rows:
        table.add_row(*(r[i] if isinstance(r[i], Text) else inert_text(r[i]) for i in kept))
    return table

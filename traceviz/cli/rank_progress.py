"""Progress over finished rank traces (``traceviz report`` on many ranks), on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Rank sets at least this large get a progress bar (on a terminal).
PROGRESS_MIN_RANKS = 2


@contextmanager
def rank_progress(total: int) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a ``progress(done, total)`` callback drawing a Rich bar of finished ranks, or
    ``None`` when stderr is not a terminal or the set is tiny."""
    if total < PROGRESS_MIN_RANKS or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
             TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("rank traces analysed", total=total)

        def update(done: int, of: int) -> None:
            bar.update(task, completed=done, total=of)

        yield update

"""Progress bars on stderr (only on a terminal): bytes of one large trace decoded, or rank
traces analysed. rich is imported only when a bar is drawn."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from traceviz.trace.loader import Progress

#: Files at least this large (on disk) get a progress bar.
PROGRESS_MIN_BYTES = 32 * 1024 * 1024
#: Rank sets at least this large get a progress bar.
PROGRESS_MIN_RANKS = 2


@contextmanager
def load_progress(path: Path) -> Iterator[Progress | None]:
    """Yield a ``progress(done, total)`` callback drawing a rich bar of bytes decoded, or
    ``None`` when the file is small or stderr is not a terminal."""
    try:
        big = path.stat().st_size >= PROGRESS_MIN_BYTES
    except OSError:
        big = False
    with _bar(big, f"decoding {path.name}", "bytes", None) as update:
        yield update


@contextmanager
def rank_progress(total: int) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a ``progress(done, total)`` callback drawing a rich bar of finished ranks, or
    ``None`` when stderr is not a terminal or the set is tiny."""
    with _bar(total >= PROGRESS_MIN_RANKS, "rank traces analysed", "count", total) as update:
        yield update


@contextmanager
def _bar(wanted: bool, description: str, unit: Literal["bytes", "count"], total: int | None
         ) -> Iterator[Callable[[int, int], None] | None]:
    """A transient bar on stderr (description, bar, done of total in ``unit``, time elapsed)
    and its ``update(done, total)``; ``None`` unless ``wanted`` and stderr is a terminal."""
    if not wanted or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bar

    count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    with Bar("[progress.description]{task.description}", BarColumn(), count,
             TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)

        def update(done: int, of: int) -> None:
            bar.update(task, completed=done, total=of)

        yield update

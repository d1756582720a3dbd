"""Progress display for long loads (on stderr, only for large traces on a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from traceviz.trace.loader import Progress

#: Files at least this large (on disk) get a progress bar.
PROGRESS_MIN_BYTES = 32 * 1024 * 1024


@contextmanager
def load_progress(path: Path) -> Iterator[Progress | None]:
    """Yield a ``progress(done, total)`` callback drawing a rich bar, or ``None`` when the file
    is small or stderr is not a terminal."""
    try:
        big = path.stat().st_size >= PROGRESS_MIN_BYTES
    except OSError:
        big = False
    if not big or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(f"decoding {path.name}", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update

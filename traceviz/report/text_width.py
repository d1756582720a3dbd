"""How wide text output is when it does not go to a terminal (a pipe, a file): the ``COLUMNS``
environment variable when it holds a positive whole number, as a terminal's width would be
(``COLUMNS=100 traceviz report RUN --format text | less``), else the caller's default."""

from __future__ import annotations

import os

#: The narrowest width taken from ``COLUMNS``; a smaller value is raised to it (tables need
#: room for their first column).
MIN_COLUMNS = 40


def text_width(default: int) -> int:
    """``COLUMNS`` (at least :data:`MIN_COLUMNS`) when set to a positive whole number, else
    ``default`` (characters)."""
    raw = os.environ.get("COLUMNS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return max(int(raw), MIN_COLUMNS)
    return default

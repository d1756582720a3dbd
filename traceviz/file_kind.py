"""What a path that is not a regular file is, in words, for the one-line refusals of traces,
option files and outputs (standard library only)."""

from __future__ import annotations

import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


def file_kind(mode: int) -> str:
    """``st_mode`` ``mode`` in words: "a directory", "a FIFO", …, "a special file"."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")

"""Atomic file writes: a temporary name in the same directory, renamed when complete.

A reader (or a run stopped half-way: Ctrl-C, SIGTERM, a killed child, a full disk) sees either
no file or the previous one or the complete new one, never a prefix. The temporary name is
``.<name>.partial-<pid>-<random><suffix>`` in the target's directory (same file system, so the
rename is atomic); it keeps the target's last suffix because some writers pick a format from it
(``torch.profiler`` gzips when the name ends in ``.gz``). Leftovers of a process that died
mid-write hold :data:`PARTIAL_MARK` in their name and are removed by :func:`remove_partials`.

Standard library only: imported by ``collect`` (parent and child) and usable by any stage.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Marks temporary names in a directory listing.
PARTIAL_MARK = ".partial-"


def partial_name(path: Path) -> Path:
    """A fresh temporary sibling of ``path`` (see the module docstring for its form)."""
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    return path.with_name(f".{path.name}{PARTIAL_MARK}{token}{path.suffix}")


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some file systems do not open directories; the rename still happened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """Yield a temporary path to write; on normal exit it is synced and renamed to ``path``.

    If the block raises (``KeyboardInterrupt`` included) or leaves no file, the temporary file
    is removed and ``path`` is untouched. Missing parent folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_name(path)
    try:
        yield tmp
        if not tmp.is_file():
            raise FileNotFoundError(f"{tmp}: nothing was written for {path.name}")
        with tmp.open("rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def remove_partials(directory: Path) -> list[Path]:
    """Delete temporary files left in ``directory`` (not recursive) by an interrupted writer.

    Only call it when no writer is active there. Returns the removed paths.
    """
    removed = []
    for p in sorted(directory.glob(f".*{PARTIAL_MARK}*")):
        if p.is_file():
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed

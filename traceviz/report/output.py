"""Write report files atomically, never overwriting an existing file unless asked."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from traceviz.atomic import PARTIAL_MARK
from traceviz.errors import OutputExistsError


def write_atomic(path: Path | str, data: str | bytes, *, force: bool = False) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same directory.

    Readers see either the old file or the complete new one. Without ``force`` an existing
    ``path`` raises :class:`OutputExistsError` (checked atomically: the file is linked into
    place, which fails if the name exists). Missing parent folders are created. Returns the
    path written.
    """
    path = Path(path)
    OutputExistsError.refuse(path, force=force)
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}{PARTIAL_MARK}", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise OutputExistsError.of(path) from None
            os.unlink(tmp)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path

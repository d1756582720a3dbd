"""Writing report files: atomically, and never over an existing file without ``force``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from traceviz.errors import OutputExistsError


def write_atomic(path: str | Path, data: str | bytes, force: bool = False) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename, so a
    reader never sees a half-written report. Refuses to replace an existing file unless
    ``force``."""
    p = Path(path)
    if p.exists() and not force:
        raise OutputExistsError(f"{p} exists; pass --force to overwrite it")
    p.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p

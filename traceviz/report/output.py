"""Write report files atomically, never overwriting an existing file unless asked, and never
replacing a link, directory or special file (:mod:`traceviz.publish`)."""

from __future__ import annotations

from pathlib import Path

from traceviz.publish import check_output, publishing


def write_atomic(path: Path | str, data: str | bytes, *, force: bool = False) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same directory.

    Readers see either the old file or the complete new one. Without ``force`` an existing
    ``path`` raises :class:`~traceviz.errors.OutputExistsError` (checked atomically: the file is
    linked into place, which fails if the name exists); with it, only a regular file is
    replaced. Missing parent folders are created. Returns the path written.
    """
    path = Path(path)
    check_output(path, force=force)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with publishing(path, force=force) as fh:
        fh.write(raw)
    return path

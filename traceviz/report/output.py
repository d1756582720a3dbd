"""Write report files atomically, never overwriting an existing file unless asked, and never
replacing a link, directory or special file (:mod:`traceviz.publish`)."""

from __future__ import annotations

import os
from pathlib import Path

from traceviz.atomic import partial_name
from traceviz.publish import (
    check_output,
    os_error,
    publish,
    remove_stale_partials,
    signals_interrupt,
)


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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(path)
        tmp = partial_name(path)
        with signals_interrupt():
            try:
                with open(tmp, "xb") as f:
                    f.write(raw)
                    f.flush()
                    os.fsync(f.fileno())
                os.chmod(tmp, 0o644)
                publish(tmp, path, force=force)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise os_error(path, exc) from None
    return path

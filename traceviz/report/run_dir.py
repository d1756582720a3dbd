"""What makes a directory a ``traceviz profile`` run directory (light: the CLI asks it of
every target before it imports the comparison machinery)."""

from __future__ import annotations

from pathlib import Path

#: The run directory's manifest file (:mod:`traceviz.collect.manifest` writes it).
MANIFEST = "manifest.json"


def is_run_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a :data:`MANIFEST`."""
    return path.is_dir() and (path / MANIFEST).is_file()

"""What makes a directory a ``traceviz profile`` run directory (light: the CLI asks it of
every target before it imports the comparison machinery), and its manifest, read and checked
(:mod:`traceviz.analyze.review.manifest_check`) before anything uses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from traceviz.errors import UsageError

#: The run directory's manifest file (:mod:`traceviz.collect.manifest` writes it).
MANIFEST = "manifest.json"


def is_run_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a :data:`MANIFEST`."""
    return path.is_dir() and (path / MANIFEST).is_file()


def read_run_manifest(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run directory's manifest and its ``modes``; :class:`UsageError` when the manifest
    cannot be read or records no mode,
    :class:`~traceviz.analyze.review.manifest_check.ManifestError` (exit 1, naming the field) when
    it fails :func:`~traceviz.analyze.review.manifest_check.check_manifest` (schema, types,
    ranges, and each speed-up recomputed from its recorded blocks)."""
    from traceviz.analyze.review.manifest_check import check_manifest

    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{run_dir / MANIFEST}: cannot read the manifest ({exc})") from exc
    modes = manifest.get("modes") if isinstance(manifest, dict) else None
    if not isinstance(modes, dict) or not modes:
        raise UsageError(f"{run_dir / MANIFEST}: no modes recorded")
    check_manifest(manifest, str(run_dir / MANIFEST))
    return manifest, modes

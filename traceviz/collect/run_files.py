"""What ``profile --force`` may delete: only the files an earlier traceviz run made.

An existing output directory is replaced only when

1. its ``manifest.json`` validates as a traceviz run manifest (:func:`run_manifest_problem`:
   a JSON object with an integer ``schema`` of a known version, ``workload`` and ``modes``
   objects, every mode name a plain file-name part and every mode entry an object with a
   ``status``), and
2. every entry in it is a file that run made (:func:`run_made`): ``manifest.json``,
   ``report.html`` (or the manifest's ``report``), per recorded mode ``M``:
   ``M.pt.trace.json.gz``, ``M.stack.pt.trace.json.gz``, ``M.rank<r>.pt.trace.json.gz``,
   ``M.ranks.html`` and in ``logs/`` every file named ``M.*``; temporary files of an
   interrupted write (``.<name>.partial-…``); an ``old/`` directory that is itself such a run
   (``profile NEW --against OLD``); and the empty ``logs/`` and ``old/`` folders.

Otherwise nothing is deleted and :class:`~traceviz.collect.manifest.RunDirError` names what is
there (:func:`check_run_dir`, :func:`prepare_run_dir`). Symbolic links are never followed or
counted as the run's files.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from traceviz.analyze.review.manifest_check import SUPPORTED_SCHEMAS
from traceviz.atomic import PARTIAL_MARK
from traceviz.collect.manifest import MANIFEST_NAME, RunDirError
from traceviz.publish import existing_ancestor

REPORT_NAME = "report.html"
LOGS_DIR = "logs"
#: OLD's run directory inside NEW's (``profile NEW --against OLD``).
OLD_DIR = "old"
#: Names shown when refusing (the rest are counted).
SHOWN = 5
#: A mode name that is safe as a file-name part.
_MODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


class NotARunError(ValueError):
    """The directory is not (only) an earlier traceviz run; the message says what is there."""


def run_manifest_problem(record: Any) -> str | None:
    """Why ``record`` (a decoded ``manifest.json``) is not a traceviz run manifest, or
    ``None`` when it is one (module doc, condition 1)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    schema = record.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema not in SUPPORTED_SCHEMAS:
        return f"no known traceviz schema (schema: {schema!r})"
    for key in ("workload", "modes"):
        if not isinstance(record.get(key), dict):
            return f"no {key!r} object"
    for mode, entry in record["modes"].items():
        if not _MODE_NAME.match(mode):
            return f"mode name {mode!r} is not a plain name"
        if not isinstance(entry, dict) or not isinstance(entry.get("status"), str):
            return f"mode {mode!r} has no status"
    return None


def _read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / MANIFEST_NAME
    if path.is_symlink() or not path.is_file():
        raise NotARunError(f"it has no {MANIFEST_NAME}")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotARunError(f"its {MANIFEST_NAME} cannot be read as JSON ({exc})") from None
    problem = run_manifest_problem(record)
    if problem is not None:
        raise NotARunError(f"its {MANIFEST_NAME} is not a traceviz run manifest ({problem})")
    return record


def _top_level_made(name: str, modes: list[str], report: str) -> bool:
    if name in (MANIFEST_NAME, REPORT_NAME, report) or PARTIAL_MARK in name:
        return True
    return any(name.startswith(f"{m}.") and (
        name in (f"{m}.pt.trace.json.gz", f"{m}.stack.pt.trace.json.gz", f"{m}.ranks.html")
        or re.fullmatch(rf"{re.escape(m)}\.rank\d+\.pt\.trace\.json\.gz", name) is not None)
        for m in modes)


def run_made(run_dir: Path) -> list[Path]:
    """Every entry of ``run_dir`` (files, then the folders holding them, deepest first) when
    all of them are an earlier run's (module doc); :class:`NotARunError` otherwise."""
    record = _read_manifest(run_dir)
    modes = list(record["modes"])
    report = record.get("report") if isinstance(record.get("report"), str) else REPORT_NAME
    files: list[Path] = []
    folders: list[Path] = []
    foreign: list[str] = []
    for entry in sorted(os.scandir(run_dir), key=lambda e: e.name):
        path = Path(entry.path)
        if entry.is_symlink():
            foreign.append(f"{entry.name} (a symbolic link)")
        elif entry.is_file() and _top_level_made(entry.name, modes, report):
            files.append(path)
        elif entry.is_dir() and entry.name == LOGS_DIR:
            for log in sorted(os.scandir(path), key=lambda e: e.name):
                made = (log.is_file() and not log.is_symlink() and (
                    PARTIAL_MARK in log.name or any(log.name.startswith(f"{m}.") for m in modes)))
                if made:
                    files.append(Path(log.path))
                else:
                    foreign.append(f"{LOGS_DIR}/{log.name}")
            folders.append(path)
        elif entry.is_dir() and entry.name == OLD_DIR and not any(os.scandir(path)):
            folders.append(path)
        elif entry.is_dir() and entry.name == OLD_DIR:
            try:
                old = run_made(path)
            except NotARunError as exc:
                foreign.append(f"{OLD_DIR}/ ({exc})")
            else:
                files.extend(p for p in old if not p.is_dir())
                folders.extend(p for p in old if p.is_dir())
                folders.append(path)
        else:
            foreign.append(entry.name + ("/" if entry.is_dir() else ""))
    if foreign:
        more = f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
        raise NotARunError(f"it holds what no traceviz run made: "
                           f"{', '.join(foreign[:SHOWN])}{more}")
    return files + folders


def remove_run(run_dir: Path) -> int:
    """Delete the earlier run in ``run_dir`` (only its own files, :func:`run_made`) and the
    directory itself; the number of files removed."""
    made = run_made(run_dir)
    removed = 0
    for path in made:
        if path.is_dir():
            path.rmdir()  # empty by now: its files came first; a new file makes this fail
        else:
            path.unlink()
            removed += 1
    run_dir.rmdir()
    return removed


def check_run_dir(path: Path, force: bool) -> None:
    """Raise :class:`RunDirError` unless ``path`` may become the run directory: missing or an
    empty directory, or, with ``force``, a directory holding only an earlier traceviz run's
    files (:func:`run_made`); never an arbitrary folder or file."""
    if path.is_symlink():
        raise RunDirError(f"{path} is a symbolic link; give the directory it points to")
    if not path.exists():
        parent = existing_ancestor(path)
        if not parent.is_dir():
            raise RunDirError(f"{path}: {parent} is not a directory")
        return
    if path.is_dir() and not any(path.iterdir()):
        return
    if not path.is_dir():
        raise RunDirError(f"{path} exists and is not a directory; refusing to replace it, even "
                          "with --force")
    if not force:
        raise RunDirError(f"{path} exists; pass --force to replace it")
    try:
        run_made(path)
    except NotARunError as exc:
        raise RunDirError(f"{path} is not an earlier traceviz run directory: {exc}; refusing "
                          "to replace it, even with --force (nothing was deleted)") from None


def prepare_run_dir(path: Path, force: bool) -> Path:
    """Create ``path`` as an empty run directory (:func:`check_run_dir` says when it may be
    used; with ``force`` an earlier run there is removed, only its own files)."""
    check_run_dir(path, force)
    if path.is_dir() and any(path.iterdir()):
        try:
            remove_run(path)
        except NotARunError as exc:  # it changed since the check
            raise RunDirError(f"{path}: {exc}; refusing to replace it") from None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"{path}: cannot create the run directory ({exc.strerror})") from None
    return path

"""Inputs are never outputs: the one check every command that writes makes before it writes.

Each command knows, before it writes anything, the exact set of files it will read
(:func:`input_files`):

* a trace file: itself;
* a run directory of ``traceviz profile``: its ``manifest.json``, every file the manifest names
  (``trace``, ``traces``, ``log`` and ``report`` entries at any depth, resolved against the run
  directory, so ``"../../elsewhere/x.json"`` is covered), the files its report globs
  (``*.pt.trace.json*``, ``logs/*``), and the same of an ``old/`` run directory inside it
  (``profile NEW --against OLD``);
* any other directory (the traces of a distributed run's ranks): every ``*.json`` and
  ``*.json.gz`` in it that traceviz did not write (:func:`is_traceviz_output`), the files
  ``report DIR`` reads as ranks;
* option files (``--thresholds-file``): themselves.

An output is refused, with ``--force`` or without, when it is one of them: the same file reached
through a symbolic link, ``..`` or a hard link included (same device and inode when both exist,
else the same resolved path). The HTML report a run directory holds (``report.html``) is an
output, which ``--force`` may replace. URLs are not local files and are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from traceviz.errors import UsageError

#: How every refusal ends.
NEVER = "inputs are never overwritten, with --force or without"

#: A run directory's manifest (:mod:`traceviz.collect.manifest` writes it).
MANIFEST = "manifest.json"
#: Files of a run directory that a report reads besides those its manifest names (glob
#: patterns relative to it).
RUN_DIR_GLOBS = ("*.pt.trace.json*", "logs/*")
#: The run directory of OLD inside a ``profile NEW --against OLD`` run directory.
OLD_DIR = "old"
#: Manifest keys whose string values (or lists of strings) name files the run's report reads.
FILE_KEYS = frozenset({"trace", "traces", "log"})
#: The files a directory of rank traces is read as (``report DIR``).
RANK_DIR_GLOBS = ("*.json", "*.json.gz")
#: How every JSON document traceviz writes as a report begins (its ``schema`` member first).
REPORT_PREFIX = b'{\n  "schema": "traceviz.'
#: The name ending of ``traceviz export``'s files (the trace plus the overlay: a copy).
EXPORT_SUFFIXES = (".traceviz.json", ".traceviz.json.gz")


def is_traceviz_output(path: Path) -> bool:
    """Whether ``path`` is a file traceviz wrote (a JSON report, or an export), not a rank's
    trace: a directory of rank traces may hold the reports written into it."""
    if path.name.endswith(EXPORT_SUFFIXES):
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(len(REPORT_PREFIX))
            if head[:2] == b"\x1f\x8b":
                import gzip

                fh.seek(0)
                with gzip.open(fh) as gz:
                    head = gz.read(len(REPORT_PREFIX))
    except (OSError, EOFError):
        return False
    return head == REPORT_PREFIX


class InputAsOutputError(UsageError):
    """An output path that is one of the command's inputs."""


def _is_url(path: str | os.PathLike[str]) -> bool:
    return "://" in str(path)


def _named_files(value: Any) -> Iterator[str]:
    """Strings under :data:`FILE_KEYS` anywhere in a decoded manifest."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in FILE_KEYS:
                if isinstance(item, str):
                    yield item
                elif isinstance(item, list):
                    yield from (x for x in item if isinstance(x, str))
            else:
                yield from _named_files(item)
    elif isinstance(value, list):
        for item in value:
            yield from _named_files(item)


def run_dir_inputs(run_dir: Path) -> Iterator[Path]:
    """The files a report of the run directory ``run_dir`` reads (module doc)."""
    manifest = run_dir / MANIFEST
    yield manifest
    try:
        record = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    for name in _named_files(record):
        if name and "\0" not in name:
            yield run_dir / name
    for pattern in RUN_DIR_GLOBS:
        yield from (p for p in run_dir.glob(pattern) if p.is_file())
    old = run_dir / OLD_DIR
    if (old / MANIFEST).is_file():
        yield from run_dir_inputs(old)


def rank_dir_members(directory: Path) -> list[Path]:
    """The files ``report DIR`` reads as rank traces: every ``*.json`` / ``*.json.gz`` of
    ``directory`` (not recursive) that traceviz did not write, sorted."""
    return sorted({p for g in RANK_DIR_GLOBS for p in directory.glob(g)
                   if p.is_file() and not is_traceviz_output(p)})


def input_files(path: Path) -> Iterator[Path]:
    """The files a command reads from ``path``: the file itself, a run directory's inputs, or
    a directory's rank traces (module doc)."""
    if (path / MANIFEST).is_file():
        yield from run_dir_inputs(path)
    elif path.is_dir():
        yield from rank_dir_members(path)
    else:
        yield path


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (links and ``..`` resolved)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError, ValueError):  # unresolvable (a loop): not provably the same
        return False


def refuse_input_as_output(out: Path | None,
                           inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Raise :class:`InputAsOutputError` when ``out`` is one of the files of ``inputs``
    (``None`` or ``-``: the output goes to stdout; a ``None`` input is skipped)."""
    if out is None or os.fspath(out) == "-":
        return
    for given in inputs:
        if given is None or _is_url(given):
            continue
        for f in input_files(Path(given)):
            if same_file(out, f):
                raise InputAsOutputError(f"refusing to write {out}: it is the input {f} ({NEVER})")


def refuse_run_dir_over_inputs(run_dir: Path, inputs: Iterable[Path]) -> None:
    """Raise :class:`InputAsOutputError` when an input lies inside ``run_dir``, which
    ``profile --force`` would replace."""
    try:
        root = run_dir.resolve()
    except (OSError, RuntimeError):
        return
    for given in inputs:
        try:
            inside = given.resolve().is_relative_to(root)
        except (OSError, RuntimeError):
            continue
        if inside:
            raise InputAsOutputError(
                f"refusing to use {run_dir} as the run directory: the input {given} is inside "
                f"it and would be replaced ({NEVER})")


def preflight(out: Path | None, inputs: Iterable[str | os.PathLike[str] | None], *,
              force: bool) -> None:
    """Every check a command makes on its output before any work: not one of ``inputs``
    (:func:`refuse_input_as_output`) and writable as asked
    (:func:`traceviz.publish.check_output`)."""
    from traceviz.publish import check_output

    refuse_input_as_output(out, inputs)
    check_output(out, force=force)

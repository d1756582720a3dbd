"""Inputs are never outputs: the one check every command that writes makes before it writes.

An output is refused, with ``--force`` or without, when it is one of the command's input files:
the same file reached through a symbolic link, ``..`` or a hard link included
(:func:`os.path.samefile` when both exist, else the resolved paths). A run directory's input
files are its ``manifest.json``, its traces (``*.pt.trace.json*``) and its ``logs/``; its
``report.html`` and other reports are outputs, which ``--force`` may replace. URLs are not
local files and are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from traceviz.errors import UsageError

#: How every refusal ends.
NEVER = "inputs are never overwritten, with --force or without"

#: Files of a run directory that a report reads (glob patterns relative to it).
RUN_DIR_INPUTS = ("manifest.json", "*.pt.trace.json*", "logs/*", "old/manifest.json",
                  "old/*.pt.trace.json*", "old/logs/*")


class InputAsOutputError(UsageError):
    """An output path that is one of the command's inputs."""


def _is_url(path: str | os.PathLike[str]) -> bool:
    return "://" in str(path)


def input_files(path: Path) -> Iterator[Path]:
    """The files a command reads from ``path``: the file itself, or a run directory's inputs."""
    if path.is_dir():
        for pattern in RUN_DIR_INPUTS:
            yield from (p for p in path.glob(pattern) if p.is_file())
    else:
        yield path


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (links and ``..`` resolved)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # unresolvable (a symlink loop): not provably the same
        return False


def refuse_input_as_output(out: Path | None, inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Raise :class:`InputAsOutputError` when ``out`` is one of the files of ``inputs``
    (``None``: the output goes to stdout)."""
    if out is None:
        return
    for given in inputs:
        if _is_url(given):
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

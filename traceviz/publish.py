"""Putting a finished output file in place without losing anything that is already there.

Every command that writes a file (``report``, ``compare``, ``kernel-diff``, ``export``, the API's
``to_html``) writes it under a temporary name in the target's directory
(:func:`traceviz.atomic.partial_name`) and then publishes it with :func:`publish`:

* without ``force`` the file is **hard-linked** into place, which fails when the name exists
  (``O_EXCL`` semantics): a file created at the target meanwhile, by anyone, is never
  overwritten, and of two writers racing for one name exactly one wins;
* with ``force`` it replaces the target only when the target is a **regular file** (not a
  symbolic link, directory, FIFO, socket or device): ``--force`` overwrites what a command wrote
  before, never a special file (``-o /dev/null``, a FIFO, ``/proc/self/fd/1``) or a link. Write
  to standard output with ``-o -`` instead.

:func:`check_output` makes the same checks before any work, so a command refuses in a second,
not after reading a large trace. Problems with the path itself (a directory, a special file, a
directory that cannot be created or written) are :class:`OutputPathError` (exit 2), with the
path and the system's reason in one line.

Temporary files are removed when the write fails or is interrupted (``KeyboardInterrupt``;
SIGTERM is turned into one while a write is in progress, :func:`signals_interrupt`). One left
by a process that was killed (SIGKILL, power loss) is removed by the next write to the same
target once its process is gone, and named on stderr (:func:`remove_stale_partials`).
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from traceviz.atomic import PARTIAL_MARK, partial_name
from traceviz.errors import OutputExistsError, UsageError
from traceviz.file_kind import file_kind

#: The ``-o`` value that means standard output.
STDOUT = "-"


class OutputPathError(UsageError):
    """An output path that cannot be written as asked (exit code 2): a directory, a special
    file or a link under ``--force``, or a folder that cannot be created or written."""


def is_stdout(out: str | os.PathLike[str] | None) -> bool:
    """Whether ``out`` asks for standard output (``-o -``)."""
    return out is not None and os.fspath(out) == STDOUT


def check_output(out: Path | None, *, force: bool) -> None:
    """Refuse ``out`` before any work when publishing to it would fail or replace what
    ``--force`` may not replace (module doc); ``None`` or ``-``: standard output."""
    if out is None or is_stdout(out):
        return
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        _check_parent(out)
        return
    except OSError as exc:
        raise OutputPathError(f"{out}: cannot use it as the output ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        if not force:
            raise OutputExistsError.of(out)
        raise OutputPathError(
            f"{out} is a symbolic link (to {os.readlink(out)}); --force replaces only regular "
            "files, never a link: remove it, or write to the file it points to")
    if not stat.S_ISREG(st.st_mode):
        kind = file_kind(st.st_mode)
        raise OutputPathError(
            f"{out} is {kind}; traceviz writes only regular files and never replaces {kind}, "
            "with --force or without (use -o - for standard output)")
    if not force:
        raise OutputExistsError.of(out)
    _check_parent(out)


def existing_ancestor(path: Path) -> Path:
    """The nearest folder above ``path`` that exists (``/`` at the latest): where creating
    ``path`` and its missing folders starts."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def _check_parent(out: Path) -> None:
    """The first existing folder above ``out`` must be a folder that can be written."""
    parent = existing_ancestor(out)
    if not parent.is_dir():
        raise OutputPathError(f"{out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputPathError(f"{out}: the directory {parent} cannot be written")


def publish(tmp: Path, target: Path, *, force: bool) -> None:
    """Move the complete file ``tmp`` to ``target`` (module doc): a no-clobber hard link
    without ``force``; with it, a rename over a regular file only. ``tmp`` is gone afterwards
    unless this raises."""
    if not force:
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise OutputExistsError.of(target) from None
        os.unlink(tmp)
        return
    check_output(target, force=True)  # not a link, directory or special file: checked again
    os.replace(tmp, target)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_partials(target: Path) -> list[Path]:
    """Delete the temporary files of earlier writes to ``target`` whose process is gone
    (killed mid-write), saying so on stderr; returns them. Files of a live process (a
    concurrent write) are left alone."""
    removed = []
    for p in target.parent.glob(f".{target.name}{PARTIAL_MARK}*"):
        token = p.name[len(f".{target.name}{PARTIAL_MARK}"):]
        pid_text = token.split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)) or not p.is_file():
            continue
        try:
            size = p.stat().st_size
            p.unlink()
        except OSError:
            continue
        removed.append(p)
        print(f"traceviz: removed {p} ({size:,} bytes), left by an interrupted write "
              f"(process {pid_text} is gone)", file=sys.stderr)
    return removed


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`KeyboardInterrupt` (so ``finally`` blocks
    remove temporary files) instead of ending the process on the spot. A no-op outside the
    main thread, where signal handlers cannot be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def publishing(target: Path, *, force: bool) -> Iterator[BinaryIO]:
    """A new temporary file beside ``target``, open for writing; when the block ends normally it
    is synced and published (:func:`publish`), else removed. Missing folders are created and
    leftovers of killed writes removed first (:func:`remove_stale_partials`); a write the system
    refuses is :class:`OutputPathError`."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(target)
        tmp = partial_name(target)
        with signals_interrupt():
            try:
                with open(tmp, "xb") as fh:
                    yield fh
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, 0o644)
                publish(tmp, target, force=force)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise os_error(target, exc) from None


def os_error(target: Path, exc: OSError) -> OutputPathError:
    """One line for a write that the system refused (read-only or full disk, permissions)."""
    return OutputPathError(f"cannot write {target}: {exc.strerror or exc}")

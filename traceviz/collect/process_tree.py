"""Killing a child and everything it started, sessions of their own included.

``torch.distributed.run`` starts each rank with ``start_new_session=True``, so killing the
launcher's process group leaves the ranks running, orphaned: a rank hung in a collective (or in
the workload's own code) then keeps the log pipe open and the GPU busy after its mode's timeout.
:func:`kill_tree` finds the child's descendants by their parent links (``/proc/<pid>/stat``)
*before* killing anything, then SIGKILLs each one's process group, each one, and the child's
own group. Where ``/proc`` does not exist (macOS) only the child's group is killed.
:func:`pipe_holders` finds, after the child is gone, whatever still holds its output pipe.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (field 3, the state, first), or ``None``
    when the process is gone or ``/proc`` is absent."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid``, children before grandchildren (``[]`` without
    ``/proc``)."""
    if not PROC.is_dir():
        return []
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children.get(todo.pop(0), [])
        found += kids
        todo += kids
    return found


def kill_tree(pid: int) -> list[int]:
    """SIGKILL ``pid``'s process group and every descendant with its own group; returns the
    descendants found (:func:`descendants`, taken before the first signal)."""
    tree = descendants(pid)
    for target in (*tree, pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(target, signal.SIGKILL)  # a session leader's group: its compile workers
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
    return tree


def pipe_holders(fd: int) -> list[int]:
    """The other processes that hold the pipe ``fd`` (either end) open, from each process's
    ``/proc/<pid>/fd`` links (``[]`` without ``/proc``): whoever still holds a child's output
    pipe after the child is gone is one of its descendants, whatever its session or parent."""
    if not PROC.is_dir():
        return []
    target = f"pipe:[{os.fstat(fd).st_ino}]"
    me = os.getpid()
    holders = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            links = [os.readlink(link) for link in (entry / "fd").iterdir()]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if target in links:
            holders.append(int(entry.name))
    return holders


def still_alive(pids: list[int]) -> list[str]:
    """``"<pid> (state <S>)"`` for each of ``pids`` that still exists and is not a zombie
    (state from ``/proc``: ``D`` is uninterruptible, e.g. inside the GPU driver)."""
    out = []
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None and fields[0] not in ("Z", "X"):
            out.append(f"{pid} (state {fields[0]})")
    return out

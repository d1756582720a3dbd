"""Run one task per rank trace in local worker processes: ``run_pool(task, paths, workers)``.

Each worker is a fresh process (``forkserver`` where the platform has it, else ``spawn``;
never a ``fork`` of a parent that holds state) that takes one path at a time from the parent
and sends back the task's result. Because the parent knows which path each worker holds, a
worker that dies (killed by the kernel's OOM killer, a signal, a crash in native code) costs
exactly that rank: the rank is tried once more in a new worker (as Dask's ``retries=1``), and
if that worker dies too the rank is a :class:`~traceviz.analyze.distributed.model.FailedRank`
("its worker process died: killed by SIGKILL"). The others go on; nothing waits forever on a
dead process. Results come back in the order of ``paths``.

Ctrl-C (or any exception in the parent) terminates every worker this pool started, then
re-raises; SIGTERM does the same (raised as ``SystemExit(143)`` while the pool runs in the main
thread). A worker whose parent is gone exits quietly after its current rank.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from traceviz.analyze.distributed.model import FailedRank

#: Tries per rank when its worker dies (the first run and one retry).
ATTEMPTS = 2
#: Seconds a worker gets to exit after being told to stop, before it is killed.
STOP_GRACE_S = 5.0

Progress = Callable[[int, int], None]


def _context() -> Any:
    methods = mp.get_all_start_methods()
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        # pandas too: traceviz imports it lazily, and every rank task builds tables.
        ctx.set_forkserver_preload(["traceviz.scale.task", "pandas"])
        return ctx
    return mp.get_context("spawn")


def _serve(conn: Connection, task: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Worker loop: receive ``(index, path)``, send ``(index, task(path, *args))``; ``None``
    stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                return
            index, path = msg
            conn.send((index, task(path, *args)))
    except (EOFError, OSError):  # the parent is gone: nobody wants the result
        return


@dataclass
class _Worker:
    proc: Any
    conn: Connection
    index: int | None = None  # the path it holds


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def run_pool(task: Callable[..., Any], paths: Sequence[str], workers: int,
             args: tuple[Any, ...] = (), progress: Progress | None = None) -> list[Any]:
    """``[task(path, *args) for path in paths]`` in ``workers`` processes (see the module
    docstring); ``task`` must be importable by name (a module-level function)."""
    ctx = _context()
    pending: deque[int] = deque(range(len(paths)))
    results: list[Any] = [None] * len(paths)
    attempts = [0] * len(paths)
    done = 0
    pool: list[_Worker] = []

    def start() -> _Worker:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, task, args), daemon=True,
                           name="traceviz-rank-worker")
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def finish(i: int, value: Any) -> None:
        nonlocal done
        results[i] = value
        done += 1
        if progress is not None:
            progress(done, len(paths))

    main = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, _terminated) if main else None
    try:
        while done < len(paths):
            for w in [w for w in pool if w.index is None and not w.proc.is_alive()]:
                pool.remove(w)  # died while idle (OOM killer, a signal): start another
                w.conn.close()
            while pending and len([w for w in pool if w.index is not None]) < workers:
                idle = next((w for w in pool if w.index is None), None)
                if idle is None:
                    idle = start()
                    pool.append(idle)
                i = pending.popleft()
                attempts[i] += 1
                idle.index = i
                with contextlib.suppress(OSError):  # it just died: its sentinel tells below
                    idle.conn.send((i, paths[i]))
            busy = [w for w in pool if w.index is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
            for w in busy:
                if w.conn in ready or w.proc.sentinel in ready:
                    _collect(w, pool, pending, attempts, paths, finish)
    finally:
        _stop(pool)
        if main:
            signal.signal(signal.SIGTERM, old_term)
    return results


def _terminated(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def _collect(w: _Worker, pool: list[_Worker], pending: deque[int], attempts: list[int],
             paths: Sequence[str], finish: Callable[[int, Any], None]) -> None:
    """Take a worker's result, or handle its death (retry or fail its rank)."""
    i = w.index
    assert i is not None
    try:
        if w.conn.poll():
            index, value = w.conn.recv()
            w.index = None
            finish(index, value)
            return
    except (EOFError, OSError):
        pass
    if w.proc.is_alive():  # readable but nothing complete yet: wait again
        return
    w.proc.join()
    pool.remove(w)
    w.conn.close()
    if attempts[i] < ATTEMPTS:
        pending.appendleft(i)
    else:
        finish(i, FailedRank(paths[i], f"its worker process died ({_describe_exit(w.proc.exitcode)}"
                             f") on each of {ATTEMPTS} tries"))


def _stop(pool: list[_Worker]) -> None:
    """Stop every worker: idle ones are asked to exit, busy ones (Ctrl-C, an error) are
    terminated; whatever is left after :data:`STOP_GRACE_S` is killed."""
    for w in pool:
        try:
            if w.index is None:
                w.conn.send(None)
            else:
                w.proc.terminate()
        except (OSError, ValueError):
            w.proc.terminate()
    for w in pool:
        w.proc.join(STOP_GRACE_S)
        if w.proc.is_alive():
            w.proc.kill()
            w.proc.join()
        w.conn.close()

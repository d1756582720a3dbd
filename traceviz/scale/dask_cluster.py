"""Run one task per rank trace on Dask: ``run_dask(task, paths, address, workers)``.

``address="local"`` starts a :class:`distributed.LocalCluster` of ``workers`` single-threaded
worker processes on this machine; any other address (``tcp://scheduler:8786``) connects a
:class:`distributed.Client` to a running scheduler, whose workers must be able to read the
paths (a shared file system, or fsspec URLs such as ``s3://…``) and have traceviz installed.

Each rank is one task (``client.submit(task, path, retries=1)``); results are taken as they
finish (``as_completed``, for the progress callback) and returned in the order of ``paths``.
A task whose worker dies is re-run by the scheduler; once it has killed
``distributed.scheduler.allowed-failures`` + 1 workers the scheduler gives up on it
(``KilledWorker``) and the rank becomes a
:class:`~traceviz.analyze.distributed.model.FailedRank`. The local cluster is started with
``allowed-failures = 1`` (two tries, as the local pool); a remote scheduler keeps its own
setting. Its ``worker-saturation`` is 1.0: a worker holds only the rank it runs, so a dying
worker counts against that rank alone. Ctrl-C cancels the tasks and closes the cluster (or
the connection) before re-raising.

``dask`` and ``distributed`` are imported only here, inside the function: they are the
optional extra ``traceviz[dask]``.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from traceviz.analyze.distributed.model import FailedRank
from traceviz.errors import TracevizError

#: What to run when Dask is missing.
INSTALL = "pip install 'traceviz[dask]'"
#: Worker deaths a task may cause on the local cluster before it is given up (one retry).
LOCAL_ALLOWED_FAILURES = 1
#: Seconds Dask's client waits for a scheduler that does not answer.
CONNECT_TIMEOUT_S = 30
#: Seconds the probe of a ``tcp://`` scheduler's port waits before leaving it to the client.
PROBE_TIMEOUT_S = 5.0

Progress = Callable[[int, int], None]


class DaskMissingError(TracevizError):
    """``--dask`` was asked for but dask.distributed is not installed."""

    def __init__(self) -> None:
        super().__init__(f"--dask needs dask.distributed, which is not installed: {INSTALL}")


def dask_available() -> bool:
    """Whether ``dask.distributed`` can be imported (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("distributed") is not None
    except (ImportError, ValueError):
        return False


def unreachable(address: str) -> str | None:
    """Why the scheduler at ``address`` (``tcp://HOST:PORT``) certainly cannot be reached: its
    host name does not resolve or its port refuses the connection (nothing listens there), so
    the error comes at once instead of after the client's :data:`CONNECT_TIMEOUT_S`. ``None``
    when the port accepts, does not answer within :data:`PROBE_TIMEOUT_S`, or the address is
    not of that form: the client's own connect decides then."""
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme != "tcp" or host is None or port is None:
        return None
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return None
    except ConnectionRefusedError:
        return f"connection refused on {host} port {port} (no scheduler listens there)"
    except socket.gaierror as exc:
        return f"cannot resolve {host} ({exc.strerror})"
    except OSError:
        return None


def run_dask(task: Callable[..., Any], paths: Sequence[str], address: str, workers: int,
             args: tuple[Any, ...] = (), progress: Progress | None = None,
             announce: Callable[[str], None] | None = None) -> list[Any]:
    """``[task(path, *args) for path in paths]`` as Dask tasks (see the module docstring);
    ``announce`` receives one line with the dashboard link."""
    if not dask_available():
        raise DaskMissingError()
    import dask
    from distributed import Client, LocalCluster

    if address == "local":
        with dask.config.set({"distributed.scheduler.allowed-failures": LOCAL_ALLOWED_FAILURES,
                              "distributed.scheduler.worker-saturation": 1.0}
                             ), LocalCluster(n_workers=workers, threads_per_worker=1,
                                             processes=True, dashboard_address=":0",
                                             silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:
            return _run(client, task, paths, args, progress, announce, "local cluster")
    if (why := unreachable(address)) is not None:
        raise TracevizError(f"cannot reach the Dask scheduler at {address}: {why}")
    try:
        client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
    except (OSError, TimeoutError) as exc:
        raise TracevizError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        return _run(client, task, paths, args, progress, announce, f"scheduler {address}")


def _run(client: Any, task: Callable[..., Any], paths: Sequence[str], args: tuple[Any, ...],
         progress: Progress | None, announce: Callable[[str], None] | None,
         where: str) -> list[Any]:
    from distributed import as_completed

    if announce is not None:
        import importlib.util

        n = len(client.scheduler_info().get("workers", {}))
        plots = ("" if where != "local cluster" or importlib.util.find_spec("bokeh")
                 else " (its plots need bokeh)")
        announce(f"dask: {where}, {n} workers; dashboard: {client.dashboard_link}{plots}")
    run = uuid.uuid4().hex[:12]  # keys unique on a scheduler shared with other clients
    futures = [client.submit(task, p, *args, key=f"traceviz-rank-{run}-{i}", pure=False,
                             retries=1) for i, p in enumerate(paths)]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(paths)
    try:
        for done, f in enumerate(as_completed(futures), start=1):
            i = index[f.key]
            results[i] = _result(f, paths[i])
            if progress is not None:
                progress(done, len(paths))
    except BaseException:
        client.cancel(futures)
        raise
    return results


def _result(future: Any, path: str) -> Any:
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker:
        return FailedRank(path, "its Dask worker died on every try (the scheduler gave up: "
                          "KilledWorker)")
    except Exception as exc:  # the task raised on the worker (e.g. traceviz not installed)
        return FailedRank(path, " ".join(f"the Dask task failed: {type(exc).__name__}: {exc}"
                                         .split()))

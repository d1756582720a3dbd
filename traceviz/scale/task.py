"""One rank as one task: ``rank_task(path) -> RankResult | FailedRank``.

Runs wherever the rank is analysed (the parent for small sets, a pool worker, a Dask worker):
load the trace with the decode in-process and analyse it on one thread (``workers=1``: the rank
workers already use the cores), and keep only what the parent needs — the rank's
:class:`~traceviz.analyze.distributed.digest.RankDigest` and its single-trace JSON document,
already encoded. The trace and its event tables die with the task.

``path`` is a file path, or an fsspec URL (``s3://…``, ``gs://…``, ``file://…``) that the
machine running the task can reach: the file is then copied to a local temporary folder first
(same file name, so a ``rank<N>`` in it still names the rank) and reported under its URL.

An input error (missing, unreadable, corrupt, not a trace, too large) becomes a
:class:`~traceviz.analyze.distributed.model.FailedRank` with its one-line reason; a trace that
cannot tell its rank is a usage error for the whole set (``usage_error=True``: the parent
raises it, exit 2, as before).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from traceviz.analyze.distributed.digest import RankDigest
from traceviz.analyze.distributed.model import FailedRank
from traceviz.errors import TracevizError, UsageError, out_of_memory
from traceviz.trace.source import is_url

#: Bytes copied per read from an fsspec file.
COPY_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class RankResult:
    """One analysed rank: its digest and its encoded single-trace document
    (``{"rank": r, **traceviz report TRACE --format json}``, compact msgspec JSON)."""

    path: str
    digest: RankDigest
    document: bytes


@dataclass(frozen=True)
class RankRefused:
    """A trace that makes the whole rank set unusable (it cannot tell its rank)."""

    path: str
    message: str


def rank_task(path: str, max_memory_bytes: int | None = None
              ) -> RankResult | FailedRank | RankRefused:
    """Load, analyse and digest one rank trace (see the module docstring)."""
    local = path
    try:
        if is_url(path):
            with tempfile.TemporaryDirectory(prefix="traceviz-rank-") as tmp:
                local = str(_fetch(path, Path(tmp)))
                return _analyze(local, path, max_memory_bytes)
        return _analyze(path, path, max_memory_bytes)
    except UsageError as exc:
        return RankRefused(path, str(exc))
    except TracevizError as exc:
        return FailedRank(path, _reason(str(exc), (local, path)))
    except MemoryError as exc:
        return FailedRank(path, out_of_memory(exc))
    except OSError as exc:  # fsspec: unreachable URL, permissions, …
        return FailedRank(path, _one_line(f"cannot read: {exc}"))


def _analyze(local: str, shown: str, max_memory_bytes: int | None) -> RankResult:
    import msgspec

    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.distributed.digest import rank_digest
    from traceviz.report.jsonout import analysis_document
    from traceviz.trace import load

    trace = load(local, None, max_memory_bytes, workers=1)
    if shown != local:
        trace = dataclasses.replace(trace, meta=dataclasses.replace(trace.meta, path=shown))
    analysis = analyze(trace, workers=1)
    digest = rank_digest(trace, analysis)
    document = msgspec.json.encode({"rank": digest.info.rank,
                                    **analysis_document(trace, analysis)})
    return RankResult(shown, digest, document)


def _fetch(url: str, folder: Path) -> Path:
    """Copy ``url`` into ``folder`` under its own file name, through fsspec."""
    try:
        import fsspec
    except ImportError:
        raise TracevizError(f"{url}: reading URLs needs fsspec: pip install 'traceviz[dask]'"
                            ) from None
    local = folder / (url.rstrip("/").rsplit("/", 1)[-1] or "trace.json")
    try:
        with fsspec.open(url, "rb") as src, local.open("wb") as dst:
            shutil.copyfileobj(src, dst, COPY_BYTES)
    except FileNotFoundError:
        raise TracevizError(f"{url}: no such file") from None
    return local


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _reason(message: str, paths: tuple[str, ...]) -> str:
    """The error message as one line, without the leading ``PATH: `` (the failure names the
    path already)."""
    for p in paths:
        message = message.removeprefix(f"{p}: ")
    return _one_line(message)

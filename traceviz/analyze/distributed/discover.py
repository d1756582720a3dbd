"""Rank discovery: which rank each trace is, the world size and the process groups.

The rank comes from ``distributedInfo.rank``, else from ``rank<N>`` in the file name; the world
size and the groups from ``distributedInfo`` (``world_size``, ``pg_config``). Duplicate and
missing ranks become health warnings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceviz.analyze.model import HealthWarning
from traceviz.errors import UsageError
from traceviz.trace import Trace
from traceviz.vocab import RANK_IN_FILE_NAME


def rank_info(trace: Trace) -> tuple[int, str, int | None, str | None, dict[str, tuple[int, ...]]]:
    """``(rank, rank_source, world_size, hostname, groups)`` of one trace."""
    meta = trace.meta
    dist: dict[str, Any] = meta.distributed or {}
    if meta.rank is not None:
        rank, source = meta.rank, "distributedInfo"
    else:
        m = RANK_IN_FILE_NAME.search(Path(meta.path).name)
        if m is None:
            raise UsageError(
                f"{meta.path}: cannot tell its rank (no distributedInfo.rank and no 'rank<N>' "
                "in the file name)"
            )
        rank, source = int(m.group(1)), "file name"
    ws = dist.get("world_size")
    world = int(ws) if isinstance(ws, int) and not isinstance(ws, bool) else None
    stamp = meta.metadata.get("traceviz")
    host = stamp.get("hostname") if isinstance(stamp, dict) else None
    groups: dict[str, tuple[int, ...]] = {}
    for pg in dist.get("pg_config") or ():
        if isinstance(pg, dict) and isinstance(pg.get("ranks"), list):
            groups[str(pg.get("pg_name", ""))] = tuple(
                int(r) for r in pg["ranks"] if isinstance(r, int)
            )
    return rank, source, world, host if isinstance(host, str) else None, groups


def rank_health(ranks: list[int], paths: list[str], worlds: list[int | None]
                ) -> tuple[list[int], list[HealthWarning], int | None]:
    """Positions of the traces to keep (first trace of each rank, ordered by rank), warnings
    for duplicate / missing ranks and disagreeing world sizes, and the world size."""
    warnings: list[HealthWarning] = []
    first: dict[int, int] = {}
    for i, r in enumerate(ranks):
        if r in first:
            warnings.append(HealthWarning(
                "duplicate_rank",
                f"rank {r} appears twice ({paths[first[r]]} and {paths[i]}): only the first is "
                "used", 1))
        else:
            first[r] = i
    known = {w for w in worlds if w is not None}
    if len(known) > 1:
        warnings.append(HealthWarning(
            "world_size_mismatch",
            f"the traces disagree on the world size ({sorted(known)}): they may not be one run",
            len(known)))
    world = max(known) if known else None
    if world is not None:
        missing = sorted(set(range(world)) - set(first))
        if missing:
            warnings.append(HealthWarning(
                "missing_ranks",
                f"ranks {', '.join(map(str, missing))} of {world} have no trace: waits are "
                "relative to the loaded ranks only", len(missing)))
    keep = [first[r] for r in sorted(first)]
    return keep, warnings, world

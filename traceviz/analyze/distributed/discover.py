"""Rank discovery: which rank each trace is, the world size and the process groups.

The rank comes from ``distributedInfo.rank``, else from ``rank<N>`` in the file name; the world
size and the groups from ``distributedInfo`` (``world_size``, ``pg_config``), the GPU model from
``deviceProperties``. Duplicate and missing ranks become health warnings; disagreeing world
sizes or GPU models make the traces inconsistent as one run (``docs/metrics.md``, "Rank
traces", consistency).
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
            f"the traces disagree on the world size: {_values_by_rank(ranks, worlds)}",
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


def gpu_name(trace: Trace) -> str | None:
    """The ``deviceProperties`` name of the GPU the trace's activities ran on (the device with
    the most activities); with no activity, or a device not listed, the one name every listed
    device shares; else ``None`` (unknown)."""
    names = {d.id: d.name for d in trace.meta.devices}
    gpu = trace.gpu
    if len(gpu) and "device" in gpu:
        counts = gpu["device"].value_counts()
        if len(counts):
            top = int(counts.index[0])
            if top in names:
                return names[top]
    distinct = set(names.values())
    return distinct.pop() if len(distinct) == 1 else None


def device_health(ranks: list[int], gpus: list[str | None]) -> list[HealthWarning]:
    """``device_mismatch`` when the ranks whose GPU model is known name different models (a
    rank with an unknown model is not compared)."""
    known = {g for g in gpus if g is not None}
    if len(known) < 2:
        return []
    return [HealthWarning(
        "device_mismatch",
        f"the traces ran on different GPU models: {_values_by_rank(ranks, gpus)}",
        len(known))]


def _values_by_rank(ranks: list[int], values: list[Any]) -> str:
    """``8 (rank 3) vs 2 (ranks 1, 5)``: each known value with the ranks that report it, in
    order of first appearance by rank; at most 4 ranks listed per value."""
    by_value: dict[Any, list[int]] = {}
    for r, v in sorted(zip(ranks, values, strict=True), key=lambda rv: rv[0]):
        if v is not None:
            by_value.setdefault(v, []).append(r)
    parts = []
    for v, rs in by_value.items():
        shown = ", ".join(map(str, rs[:4])) + (f", … ({len(rs)} ranks)" if len(rs) > 4 else "")
        parts.append(f"{v} (rank{'s' if len(rs) > 1 else ''} {shown})")
    return " vs ".join(parts)

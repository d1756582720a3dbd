"""CUDA-graph replays: one row per graph launch call and the activities it replayed."""

from __future__ import annotations

import numpy as np

from traceviz.analyze.model import GraphReplay
from traceviz.analyze.trace.intervals import group_union
from traceviz.analyze.trace.links import Links
from traceviz.analyze.trace.steps import StepWindows
from traceviz.trace import Trace
from traceviz.vocab import Category, LaunchKind


def graph_replays(
    trace: Trace, links: Links, steps: StepWindows, launch_step: np.ndarray
) -> tuple[GraphReplay, ...]:
    """Rows for every graph launch call that owns at least one activity, in launch order."""
    rt, gpu = trace.runtime, trace.gpu
    kind = rt["kind"].to_numpy()
    graph_rows = np.flatnonzero(links.is_launch & (kind == LaunchKind.GRAPH))
    if len(graph_rows) == 0:
        return ()
    acts = np.flatnonzero(np.isin(links.launch_row, graph_rows))
    ts, end = gpu["ts_ns"].to_numpy()[acts], gpu["end_ns"].to_numpy()[acts]
    owner = links.launch_row[acts]
    order = np.lexsort((ts, owner))
    u = group_union(owner[order], ts[order], end[order])
    owners = owner[order][u.group_first_row]  # runtime rows, ascending
    is_kernel = gpu["cat"].to_numpy()[acts] == Category.KERNEL
    nodes = np.bincount(np.searchsorted(owners, owner), minlength=len(owners))
    kernels = np.bincount(np.searchsorted(owners, owner[is_kernel]), minlength=len(owners))
    names = rt["name"].astype(str).to_numpy()
    out = []
    for j, r in enumerate(owners):
        s = int(launch_step[r])
        out.append(
            GraphReplay(
                correlation=int(rt["correlation"].iat[r]),
                step=steps.names[s] if s >= 0 else None,
                launch_name=str(names[r]),
                nodes=int(nodes[j]),
                kernels=int(kernels[j]),
                launch_start_ns=int(rt["ts_ns"].iat[r]),
                launch_ns=int(rt["dur_ns"].iat[r]),
                first_start_ns=int(u.first_start_ns[j]),
                last_end_ns=int(u.last_end_ns[j]),
                busy_ns=int(u.busy_ns[j]),
            )
        )
    out.sort(key=lambda g: g.launch_start_ns)
    return tuple(out)

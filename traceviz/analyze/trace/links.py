"""Link GPU activities to the CPU calls that launched them, by ``args.correlation``.

A *launch call* is a cuda_runtime / cuda_driver event whose correlation equals that of at least
one GPU activity (one call may own many activities: a ``cudaGraphLaunch`` owns every node of
its replay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.int_sets import distinct_with
from traceviz.trace import Trace
from traceviz.trace.decode import MISSING_ID


@dataclass(frozen=True)
class Links:
    """Per GPU row: the runtime row that launched it (-1: none). Per runtime row: how many
    activities it launched (> 0 makes it a launch call)."""

    launch_row: np.ndarray  # int64, len(trace.gpu)
    activity_count: np.ndarray  # int64, len(trace.runtime)

    @property
    def is_launch(self) -> np.ndarray:
        return self.activity_count > 0


def link_launches(trace: Trace) -> Links:
    """Join activities to runtime calls on correlation (first call wins if ids repeat)."""
    rt_corr = trace.runtime["correlation"].to_numpy()
    g_corr = trace.gpu["correlation"].to_numpy()
    rows = np.flatnonzero(rt_corr != MISSING_ID)
    keys = rt_corr[rows]
    uniq, first = distinct_with(keys, index=True)  # first occurrence in ts order
    owner = rows[first]
    launch_row = np.full(len(g_corr), -1, np.int64)
    if len(uniq) and len(g_corr):
        pos = np.searchsorted(uniq, g_corr)
        pos_c = np.minimum(pos, len(uniq) - 1)
        hit = (g_corr != MISSING_ID) & (uniq[pos_c] == g_corr)
        launch_row[hit] = owner[pos_c[hit]]
    counts = np.bincount(launch_row[launch_row >= 0], minlength=len(rt_corr)).astype(np.int64)
    return Links(launch_row=launch_row, activity_count=counts)

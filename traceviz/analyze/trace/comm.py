"""Communication against compute on one trace's GPU (``comm_split(trace, activity_step, n)``).

A GPU activity is **communication** when it is a collective-library kernel
(:data:`traceviz.vocab.COLLECTIVE_KERNEL`: NCCL / RCCL collectives and send/recv), and
**compute** otherwise (every other kernel, memcpy and memset). Per step (the activities
attributed to it, as for GPU busy) and over the whole trace (every activity), all unions over
every stream, integer ns:

* ``compute_busy`` = ``|C|``, the union of the compute activities;
* ``comm`` = ``|M|``, the union of the communication kernels (the whole kernel: on one rank's
  trace a collective's wait for its peers cannot be told from its transfer);
* ``overlap`` = ``|C ∩ M|`` = ``|C| + |M| − |C ∪ M|``: communication hidden behind compute;
* ``exposed_comm`` = ``|M \\ C|`` = ``comm − overlap``: time the GPU did communication and
  nothing else;
* ``comm_kernels``: how many communication kernels the step has (a count, not a union), so
  that a kernel count can leave them out: **compute kernels** of a step = its kernels −
  ``comm_kernels`` (what fusion counts, ``docs/comparison.md``).

Per step, and **overall**: the same over every activity attributed to some step, as one set
(not the sum of the steps: step periods may overlap).

So ``gpu_busy = |C ∪ M| = compute_busy + exposed_comm`` for every step. Intervals are closed
at neither end for length purposes: two intervals that touch (``end == start``) overlap for
0 ns. ``overlap_share`` = ``overlap / comm``.

HTA's ``get_comm_comp_overlap`` is ``|C_k ∩ M| / |M|`` over the kernels launched in its
profiler steps, where ``C_k`` is the union of compute **kernels** only (its memory kernels —
memcpy, memset — are neither compute nor communication); :attr:`CommSplit.kernel_overlap_ns`
is that numerator over the attributed activities, so both figures are shown side by side
(``docs/metrics.md``, "Communication").

The result is ``None`` for a trace without communication kernels: nothing about it changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.columnar import RowTable
from traceviz.analyze.trace.intervals import group_union, union_length
from traceviz.trace import Trace
from traceviz.vocab import COLLECTIVE_KERNEL, Category


@dataclass(frozen=True)
class CommStep:
    """Communication and compute of one step (``index``: its position in ``Analysis.steps``)."""

    index: int
    compute_busy_ns: int  # |C|: union of the step's non-communication activities
    comm_ns: int  # |M|: union of the step's communication kernels
    overlap_ns: int  # |C ∩ M|
    comm_kernels: int = 0  # communication kernels attributed to the step (a count)

    @property
    def exposed_comm_ns(self) -> int:
        """``|M \\ C|``: communication not hidden behind compute."""
        return self.comm_ns - self.overlap_ns

    @property
    def overlap_share(self) -> float | None:
        """``overlap / comm``; ``None`` when the step has no communication."""
        return self.overlap_ns / self.comm_ns if self.comm_ns else None


class CommStepTable(RowTable[CommStep], row=CommStep):
    """Every step's :class:`CommStep`, as columns (``table[i]`` builds step ``i``'s row)."""

    def values(self, name: str) -> np.ndarray:
        """int64 per step: field ``name``, or the ``exposed_comm_ns`` property."""
        if name == "exposed_comm_ns":
            return self.column("comm_ns") - self.column("overlap_ns")
        return self.column(name)


@dataclass(frozen=True)
class CommSplit:
    """GPU busy split into compute and communication (definitions: module docstring)."""

    kernels: int  # communication kernels in the trace (attributed to a step or not)
    steps: CommStepTable  # one row per step of the analysis, same order
    # Overall: every activity attributed to a step, as one set.
    compute_busy_ns: int
    comm_ns: int
    overlap_ns: int
    kernel_overlap_ns: int  # |C_k ∩ M|, C_k: compute kernels only (HTA's numerator)

    @property
    def exposed_comm_ns(self) -> int:
        return self.comm_ns - self.overlap_ns

    @property
    def overlap_share(self) -> float | None:
        """Overall ``overlap / comm``; ``None`` when no communication is attributed."""
        return self.overlap_ns / self.comm_ns if self.comm_ns else None

    @property
    def hta_overlap_share(self) -> float | None:
        """HTA's definition, ``|C_k ∩ M| / |M|`` (overall)."""
        return self.kernel_overlap_ns / self.comm_ns if self.comm_ns else None

    def sums(self) -> CommStep:
        """Sums over the steps (``index`` -1)."""
        def total(name: str) -> int:
            return int(self.steps.column(name).sum())

        return CommStep(-1, total("compute_busy_ns"), total("comm_ns"), total("overlap_ns"),
                        total("comm_kernels"))

    def median_exposed_comm_ns(self, steps: np.ndarray) -> float:
        """Median exposed communication per step over the steps selected by the bool mask
        ``steps`` (one per step; e.g. the steps with GPU work); 0.0 when none is selected."""
        values = self.steps.values("exposed_comm_ns")[steps]
        return float(np.median(values)) if len(values) else 0.0


def comm_rows(trace: Trace) -> np.ndarray:
    """Bool per ``trace.gpu`` row: a communication kernel."""
    gpu = trace.gpu
    if not len(gpu):
        return np.zeros(0, bool)
    names = gpu["name"].cat.categories
    lut = np.fromiter((bool(COLLECTIVE_KERNEL.match(str(n))) for n in names), bool,
                      count=len(names))
    lut = np.append(lut, False)  # code -1 (no name)
    return lut[gpu["name"].cat.codes.to_numpy()] & (gpu["cat"].to_numpy() == Category.KERNEL)


def _union_per_step(step: np.ndarray, ts: np.ndarray, end: np.ndarray, n: int) -> np.ndarray:
    """Length of the union of each step's intervals (index 0..n-1; rows with step < 0 left
    out)."""
    out = np.zeros(n, np.int64)
    keep = step >= 0
    step, ts, end = step[keep], ts[keep], end[keep]
    if not len(ts):
        return out
    order = np.lexsort((ts, step))
    u = group_union(step[order], ts[order], end[order])
    out[step[order][u.group_first_row]] = u.busy_ns
    return out


def _overlap(ts_a: np.ndarray, end_a: np.ndarray, ts_b: np.ndarray, end_b: np.ndarray) -> int:
    """``|A ∩ B|`` of two interval sets, as ``|A| + |B| − |A ∪ B|``."""
    return (union_length(ts_a, end_a) + union_length(ts_b, end_b)
            - union_length(np.concatenate([ts_a, ts_b]), np.concatenate([end_a, end_b])))


def comm_split(trace: Trace, activity_step: np.ndarray, n_steps: int) -> CommSplit | None:
    """The compute / communication split of ``trace`` (``activity_step``: step index per GPU
    row, -1 unattributed); ``None`` when the trace has no communication kernel."""
    is_comm = comm_rows(trace)
    if not is_comm.any():
        return None
    gpu = trace.gpu
    ts, end = gpu["ts_ns"].to_numpy(), gpu["end_ns"].to_numpy()
    step = activity_step.astype(np.int64)
    comp_step = np.where(is_comm, -1, step)
    comm_step = np.where(is_comm, step, -1)
    compute = _union_per_step(comp_step, ts, end, n_steps)
    comm = _union_per_step(comm_step, ts, end, n_steps)
    both = _union_per_step(step, ts, end, n_steps)
    counted = comm_step[comm_step >= 0]
    comm_kernels = np.bincount(counted, minlength=n_steps)[:n_steps].astype(np.int64)
    overlap = compute + comm - both
    attributed = step >= 0
    comp = attributed & ~is_comm
    comm_any = attributed & is_comm
    comp_k = comp & (gpu["cat"].to_numpy() == Category.KERNEL)
    return CommSplit(
        kernels=int(np.count_nonzero(is_comm)),
        steps=CommStepTable({"index": np.arange(n_steps, dtype=np.int64),
                             "compute_busy_ns": compute, "comm_ns": comm,
                             "overlap_ns": overlap, "comm_kernels": comm_kernels}),
        compute_busy_ns=union_length(ts[comp], end[comp]),
        comm_ns=union_length(ts[comm_any], end[comm_any]),
        overlap_ns=_overlap(ts[comp], end[comp], ts[comm_any], end[comm_any]),
        kernel_overlap_ns=_overlap(ts[comp_k], end[comp_k], ts[comm_any], end[comm_any]),
    )

"""The entry point of host-wait attribution: :func:`plan_host_wait` gathers each CPU thread's
events and cuts them into blocks; :class:`HostWaitPlan` attributes a block and merges the
blocks' sums into the result."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from traceviz.analyze.host_wait.block_attribution import _BlockSums, _Work
from traceviz.analyze.host_wait.blocks import _Block, _block_count, _blocks, _Tails, _Windows
from traceviz.analyze.host_wait.events import _events, _thread_ids
from traceviz.analyze.host_wait.merge import _merge
from traceviz.analyze.host_wait.result import HostWaitSources
from traceviz.analyze.model import GapTable
from traceviz.analyze.trace.links import Links
from traceviz.errors import StageMemoryError
from traceviz.int_sets import distinct
from traceviz.trace import Trace
from traceviz.trace.parallel import thread_map
from traceviz.vocab import COMPILED_FX_GRAPH_PREFIX, COMPILED_REGION, GapClass


@dataclass(frozen=True)
class HostWaitPlan:
    """The attribution cut into blocks (:func:`_blocks`): ``attribute(i)`` nests, attributes
    and sums block ``i``, on any thread or forked process; ``merge`` joins the blocks' sums
    (all of them, in block order) into the result."""

    blocks: list[_Block]
    work: _Work
    step_names: tuple[str, ...]
    step_total: np.ndarray
    has_stacks: bool

    def attribute(self, i: int) -> _BlockSums:
        with _stage(f"attributing host wait (block {i + 1} of {len(self.blocks)})"):
            return self.work.attribute(self.blocks[i])

    def merge(self, done: list[_BlockSums]) -> HostWaitSources:
        return self.merger()(done)

    def merger(self) -> Callable[[list[_BlockSums]], HostWaitSources]:
        """:meth:`merge` without the plan: holding it does not keep the events and the
        blocks alive (the caller frees them before the merge)."""
        return partial(_staged_merge, g_step=self.work.gap_step, step_names=self.step_names,
                       step_total=self.step_total, has_stacks=self.has_stacks)


@contextmanager
def _stage(what: str) -> Iterator[None]:
    """Name what was being done when memory runs out (:class:`StageMemoryError`); a stage
    named further in is kept."""
    try:
        yield
    except StageMemoryError:
        raise
    except MemoryError as exc:
        raise StageMemoryError(what) from exc


def _staged_merge(done: list[_BlockSums], **kwargs: Any) -> HostWaitSources:
    with _stage("merging the host-wait sources"):
        return _merge(done, **kwargs)


def plan_host_wait(trace: Trace, links: Links, gaps: GapTable, step_names: tuple[str, ...],
                   threads: int = 1) -> HostWaitPlan:
    """Plan the attribution of every ``host_wait`` / ``sync_wait`` gap to the CPU events open
    on the thread of the launch call that ends it (definitions in the package docstring):
    gather each CPU thread's events (on ``threads`` threads) and cut them into blocks
    (:func:`_block_count`: at most about :data:`MAX_BLOCK_EVENTS` events each, and about
    :data:`BLOCKS_PER_THREAD` per worker on several). The result,
    ``plan.merge([plan.attribute(i) for i in range(len(plan.blocks))])``, does not depend on
    ``threads`` nor on where the blocks ran."""
    rt = trace.runtime
    n_steps = len(step_names)
    has_stacks = trace.meta.category_counts.get("python_function", 0) > 0
    rows = np.flatnonzero((gaps.cls == GapClass.HOST_WAIT) | (gaps.cls == GapClass.SYNC_WAIT))
    step_total = np.zeros(n_steps, np.int64)
    np.add.at(step_total, gaps.step[rows].astype(np.int64), gaps.duration_ns[rows])
    launch = links.launch_row[gaps.activity[rows]]
    # Both classes require a launch call at or after the gap start; keep the guard explicit.
    assert (launch >= 0).all(), "host_wait/sync_wait gap without a launch call"
    gs, ge = gaps.start_ns[rows], gaps.end_ns[rows]
    ls = rt["ts_ns"].to_numpy()[launch]
    split = np.clip(ls, gs, ge)  # end of the waiting window, start of the launch tail
    pid, tid = rt["pid"].to_numpy()[launch], rt["tid"].to_numpy()[launch]
    pairs = [(p, t) for p in distinct(pid).tolist() for t in distinct(tid[pid == p]).tolist()]
    thread_of = {pt: k for k, pt in enumerate(pairs)}
    g_thread = _thread_ids(pid, tid, thread_of)
    ev = _events(trace, thread_of, threads)
    names = [str(n) for n in trace.names]

    region_lut, fx_lut = np.zeros(len(names), bool), np.zeros(len(names), bool)
    used = np.zeros(len(names), bool)
    used[ev.name] = True
    for c in np.flatnonzero(used).tolist():
        region_lut[c] = COMPILED_REGION.match(names[c]) is not None
        fx_lut[c] = names[c].startswith(COMPILED_FX_GRAPH_PREFIX)

    def cut(k: int) -> tuple[list[_Block], np.ndarray]:
        """CPU thread ``k``'s blocks, and its gaps with time in more than one of them."""
        gi = np.flatnonzero(g_thread == k)
        win, tail = split[gi] > gs[gi], ge[gi] > split[gi]
        lo, hi = int(ev.offsets[k]), int(ev.offsets[k + 1])
        return _blocks(ev, lo, hi, _block_count(hi - lo, threads),
                       _Windows(gi[win], gs[gi][win], split[gi][win]),
                       _Tails(gi[tail], ls[gi][tail], ge[gi][tail] - split[gi][tail]))

    blocks: list[_Block] = []
    shared = np.zeros(len(rows), bool)  # gaps with time in more than one block
    for got, across in thread_map(cut, range(len(pairs)), threads):
        blocks += got
        shared[across] = True
    regions = bool(region_lut.any() or fx_lut.any())
    work = _Work(ev, names, region_lut if regions else None, fx_lut if regions else None,
                 gaps.step[rows].astype(np.int64), shared)
    return HostWaitPlan(blocks, work, step_names, step_total, has_stacks)

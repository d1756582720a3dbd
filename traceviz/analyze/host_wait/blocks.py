"""Planning the blocks of host-wait attribution: a thread's events cut where none of them is
open (:func:`_blocks`), how many blocks (:func:`_block_count`), and each block's parts of the
waiting windows and its launch tails."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.events import _Events
from traceviz.analyze.host_wait.nesting import _MIN_T
from traceviz.int_sets import distinct

_MAX_T = np.iinfo(np.int64).max


#: A thread's events are cut into blocks of at least this many events for the analysis threads.
MIN_BLOCK_EVENTS = 32_768
#: ... and into at most this many blocks per analysis thread (load balance across threads).
BLOCKS_PER_THREAD = 4
#: Whatever the thread count, a block holds at most about this many events: a block's working
#: arrays are several times its events, so this bounds the attribution's peak memory (on the
#: 10⁶-step benchmark trace, one block of its 2·10⁶ events took 335 MiB beyond what stayed).
MAX_BLOCK_EVENTS = 1 << 18


def _block_count(events: int, threads: int) -> int:
    """Blocks to cut a thread's ``events`` into: enough for blocks of at most
    :data:`MAX_BLOCK_EVENTS`, and on several analysis threads, for load balance, up to
    :data:`BLOCKS_PER_THREAD` per thread (of at least :data:`MIN_BLOCK_EVENTS`)."""
    by_size = -(-events // MAX_BLOCK_EVENTS)
    if threads <= 1:
        return max(1, by_size)
    return max(1, by_size, min(events // MIN_BLOCK_EVENTS, BLOCKS_PER_THREAD * threads))


@dataclass(frozen=True)
class _Windows:
    """Waiting windows ``[a, b)`` (``b > a``) and the gap (row of the gap selection) of each."""

    gap: np.ndarray
    a: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class _Tails:
    """Launch tails: the gap of each, the instant ``t`` (the launch call's start) whose
    innermost open event gets the tail, and its length in ns."""

    gap: np.ndarray
    t: np.ndarray
    ns: np.ndarray


@dataclass(frozen=True)
class _Block:
    """Events of one thread (global indices) that no event of that thread outside them
    overlaps, with the windows' parts and the tails inside the block's time range."""

    events: np.ndarray
    windows: _Windows
    tails: _Tails


def _blocks(ev: _Events, lo: int, hi: int, count: int, windows: _Windows, tails: _Tails
            ) -> tuple[list[_Block], np.ndarray]:
    """Cut the thread's events ``[lo, hi)`` into about ``count`` blocks of similar size, at
    instants ``c`` where none of them is open (each one ends at or before ``c`` or starts at
    or after it): sorted by start, position ``i`` is such a cut when every event before it has
    ended by ``start[i]``. A block's time range is ``[c_j, c_j+1)`` (the first from −∞, the last
    to +∞); windows are cut at the ``c_j`` and tails go to the block holding their instant.

    Nothing open crosses a cut, so each event's parent, depth and enclosing region lie in its
    block, and each instant's innermost open event is found in the block holding it: the
    blocks' pieces are those of the whole thread, with a piece that crosses a cut in two parts
    of the same (gap, leaf), whose ns add up. Also returns the gaps (rows of the gap
    selection) with window parts or tails in more than one block, sorted."""
    n = hi - lo
    one = [_Block(np.arange(lo, hi), windows, tails)], np.zeros(0, np.int64)
    if count <= 1 or n < 2:
        return one
    start, end = ev.start[lo:hi], ev.end[lo:hi]
    order = np.argsort(start, kind="stable")
    s = start[order]
    reach = np.maximum.accumulate(end[order])
    ok = np.flatnonzero(reach[:-1] <= s[1:]) + 1
    want = np.searchsorted(ok, np.arange(1, count) * n // count)
    cuts = distinct(ok[want[want < len(ok)]])
    if len(cuts) == 0:
        return one
    at = s[cuts]  # c_1 … c_B-1
    # Window parts: window [a, b) spans the blocks of a (cuts <= a) to b - 1 (cuts < b).
    first = np.searchsorted(at, windows.a, side="right")
    count_w = np.searchsorted(at, windows.b, side="left") - first + 1
    w = np.repeat(np.arange(len(windows.a)), count_w)
    blk = first[w] + (np.arange(len(w)) - np.repeat(np.cumsum(count_w) - count_w, count_w))
    bounds = np.concatenate([[_MIN_T], at, [_MAX_T]])
    part_a = np.maximum(windows.a[w], bounds[blk])
    part_b = np.minimum(windows.b[w], bounds[blk + 1])
    p_of = np.argsort(blk, kind="stable")  # window parts by block
    p_at = np.searchsorted(blk[p_of], np.arange(len(cuts) + 2))
    t_blk = np.searchsorted(at, tails.t, side="right")
    t_of = np.argsort(t_blk, kind="stable")  # tails by block
    t_at = np.searchsorted(t_blk[t_of], np.arange(len(cuts) + 2))
    pos = np.concatenate([[0], cuts, [n]])
    n_blk = len(cuts) + 1
    in_blk = distinct(np.concatenate([windows.gap[w] * n_blk + blk, tails.gap * n_blk + t_blk]))
    g = in_blk // n_blk
    out = []
    for j in range(len(cuts) + 1):
        ps, ts = p_of[p_at[j] : p_at[j + 1]], t_of[t_at[j] : t_at[j + 1]]
        if len(ps) or len(ts):  # a block with neither gets no time
            out.append(_Block(
                lo + order[pos[j] : pos[j + 1]],
                _Windows(windows.gap[w[ps]], part_a[ps], part_b[ps]),
                _Tails(tails.gap[ts], tails.t[ts], tails.ns[ts])))
    return out, distinct(g[1:][g[1:] == g[:-1]])

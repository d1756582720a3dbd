"""One block's inclusive view without walking chains: per (step, label) the ns and the gaps
in which the label is anywhere on the chain, in O((events + pieces) log n) whatever the
nesting depth (a chain is never expanded, so depth × gaps never appears).

The nesting is laminar (:func:`~.nesting._nest`), so the chain of a piece on elementary
interval ``k`` is exactly the events open on ``k``, an event being open on the intervals
``[opens, closes)``. A label is on the chain at ``k`` iff one of its **top events** is open
there: an event of that label with no ancestor of the same label. A label's top events are
disjoint, so (in ``k`` order) they form a sorted list of disjoint ranges, and:

* its inclusive ns in a step = the ns of the step's pieces inside those ranges (prefix sums of
  the pieces sorted by ``k``);
* a gap's pieces cover consecutive intervals ``[k0, k1]`` (its window, then its launch tail),
  so a gap that meets top events ``i`` and ``j > i`` of a label meets every one between: the
  gaps of a step meeting the label = Σ (gaps meeting top event i) − Σ (gaps meeting top events
  i and i + 1). The gaps of one step are disjoint, so sorted by ``k0`` their ``k1`` ascend too,
  and each count is a difference of two prefix lengths.

Gaps with time in other blocks are counted in the merge, from distinct (gap, label) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.analyze.host_wait.grouping import _group_sum
from traceviz.int_sets import distinct, distinct_with


@dataclass(frozen=True)
class _Pieces:
    """A block's pieces sorted by (``k``, ``step``): elementary interval, gap, step, ns."""

    k: np.ndarray
    gap: np.ndarray
    step: np.ndarray
    ns: np.ndarray


def _top_events(nodes: np.ndarray, label: np.ndarray, opens: np.ndarray, closes: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The top events among ``nodes`` (sorted positions, closed under parents), sorted by
    (label, position), and whether each is followed by another top event of its label. In
    position order, an event has an ancestor of its label iff an earlier event of that label
    is still open where it opens (laminar: earlier events that are not ancestors closed)."""
    lab = label[nodes]
    o = np.lexsort((nodes, lab))
    q, lab = nodes[o], lab[o]
    if len(q) == 0:
        return q, np.zeros(0, bool)
    span = int(closes.max()) + 1
    reach = np.maximum.accumulate(lab * span + closes[q]) - lab * span  # within the label
    new = np.ones(len(q), bool)
    new[1:] = lab[1:] != lab[:-1]
    before = np.where(new, -1, np.roll(reach, 1))
    top = before <= opens[q]
    q, lab = q[top], lab[top]
    followed = np.zeros(len(q), bool)
    followed[:-1] = lab[1:] == lab[:-1]
    return q, followed


def _runs_within(lo: np.ndarray, hi: np.ndarray, k: np.ndarray, group: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For ranges ``[lo, hi)`` of ``k`` and items sorted by (``k``, ``group``): each run of
    equal ``group`` among the items in each range, as (range index, group, item range
    ``[a, b)``). A range meets one run per change of group inside it."""
    i0 = np.searchsorted(k, lo, side="left")
    i1 = np.searchsorted(k, hi, side="left")
    has = np.flatnonzero(i1 > i0)
    run = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]])) if len(k) else (
        np.zeros(0, np.int64))
    run_end = np.append(run[1:], len(k))
    r0 = np.searchsorted(run, i0[has], side="right") - 1
    r1 = np.searchsorted(run, i1[has] - 1, side="right") - 1
    count = r1 - r0 + 1
    at = np.repeat(np.arange(len(has)), count)
    r = r0[at] + (np.arange(len(at)) - np.repeat(np.cumsum(count) - count, count))
    which = has[at]
    return (which, group[run[r]], np.maximum(i0[which], run[r]),
            np.minimum(i1[which], run_end[r]))


def _inclusive(p: _Pieces, top: np.ndarray, followed: np.ndarray, top_label: np.ndarray,
               opens: np.ndarray, closes: np.ndarray, own: np.ndarray, n_lab: int
               ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray],
                          np.ndarray]:
    """From the pieces and the top events (``top``, with ``followed`` and ``top_label``, of
    :func:`_top_events`): (``step * n_lab + label`` keys and inclusive ns; the same keys and
    the signed counts of gaps not in ``own`` left out, to be summed; distinct
    ``gap * n_lab + label`` of the pieces whose gap is not ``own``)."""
    lo, hi = opens[top], closes[top]
    q, step, a, b = _runs_within(lo, hi, p.k, p.step)
    cum = np.concatenate([[0], np.cumsum(p.ns)])
    ns = _group_sum(step * n_lab + top_label[q], cum[b] - cum[a])

    # Own gaps: the intervals each covers, sorted per step by first interval.
    mine = own[p.gap]
    g_of, inv = distinct_with(p.gap[mine], inverse=True)
    k0 = np.full(len(g_of), np.iinfo(np.int64).max)
    k1 = np.full(len(g_of), -1)
    np.minimum.at(k0, inv, p.k[mine])
    np.maximum.at(k1, inv, p.k[mine])
    g_step = np.zeros(len(g_of), np.int64)
    g_step[inv] = p.step[mine]
    width = int(closes.max()) + 1 if len(closes) else 1
    first = np.sort(g_step * width + k0, kind="stable")
    last = np.sort(g_step * width + k1, kind="stable")
    # Own gaps of the steps before each step (from the block's first step on): where a step's
    # keys start in ``first`` and in ``last`` alike.
    step0 = int(g_step.min()) if len(g_step) else 0
    per_step = np.bincount(g_step - step0)
    before_step = np.concatenate([[0], np.cumsum(per_step)])

    def below(keys: np.ndarray, s: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Own gaps of step ``s`` whose key part is below ``x``."""
        return (np.searchsorted(keys, s * width + x, side="left")
                - before_step[np.clip(s - step0, 0, len(per_step))])

    n_step = int(step.max()) + 1 if len(step) else 1
    pairs = distinct(q * n_step + step)  # a step can meet a top event in several runs
    q, step = pairs // n_step, pairs % n_step
    meet = below(first, step, hi[q]) - below(last, step, lo[q])
    nxt = followed[q]
    q2, step2 = q[nxt], step[nxt]
    both = below(first, step2, hi[q2])
    both -= np.minimum(both, below(last, step2, lo[q2 + 1]))
    counts = _group_sum(np.concatenate([step * n_lab + top_label[q],
                                        step2 * n_lab + top_label[q2]]),
                        np.concatenate([meet, -both]))

    # Shared gaps: the distinct (gap, label) pairs of their pieces' top events.
    shared = np.flatnonzero(~mine)
    o = np.lexsort((p.gap[shared], p.k[shared]))
    sk, sg = p.k[shared][o], p.gap[shared][o]
    sq, sgap, _, _ = _runs_within(lo, hi, sk, sg)
    return ns, counts, distinct(sgap * n_lab + top_label[sq])

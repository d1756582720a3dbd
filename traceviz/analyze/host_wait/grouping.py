"""Integer grouping kernels of host-wait attribution: distinct pairs, exact int64 sums per
key (a key-indexed table when the key range is small, else a sort), gap counts per (step,
source)."""

from __future__ import annotations

import numpy as np

from traceviz.int_sets import distinct_with, run_starts


def _unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (a, b) pairs of int64 ≥ -1, sorted by a then b, and the inverse index; one
    1-D integer key (``np.unique(axis=...)`` sorts structured rows, far slower), marked in a
    table when its range is small (:func:`_dense`), else sorted."""
    m = int(b.max()) + 2 if len(b) else 1
    key = (a + 1) * m + (b + 1)
    if _dense(key):
        present = np.zeros(int(key.max()) + 1, bool)
        present[key] = True
        uniq = np.flatnonzero(present)
        return uniq // m - 1, uniq % m - 1, (np.cumsum(present) - 1)[key]
    uniq, inv = distinct_with(key, inverse=True)  # inputs come in runs: a stable sort
    return uniq // m - 1, uniq % m - 1, inv


#: Keys ``0 ≤ key < 2 × count + DENSE_SLACK`` are handled with a table indexed by key.
DENSE_SLACK = 1 << 16


def _dense(key: np.ndarray) -> bool:
    """Whether the non-negative int64 ``key`` has a range small enough for a key-indexed
    table (no sort): below ``2 × len(key) + DENSE_SLACK``."""
    return len(key) > 0 and int(key.min()) >= 0 and int(key.max()) < 2 * len(key) + DENSE_SLACK


def _group_sum(key: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (sorted) and the exact int64 sum of ``values`` per key (a key-indexed
    table when the range is small, :func:`_dense`; else a sort)."""
    if _dense(key):
        span = int(key.max()) + 1
        sums = np.zeros(span, np.int64)
        np.add.at(sums, key, values)
        present = np.zeros(span, bool)
        present[key] = True
        distinct = np.flatnonzero(present)
        return distinct, sums[distinct]
    o = np.argsort(key, kind="stable")  # keys come in runs: the stable sort is the fastest
    k = key[o]
    first = run_starts(k)
    sums = np.add.reduceat(values[o], first) if len(k) else np.zeros(0, np.int64)
    return k[first], sums


def _step_gap_counts(gap_src: np.ndarray, gap_step: np.ndarray, n_src: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """From the distinct ``gap * n_src + source`` keys: (key = step * n_src + source, sorted;
    number of gaps of that step in which the source got time)."""
    k = np.sort(gap_step[gap_src // n_src] * n_src + gap_src % n_src, kind="stable")
    first = run_starts(k)
    return k[first], np.diff(np.append(first, len(k)))

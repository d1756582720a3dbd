"""The per-thread sweep (nesting + elementary intervals) against a brute-force per-ns answer
on random properly nested events, including shared starts, shared ends and touching events."""

from __future__ import annotations

import numpy as np
import pytest

from traceviz.analyze.host_wait.nesting import _at, _nest, _pieces


def nested_events(rng: np.random.Generator, lo: int, hi: int, depth: int,
                  out: list[tuple[int, int]]) -> None:
    """Random children inside [lo, hi): touching siblings and shared edges on purpose."""
    t = lo
    while t < hi and depth > 0:
        if rng.random() < 0.3:
            t += int(rng.integers(0, 4))  # untraced stretch (0: touching)
            continue
        length = int(rng.integers(1, max(2, (hi - lo) // 2 + 1)))
        end = min(hi, t + length)
        if end <= t:
            break
        out.append((t, end))
        nested_events(rng, t, end, depth - 1, out)
        t = end


def brute_innermost(events: list[tuple[int, int]], t: int) -> int:
    """Index (into ``events``) of the innermost event open at t: latest start, then shortest;
    equal spans: the later one in input order (the sweep's tie rule), -1 if none."""
    best, key = -1, None
    for i, (s, e) in enumerate(events):
        if s <= t < e:
            k = (s, -e, i)
            if key is None or k > key:
                best, key = i, k
    return best


@pytest.mark.parametrize("seed", range(12))
def test_sweep_matches_brute_force_innermost_at_every_ns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    events: list[tuple[int, int]] = []
    nested_events(rng, 0, 200, 6, events)
    order = rng.permutation(len(events))  # the sweep must not rely on input order
    events = [events[i] for i in order]
    start = np.array([s for s, _ in events], np.int64)
    end = np.array([e for _, e in events], np.int64)
    nest = _nest(start, end, np.zeros(len(events), np.int8))
    assert nest.bad == 0
    # Every window [a, b) with 0 <= a < b <= 210 on a coarse grid, plus instants.
    grid = np.arange(0, 211, 7, dtype=np.int64)
    a, b = np.meshgrid(grid, grid, indexing="ij")
    sel = a < b
    a, b = a[sel], b[sel]
    w, k, ns = _pieces(nest, a, b)
    inner = nest.inner[k]
    assert (np.bincount(w, weights=ns, minlength=len(a)) == b - a).all()  # exact tiling
    got = np.zeros((len(a), len(events) + 1), np.int64)
    np.add.at(got, (w, np.where(inner >= 0, nest.order[np.maximum(inner, 0)], len(events))), ns)
    want = np.zeros_like(got)
    for t in range(0, 211):
        i = brute_innermost(events, t)
        col = i if i >= 0 else len(events)
        want[(a <= t) & (t < b), col] += 1
    # Equal spans are interchangeable: compare by (start, end) span, not by index.
    span = [(s, e) for s, e in events] + [(-1, -1)]
    def by_span(m: np.ndarray) -> list[dict[tuple[int, int], int]]:
        out = []
        for row in m:
            d: dict[tuple[int, int], int] = {}
            for j in np.flatnonzero(row):
                d[span[j]] = d.get(span[j], 0) + int(row[j])
            out.append(d)
        return out
    assert by_span(got) == by_span(want)
    # Instants: the innermost open at t (events starting at t are open).
    ts = np.arange(0, 211, dtype=np.int64)
    at = nest.inner[_at(nest, ts)]
    at_span = [span[nest.order[p]] if p >= 0 else (-1, -1) for p in at]
    assert at_span == [span[brute_innermost(events, int(t))] for t in ts]


@pytest.mark.parametrize("seed", range(6))
def test_parents_contain_children_and_depth_counts_ancestors(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    events: list[tuple[int, int]] = []
    nested_events(rng, 0, 500, 8, events)
    start = np.array([s for s, _ in events], np.int64)
    end = np.array([e for _, e in events], np.int64)
    nest = _nest(start, end, np.zeros(len(events), np.int8))
    s, e = start[nest.order], end[nest.order]
    for i in range(len(events)):
        p = nest.parent[i]
        containing = [j for j in range(len(events)) if j != i and s[j] <= s[i] and e[i] <= e[j]
                      and (s[j], -e[j], j) < (s[i], -e[i], i)]
        assert nest.depth[i] == len(containing)
        if p >= 0:
            assert s[p] <= s[i] and e[i] <= e[p] and nest.depth[p] == nest.depth[i] - 1
        else:
            assert not containing

"""The per-rank digest: what a worker sends back is enough for the cross-rank analysis.

Pinned on hand-built intervals (integer ns): merging per step (touching intervals merge),
clipping compute to the collective windows (equal endpoints give nothing), and exposed comm
computed from the clipped compute equal to the definition on the full compute.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd

import traceviz
from tests.test_ranks_handbuilt import rank_trace
from traceviz.analyze.distributed import analyze_digests, rank_digest
from traceviz.analyze.distributed.digest import Intervals, clip_to_windows, merged
from traceviz.analyze.distributed.metrics import exposed_by_step, union_by_step


def _iv(rows: list[tuple[int, int, int]]) -> Intervals:
    a = np.array(rows, np.int64).reshape(-1, 3)
    return Intervals(a[:, 0], a[:, 1], a[:, 2])


def _rows(iv: Intervals) -> list[tuple[int, int, int]]:
    return list(zip(iv.step.tolist(), iv.ts_ns.tolist(), iv.end_ns.tolist(), strict=True))


def test_merged_joins_overlapping_and_touching_intervals_per_step() -> None:
    step = np.array([1, 1, 1, 1, 2, 2])
    ts = np.array([30, 0, 10, 50, 0, 5])
    end = np.array([40, 10, 20, 60, 3, 8])
    # step 1: [0,10] touches [10,20] -> [0,20]; [30,40]; [50,60]. step 2: [0,3], [5,8]
    assert _rows(merged(step, ts, end)) == [(1, 0, 20), (1, 30, 40), (1, 50, 60),
                                            (2, 0, 3), (2, 5, 8)]


def test_merged_keeps_an_interval_inside_another_whole() -> None:
    assert _rows(merged(np.array([1, 1]), np.array([0, 5]), np.array([100, 10]))) == [
        (1, 0, 100)]


def test_clip_keeps_only_the_parts_inside_the_windows_of_the_same_step() -> None:
    compute = _iv([(1, 0, 20), (1, 30, 40), (1, 50, 60), (2, 0, 100)])
    windows = _iv([(1, 15, 35), (1, 60, 70), (3, 0, 100)])
    # [0,20]∩[15,35] = [15,20]; [30,40]∩[15,35] = [30,35]; [50,60] only touches [60,70]: nothing;
    # step 2 has no window, step 3 no compute
    assert _rows(clip_to_windows(compute, windows)) == [(1, 15, 20), (1, 30, 35)]


def test_clip_of_equal_endpoints_is_empty_and_of_equal_intervals_is_the_interval() -> None:
    assert _rows(clip_to_windows(_iv([(1, 0, 10)]), _iv([(1, 10, 20)]))) == []
    assert _rows(clip_to_windows(_iv([(1, 10, 20)]), _iv([(1, 0, 10)]))) == []
    assert _rows(clip_to_windows(_iv([(1, 5, 9)]), _iv([(1, 5, 9)]))) == [(1, 5, 9)]
    assert _rows(clip_to_windows(_iv([]), _iv([(1, 5, 9)]))) == []


def test_exposed_comm_from_clipped_compute_equals_the_definition_on_all_compute() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        c_step = rng.integers(1, 4, n)
        c_ts = rng.integers(0, 100, n)
        c_end = c_ts + rng.integers(0, 30, n)
        k = int(rng.integers(1, 6))
        w_step = rng.integers(1, 4, k)
        w_ts = rng.integers(0, 100, k)
        w_end = w_ts + rng.integers(1, 40, k)
        # transfers lie inside their instance's window: [max(start, last), end]
        t_ts = np.minimum(w_ts + rng.integers(0, 20, k), w_end)
        transfers = pd.DataFrame({"step": w_step, "ts_ns": t_ts, "end_ns": w_end})
        transfers = transfers[transfers["end_ns"] > transfers["ts_ns"]]
        full = exposed_by_step((c_step, c_ts, c_end), transfers)
        c = clip_to_windows(merged(c_step, c_ts, c_end), merged(w_step, w_ts, w_end))
        clipped = exposed_by_step((c.step, c.ts_ns, c.end_ns), transfers)
        for s in set(full) | set(clipped):
            assert full.get(s, 0) == clipped.get(s, 0)
        # by hand for one step: |T \\ C|
        for s in set(transfers["step"]):
            t = transfers[transfers["step"] == s]
            covered = np.zeros(200, bool)
            for a, b in zip(t["ts_ns"], t["end_ns"], strict=True):
                covered[a:b] = True
            for a, b, st in zip(c_ts, c_end, c_step, strict=True):
                if st == s:
                    covered[a:b] = False
            assert clipped.get(int(s), 0) == int(covered.sum())


def test_union_by_step_is_the_union_length_of_each_step() -> None:
    got = union_by_step(np.array([2, 1, 1]), np.array([0, 0, 5]), np.array([7, 10, 20]))
    assert got == {1: 20, 2: 7}


def test_a_digest_pickles_and_carries_no_event_table(tmp_path: Path) -> None:
    trace = traceviz.load(rank_trace(tmp_path, 0, 2, arrive=30_000))
    d = rank_digest(trace, traceviz.analyze(trace))
    back = pickle.loads(pickle.dumps(d))
    assert back.info == d.info and back.steps == d.steps
    assert [s.number for s in d.steps] == [1, 2, 3]
    assert len(d.instances) == 3 and d.outside == 0
    # compute [S+5, S+25] µs never overlaps the collective [S+30, S+70]: nothing kept
    assert len(d.compute_in_comm) == 0
    assert d.compute_busy_ns == {1: 20_000, 2: 20_000, 3: 20_000}
    assert not any(isinstance(v, pd.DataFrame) and len(v) > 3 for v in vars(d).values())


def test_compute_overlapping_a_collective_is_clipped_to_its_window(tmp_path: Path) -> None:
    # compute runs S+5 .. S+40 µs; the collective S+30 .. S+70: 10 µs of compute are kept
    trace = traceviz.load(rank_trace(tmp_path, 0, 2, arrive=30_000, compute_end=40_000))
    d = rank_digest(trace, traceviz.analyze(trace))
    base = 100_000
    assert _rows(d.compute_in_comm) == [(n, n * base + 30_000, n * base + 40_000)
                                        for n in (1, 2, 3)]


def test_digests_in_any_order_give_the_analysis_in_rank_order(tmp_path: Path) -> None:
    paths = [rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000),
             rank_trace(tmp_path, 0, 2, arrive=30_000)]
    digests = [rank_digest(t, traceviz.analyze(t)) for t in map(traceviz.load, paths)]
    a, b = analyze_digests(digests), analyze_digests(digests[::-1])
    assert [i.rank for i in a.ranks] == [0, 1]
    assert a.rank_steps == b.rank_steps and a.per_rank == b.per_rank
    assert a.straggler is not None and a.straggler.rank == 1

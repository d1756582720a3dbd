"""Edges of the multi-rank definitions, pinned on the pure functions (all times ns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.test_ranks_handbuilt import analyze_paths, rank_trace
from traceviz.analyze.distributed.matching import align_clocks, lower_median, waits
from traceviz.analyze.distributed.metrics import cause


def test_cause_is_host_only_when_host_and_sync_wait_strictly_exceed_compute() -> None:
    assert cause(10, 10, 20, 100) == "gpu"  # equal: not "exceed"
    assert cause(10, 11, 20, 100) == "host"
    assert cause(50, 0, 0, 0) == "unknown"  # no GPU period


def test_lower_median_is_an_actual_value() -> None:
    assert lower_median(np.array([4, 1, 3, 2])) == 2
    assert lower_median(np.array([5])) == 5


def _two_rank_instances(ref_end: list[int], other_end: list[int], dur: int) -> pd.DataFrame:
    rows = []
    for k, (a, b) in enumerate(zip(ref_end, other_end, strict=True)):
        rows.append({"rank": 0, "start_ns": a - dur, "end_ns": a, "m": k})
        rows.append({"rank": 1, "start_ns": b - dur, "end_ns": b, "m": k})
    return pd.DataFrame(rows)


def test_offset_spread_of_exactly_ten_percent_does_not_warn() -> None:
    # differences 0, 10 µs, 20 µs -> offset 10 µs, |d - offset| = 10, 0, 10 -> spread 10 µs
    inst = _two_rank_instances([1_000_000, 2_000_000, 3_000_000],
                               [1_000_000, 2_010_000, 3_020_000], dur=100_000)
    match = inst.pop("m").to_numpy()
    clock, warns = align_clocks(inst, match, [0, 1], [None, None])
    assert (clock.offsets_ns[1], clock.spread_ns[1], clock.median_instance_ns) == (
        10_000, 10_000, 100_000)
    assert warns == []
    inst2 = _two_rank_instances([1_000_000, 2_000_000, 3_000_000],
                                [1_000_000, 2_010_001, 3_020_002], dur=100_000)
    match2 = inst2.pop("m").to_numpy()
    _, warns2 = align_clocks(inst2, match2, [0, 1], [None, None])
    assert [w.code for w in warns2] == ["clock_offset_spread"]


def test_waits_are_taken_on_the_reference_clock() -> None:
    # rank 1's clock is 1 ms ahead; on the reference clock it arrives 5 µs after rank 0
    inst = pd.DataFrame({"rank": [0, 1], "start_ns": [100_000, 1_105_000],
                         "end_ns": [150_000, 1_150_000]})
    wait, transfer, late, last_own = waits(inst, np.array([0, 0]), {0: 0, 1: 1_000_000})
    assert wait.tolist() == [5_000, 0] and late.tolist() == [0, 5_000]
    assert transfer.tolist() == [45_000, 45_000]
    assert last_own.tolist() == [105_000, 1_105_000]


def test_a_tie_in_lateness_names_the_lowest_rank(tmp_path: Path) -> None:
    paths = [rank_trace(tmp_path, r, 3, arrive=a)
             for r, a in ((0, 30_000), (1, 40_000), (2, 40_000))]
    r = analyze_paths(paths)
    assert [s.rank for s in r.step_stragglers] == [1, 1, 1]
    assert r.straggler is not None and r.straggler.rank == 1

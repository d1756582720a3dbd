"""Trace totals when consecutive steps' GPU work overlaps: computed over the union of the step
periods, never double counted (docs/metrics.md, "Totals and per-step medians")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.conftest import SHARED_HTA
from tests.kineto import TraceBuilder
from traceviz.vocab import GAP_CLASS_NAMES

CLASS_FIELDS = tuple(f"{c}_ns" for c in GAP_CLASS_NAMES)


def test_two_overlapping_steps_count_shared_time_once(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=20_000)  # A [10, 30)
    b.kernel(launch_ts=50_000, ts=150_000, dur=10_000)  # B [150, 160): returns at 51 µs
    b.step(2, 100_000, 100_000)
    b.kernel(launch_ts=110_000, ts=120_000, dur=20_000, stream=8)  # C [120, 140)
    b.kernel(launch_ts=170_000, ts=180_000, dur=10_000)  # D [180, 190): returns at 171 µs
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    s1, s2 = a.steps
    # Step 1: period [10, 160), busy 30; gap [30, 150): host [30, 51), queued [51, 150).
    assert (s1.period_ns, s1.gpu_busy_ns, s1.host_wait_ns, s1.queued_ns) == (
        150_000, 30_000, 21_000, 99_000)
    # Step 2: period [120, 190), busy 30; gap [140, 180) host (D returned 9 µs before it ran).
    assert (s2.period_ns, s2.gpu_busy_ns, s2.host_wait_ns, s2.queued_ns) == (
        70_000, 30_000, 40_000, 0)
    t = a.totals
    assert t.step_period_sum_ns == 220_000
    # Union: [10, 190) = 180 µs; busy [10,30) [120,140) [150,160) [180,190) = 60 µs. Idle:
    # [30, 51) host (step 1); [51, 120) queued (step 1 only); [140, 150) host (step 2's host
    # wait comes before step 1's queued in the class order); [160, 180) host (step 2).
    assert (t.period_ns, t.gpu_busy_ns) == (180_000, 60_000)
    assert (t.host_wait_ns, t.queued_ns, t.sync_wait_ns, t.other_idle_ns,
            t.graph_internal_ns) == (51_000, 69_000, 0, 0, 0)
    assert t.cpu_bound_share == pytest.approx(51_000 / 180_000)
    assert any(h.code == "overlapping_step_gpu_work" for h in a.health)


def test_without_overlap_the_totals_are_the_sums_over_steps(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=20_000)
    b.kernel(launch_ts=40_000, ts=50_000, dur=10_000)
    b.step(2, 100_000, 100_000)
    b.kernel(launch_ts=110_000, ts=120_000, dur=20_000)  # starts at 120 = step 1's period end
    a = traceviz.analyze(traceviz.load(b.write(tmp_path / "t.json")))
    t = a.totals
    for f in ("period_ns", "gpu_busy_ns", *CLASS_FIELDS):
        assert getattr(t, f) == sum(getattr(s, f) for s in a.steps), f
    assert t.period_ns == t.step_period_sum_ns == 130_000


def _merge(starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Union of intervals by a plain sweep."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(zip(starts, ends, strict=True)):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


V100 = SHARED_HTA / "v100_compiled_cudagraph_nccl_rank1.json.gz"


@pytest.mark.skipif(not V100.is_file(), reason="../shared/cases/hta is absent")
def test_v100_overlapping_steps_totals_equal_the_union_computed_independently() -> None:
    a = traceviz.analyze(V100)
    r, gpu = a.result, a.trace.gpu
    ts, end = gpu["ts_ns"].to_numpy(), gpu["end_ns"].to_numpy()
    # Periods from the attributed activities alone: first start → next step's first start,
    # or the own last end when the next step starts before it.
    step = r.activity_step
    first = [int(ts[step == k].min()) for k in range(len(r.steps))]
    last = [int(end[step == k].max()) for k in range(len(r.steps))]
    period_end = [first[k + 1] if k + 1 < len(first) and first[k + 1] > last[k] else last[k]
                  for k in range(len(first))]
    periods = _merge(first, period_end)
    busy = _merge(ts[step >= 0].tolist(), end[step >= 0].tolist())
    t = r.totals
    assert t.step_period_sum_ns == sum(e - s for s, e in zip(first, period_end, strict=True))
    assert t.period_ns == sum(e - s for s, e in periods)
    assert t.gpu_busy_ns == sum(e - s for s, e in busy)
    assert t.period_ns < t.step_period_sum_ns * 0.8  # the periods overlap by > 25 %
    # Idle per class on a 1 µs grid (the trace's times are whole µs): each idle µs takes the
    # first class (GapClass order) of the step gaps covering it.
    assert not (ts % 1000).any() and not (end % 1000).any()
    origin = periods[0][0]
    n = (periods[-1][1] - origin) // 1000
    in_period, is_busy = np.zeros(n, bool), np.zeros(n, bool)
    for s, e in periods:
        in_period[(s - origin) // 1000:(e - origin) // 1000] = True
    for s, e in busy:
        is_busy[(s - origin) // 1000:(e - origin) // 1000] = True
    cls = np.full(n, len(GAP_CLASS_NAMES))
    g = r.gaps
    for i in np.argsort(-g.cls.astype(np.int64), kind="stable"):
        cls[(g.start_ns[i] - origin) // 1000:(g.end_ns[i] - origin) // 1000] = g.cls[i]
    idle = in_period & ~is_busy
    assert (cls[idle] < len(GAP_CLASS_NAMES)).all()  # every idle µs lies in some step's gap
    per_class = np.bincount(cls[idle], minlength=len(GAP_CLASS_NAMES) + 1) * 1000
    assert [getattr(t, f) for f in CLASS_FIELDS] == per_class[:-1].tolist()
    assert t.gpu_busy_ns + int(idle.sum()) * 1000 == t.period_ns
    # Summing the steps instead counts ~4× the real idle time.
    assert sum(s.idle_ns for s in r.steps) > 3 * int(idle.sum()) * 1000

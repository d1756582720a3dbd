"""Multi-rank analysis on hand-built rank traces whose answers are known by construction.

Every rank runs steps 1..3 of 100 µs (``S = n * 100 µs``): one compute kernel launched at
``S + 1 µs`` and a collective whose launch, start and end are chosen per test. All times ns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.distributed import RanksAnalysis, analyze_ranks

STEP = 100_000
OFFSET = 7_000_000  # clock offset of the second host


def rank_trace(tmp_path: Path, rank: int, world: int, *, arrive: int, end: int = 70_000,
               launch: int = 26_000, compute_end: int = 25_000, shift: int = 0,
               hostname: str | None = "node0", steps: tuple[int, ...] = (1, 2, 3),
               extra: dict[int, int] | None = None, nelems: dict[int, int] | None = None,
               **coll) -> Path:
    """One rank's trace: per step a compute kernel [S+5, S+compute_end] µs-ish and one
    collective launched at S+launch starting at S+arrive ending at S+end; ``extra`` adds a
    second collective to the given step; ``nelems`` overrides the size in a step."""
    b = TraceBuilder()
    b.distributed(rank, world, hostname=hostname)
    for n in steps:
        s = n * STEP + shift
        b.step(n, s, STEP)
        b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=compute_end - 5_000, name="gemm")
        size = (nelems or {}).get(n, 1024)
        b.collective(s + launch, s + arrive, end - arrive, nelems=size, **coll)
        if extra and n in extra:
            b.collective(s + launch + 500, s + extra[n], 1_000, nelems=size, **coll)
    return b.write(tmp_path / f"t.rank{rank}.json")


def analyze_paths(paths: list[Path]) -> RanksAnalysis:
    items = [(t, traceviz.analyze(t)) for t in map(traceviz.load, paths)]
    return analyze_ranks(items)


def steps_of(r: RanksAnalysis, rank: int):
    return [s for s in r.rank_steps if s.rank == rank]


def two_ranks(tmp_path: Path, **kw) -> RanksAnalysis:
    # rank 0 arrives at S+30 µs; rank 1's host is late: it launches at S+50, arrives at S+55.
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000, **kw.get("r0", {}))
    p1 = rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000, **kw.get("r1", {}))
    return analyze_paths([p0, p1])


def test_one_host_waits_transfers_and_lateness_are_exact(tmp_path: Path) -> None:
    r = two_ranks(tmp_path)
    assert r.clock.aligned_by == "same_host"
    assert r.clock.offsets_ns == {0: 0, 1: 0}
    assert r.steps == (1, 2, 3)
    assert r.health == ()
    for s in steps_of(r, 0):
        assert (s.comm_wait_ns, s.comm_transfer_ns, s.lateness_ns) == (25_000, 15_000, 0)
        assert s.compute_busy_ns == 20_000
        assert s.exposed_comm_ns == 15_000
        assert s.gpu_busy_ns == 20_000 + 40_000
        assert s.effective_busy_ns == 60_000 - 25_000
    for s in steps_of(r, 1):
        assert (s.comm_wait_ns, s.comm_transfer_ns, s.lateness_ns) == (0, 15_000, 25_000)
        assert s.effective_busy_ns == s.gpu_busy_ns == 35_000
    p0, p1 = r.per_rank
    assert p0.comm_wait_ns_median == 25_000 and p1.comm_wait_ns_median == 0


def test_late_host_rank_is_the_straggler_with_cause_host(tmp_path: Path) -> None:
    r = two_ranks(tmp_path)
    assert [(s.step, s.rank, s.lateness_ns, s.cause) for s in r.step_stragglers] == [
        (1, 1, 25_000, "host"), (2, 1, 25_000, "host"), (3, 1, 25_000, "host")]
    st = r.straggler
    assert st is not None
    assert (st.rank, st.steps, st.matched_steps, st.share_of_steps) == (1, 3, 3, 1.0)
    assert (st.mean_lateness_ns, st.cause) == (25_000, "host")
    assert (st.late_instances_per_step, st.instances_per_step) == (1.0, 1.0)
    assert st.lateness_ns_per_instance == 25_000
    # rank 1: gap 25 -> 55 µs launched at 50 (host wait 30) > compute 20
    assert st.host_wait_ns_median > st.compute_busy_ns_median == 20_000
    (c,) = r.collectives
    assert (c.group, c.name, c.bytes, c.count) == ("0", "allreduce", 4096, 3)
    assert (c.wait_p50_ns, c.transfer_p50_ns) == (0, 15_000)  # rows 0 and 25 µs: lower median


def test_two_hosts_with_a_clock_offset_give_the_same_waits(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000, hostname="node0")
    p1 = rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000, hostname="node1",
                    shift=OFFSET)
    r = analyze_paths([p0, p1])
    assert r.clock.aligned_by == "collective_end"
    assert r.clock.offsets_ns == {0: 0, 1: OFFSET}
    assert r.clock.spread_ns == {0: 0, 1: 0}
    assert [s.comm_wait_ns for s in steps_of(r, 0)] == [25_000] * 3
    assert [s.comm_wait_ns for s in steps_of(r, 1)] == [0] * 3
    assert [s.exposed_comm_ns for s in steps_of(r, 1)] == [15_000] * 3
    assert r.straggler is not None and r.straggler.rank == 1


def test_unknown_hosts_are_aligned_by_collective_ends(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000, hostname=None)
    p1 = rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000, hostname=None, shift=-3_000)
    r = analyze_paths([p0, p1])
    assert (r.clock.aligned_by, r.clock.offsets_ns[1]) == ("collective_end", -3_000)
    assert [s.comm_wait_ns for s in steps_of(r, 0)] == [25_000] * 3


def test_offset_spread_beyond_ten_percent_of_the_median_duration_warns(tmp_path: Path) -> None:
    # rank 1's collectives end 0, +5 and +10 µs after rank 0's: offset 5 µs (median),
    # spread (median |d - offset|) 5 µs > 10 % of the median duration.
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000, hostname=None)
    b = TraceBuilder()
    b.distributed(1, 2)
    for n, late_end in ((1, 0), (2, 5_000), (3, 10_000)):
        s = n * STEP
        b.step(n, s, STEP)
        b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=20_000, name="gemm")
        b.collective(s + 26_000, s + 30_000, 40_000 + late_end)
    r = analyze_paths([p0, b.write(tmp_path / "x.rank1.json")])
    assert r.clock.offsets_ns[1] == 5_000 and r.clock.spread_ns[1] == 5_000
    assert [w.code for w in r.health] == ["clock_offset_spread"]


def test_equal_arrivals_mean_no_wait_and_no_straggler(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000)
    p1 = rank_trace(tmp_path, 1, 2, arrive=30_000)
    r = analyze_paths([p0, p1])
    assert all(s.comm_wait_ns == 0 and s.lateness_ns == 0 for s in r.rank_steps)
    assert [s.rank for s in r.step_stragglers] == [None, None, None]
    assert r.straggler is None


def test_a_launch_exactly_at_the_step_boundary_belongs_to_the_later_step(tmp_path: Path) -> None:
    # The collective of step n is launched at S + 100 µs == the start of step n+1, so step 1's
    # lands in step 2 and step 2's in step 3; the last window's end is inclusive: step 3's
    # launch at its own end stays in step 3.
    p0 = rank_trace(tmp_path, 0, 2, arrive=130_000, end=140_000, launch=100_000)
    p1 = rank_trace(tmp_path, 1, 2, arrive=132_000, end=140_000, launch=100_000)
    r = analyze_paths([p0, p1])
    assert [(s.step, s.collectives, s.comm_wait_ns) for s in steps_of(r, 0)] == [
        (1, 0, 0), (2, 1, 2_000), (3, 2, 4_000)]
    assert r.health == ()


def test_count_mismatch_warns_naming_the_step_and_pairs_nothing_there(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000)
    p1 = rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000, extra={2: 80_000})
    r = analyze_paths([p0, p1])
    (w,) = [w for w in r.health if w.code == "collective_mismatch"]
    assert w.message.startswith("step 2:") and "counts differ" in w.message
    assert [s.comm_wait_ns for s in steps_of(r, 0)] == [25_000, None, 25_000]
    assert [s.matched for s in steps_of(r, 1)] == [True, False, True]
    assert (r.instances.match[r.instances.step == 2] == -1).all()
    assert [s.step for s in r.step_stragglers] == [1, 3]


def test_size_mismatch_warns_and_pairs_nothing_in_that_step(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000)
    p1 = rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000, nelems={3: 2048})
    r = analyze_paths([p0, p1])
    (w,) = [w for w in r.health if w.code == "collective_mismatch"]
    assert w.message.startswith("step 3:") and "message sizes differ" in w.message
    assert [s.comm_wait_ns for s in steps_of(r, 1)] == [0, 0, None]


def test_name_mismatch_warns(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000)
    p1 = rank_trace(tmp_path, 1, 2, arrive=30_000, name="broadcast")
    r = analyze_paths([p0, p1])
    msgs = [w.message for w in r.health if w.code == "collective_mismatch"]
    assert len(msgs) == 3 and all("collective names differ" in m for m in msgs)
    assert (r.instances.match == -1).all()
    assert r.straggler is None


def test_missing_and_duplicate_ranks_warn(tmp_path: Path) -> None:
    p0 = rank_trace(tmp_path, 0, 4, arrive=30_000)
    p1 = rank_trace(tmp_path, 1, 4, arrive=30_000)
    dup = tmp_path / "copy"
    dup.mkdir()
    p1b = rank_trace(dup, 1, 4, arrive=30_000)
    r = analyze_paths([p0, p1, p1b])
    codes = {w.code: w for w in r.health}
    assert "rank 1 appears twice" in codes["duplicate_rank"].message
    assert codes["missing_ranks"].message.startswith("ranks 2, 3 of 4 have no trace")
    assert [ri.rank for ri in r.ranks] == [0, 1]


def test_rank_from_the_file_name_when_there_is_no_distributed_info(tmp_path: Path) -> None:
    paths = []
    for rank, arrive in ((0, 30_000), (1, 40_000)):
        b = TraceBuilder()
        b.step(1, STEP, STEP)
        b.kernel(launch_ts=STEP + 1_000, ts=STEP + 5_000, dur=20_000)
        b.collective(STEP + 26_000, STEP + arrive, 70_000 - arrive, params=False)
        paths.append(b.write(tmp_path / f"run_rank{rank}.json"))
    r = analyze_paths(paths)
    assert [(ri.rank, ri.rank_source) for ri in r.ranks] == [(0, "file name"), (1, "file name")]
    assert list(r.instances.name) == ["allreduce", "allreduce"]  # from the kernel name
    assert list(r.instances.bytes) == [-1, -1]
    assert [s.comm_wait_ns for s in steps_of(r, 0)] == [10_000]


def test_transfer_overlapped_by_compute_is_not_exposed(tmp_path: Path) -> None:
    paths = []
    for rank, arrive in ((0, 30_000), (1, 40_000)):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0")
        b.step(1, STEP, STEP)
        b.kernel(launch_ts=STEP + 1_000, ts=STEP + 5_000, dur=20_000)
        b.collective(STEP + 26_000, STEP + arrive, 70_000 - arrive)
        # compute on another stream during the transfer [40, 70] µs: covers 50..60
        b.kernel(launch_ts=STEP + 27_000, ts=STEP + 50_000, dur=10_000, stream=8)
        paths.append(b.write(tmp_path / f"o.rank{rank}.json"))
    r = analyze_paths(paths)
    s0, s1 = r.rank_steps
    assert (s0.comm_transfer_ns, s0.exposed_comm_ns, s0.compute_busy_ns) == (30_000, 20_000,
                                                                             30_000)
    assert (s1.comm_transfer_ns, s1.exposed_comm_ns) == (30_000, 20_000)


def test_four_ranks_with_a_gpu_bound_straggler_and_seq_matching(tmp_path: Path) -> None:
    arrivals = {0: 30_000, 1: 32_000, 2: 40_000, 3: 31_000}
    paths = []
    for rank, arrive in arrivals.items():
        b = TraceBuilder()
        b.distributed(rank, 4, hostname="node0")
        for n in (1, 2):
            s = n * STEP
            b.step(n, s, STEP)
            compute_end = 39_000 if rank == 2 else 25_000
            b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=compute_end - 5_000)
            b.collective(s + 26_000, s + arrive, 95_000 - arrive, seq=10 + n, on_kernel=True,
                         params=False)
        paths.append(b.write(tmp_path / f"f.rank{rank}.json"))
    r = analyze_paths(paths)
    assert r.health == ()
    waits = {s.rank: s.comm_wait_ns for s in r.rank_steps if s.step == 1}
    assert waits == {0: 10_000, 1: 8_000, 2: 0, 3: 9_000}
    late = {s.rank: s.lateness_ns for s in r.rank_steps if s.step == 1}
    assert late == {0: 0, 1: 2_000, 2: 10_000, 3: 1_000}
    assert all(s.comm_transfer_ns == 55_000 for s in r.rank_steps)
    assert [(s.rank, s.cause) for s in r.step_stragglers] == [(2, "gpu"), (2, "gpu")]
    assert r.straggler is not None and (r.straggler.rank, r.straggler.cause) == (2, "gpu")
    assert list(r.instances.seq[r.instances.rank == 0]) == [11, 12]


def test_seq_numbers_that_do_not_line_up_are_a_mismatch(tmp_path: Path) -> None:
    paths = []
    for rank in (0, 1):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0")
        b.step(1, STEP, STEP)
        b.collective(STEP + 1_000, STEP + 5_000, 10_000, seq=5 + rank)
        paths.append(b.write(tmp_path / f"q.rank{rank}.json"))
    r = analyze_paths(paths)
    (w,) = r.health
    assert "do not line up" in w.message and w.message.startswith("step 1:")


def test_step_skew_and_slowest_period(tmp_path: Path) -> None:
    r = two_ranks(tmp_path)
    # periods: steps 1, 2 are 100 µs on both ranks; step 3 is its own extent:
    # rank 0: 5 -> 70 µs = 65 µs, rank 1: 5 -> 70 = 65 µs.
    assert r.step_skew_ns_median == 0
    assert r.slowest_period_ns_median == pytest.approx(100_000)


def test_gloo_cpu_collectives_are_matched_by_their_start_step(tmp_path: Path) -> None:
    # CPU-only ranks (gloo): one "gloo:all_reduce" annotation per step on a worker thread;
    # the one starting exactly at step 2's start belongs to step 2.
    paths = []
    for rank, arrive in ((0, 10_000), (1, 40_000)):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0")
        for n in (1, 2):
            s = n * STEP
            b.step(n, s, STEP)
            b.x("user_annotation", "gloo:all_reduce", s + arrive, 50_000, tid=555)
        b.x("user_annotation", "gloo:all_reduce", 2 * STEP, 1_000, tid=556)  # boundary: step 2
        paths.append(b.write(tmp_path / f"g.rank{rank}.json"))
    r = analyze_paths(paths)
    assert [(s.rank, s.step, s.collectives) for s in r.rank_steps] == [
        (0, 1, 1), (0, 2, 2), (1, 1, 1), (1, 2, 2)]
    assert set(r.instances.name) == {"all_reduce"}
    s01 = next(s for s in steps_of(r, 0) if s.step == 1)
    assert (s01.comm_wait_ns, s01.lateness_ns) == (30_000, 0)
    # no GPU period: the CPU wait is not GPU busy time, and nothing is "exposed" against GPU
    assert (s01.effective_busy_ns, s01.exposed_comm_ns) == (None, None)
    st = r.straggler
    assert st is not None and (st.rank, st.cause) == (1, "unknown")  # no GPU: cause unknown


def test_launch_evidence_pairs_the_stragglers_host_wait_with_its_peers_comm_wait(
        tmp_path: Path) -> None:
    from traceviz.analyze.distributed.launch import launch_evidence

    e = launch_evidence(two_ranks(tmp_path))
    assert (e.straggler_rank, e.straggler_host_wait_ns, e.peers_comm_wait_ns) == (
        1, 65_000.0, 25_000.0)
    assert e.slowest_period_ns == 100_000
    sub = tmp_path / "eq"
    sub.mkdir()
    together = analyze_paths([rank_trace(sub, 0, 2, arrive=30_000),
                              rank_trace(sub, 1, 2, arrive=30_000)])
    assert launch_evidence(together).straggler_rank is None

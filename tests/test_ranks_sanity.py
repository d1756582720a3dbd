"""Multi-rank sanity before verdicts (issue 27, item 2): rank traces that are not one run get
no cross-rank results (and `traceviz report` exits 1) unless forced; effective busy is never
negative; the straggler sentence names where its lateness concentrates.

Hand-built traces (``tests/test_ranks_handbuilt.rank_trace``: steps 1..3 of 100 µs, one
compute kernel and one all-reduce per step; rank 1 late by 25 µs unless said otherwise). All
times ns. Definitions and bounds: ``docs/metrics.md``, "Rank traces", consistency.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import traceviz
from tests.conftest import SHARED_HTA
from tests.kineto import TraceBuilder
from tests.test_ranks_handbuilt import STEP, analyze_paths, rank_trace
from traceviz.analyze.distributed import analyze_ranks
from traceviz.analyze.distributed.matching import MAX_CLOCK_OFFSET_NS, clock_health
from traceviz.analyze.distributed.model import ClockAlignment, RankStep
from traceviz.report.ranks.output import render_loaded

REPO = Path(__file__).resolve().parents[1]
STRAGGLER = REPO / "reports" / "ddp_mlp_straggler"


def traceviz_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300)


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    return path


def pair(tmp_path: Path, *, world1: int = 2, host1: str | None = "node0", shift1: int = 0,
         host0: str | None = "node0") -> list[Path]:
    """Rank 0 on time, rank 1 25 µs late (its host launches late): the handbuilt pair."""
    return [rank_trace(tmp_path, 0, 2, arrive=30_000, hostname=host0),
            rank_trace(tmp_path, 1, world1, arrive=55_000, launch=50_000, hostname=host1,
                       shift=shift1)]


def assert_no_cross_rank(r) -> None:
    assert not r.consistent and not r.forced and not r.cross_rank
    assert r.straggler is None and r.step_stragglers == ()
    assert r.collectives == ()
    assert (r.step_skew_ns_median, r.slowest_period_ns_median) == (None, None)
    assert (r.instances.match == -1).all() and (r.instances.wait_ns == 0).all()
    for s in r.rank_steps:
        assert (s.comm_wait_ns, s.comm_transfer_ns, s.lateness_ns, s.exposed_comm_ns,
                s.effective_busy_ns, s.matched) == (None, None, None, None, None, False)
    # each rank's own figures are still there
    assert all(s.period_ns > 0 and s.gpu_busy_ns > 0 for s in r.rank_steps)
    assert all(p.comm_wait_ns_median is None and p.period_ns_median > 0 for p in r.per_rank)


# --- world size -------------------------------------------------------------------------------

def test_world_size_mismatch_is_inconsistent_and_names_no_straggler(tmp_path: Path) -> None:
    r = analyze_paths(pair(tmp_path, world1=4))
    assert_no_cross_rank(r)
    (line,) = r.inconsistency
    assert line == "the traces disagree on the world size: 2 (rank 0) vs 4 (rank 1)"
    assert "world_size_mismatch" in {w.code for w in r.health}


def test_world_size_mismatch_forced_keeps_todays_results_and_the_warning(tmp_path: Path) -> None:
    paths = pair(tmp_path, world1=4)
    items = [(t, traceviz.analyze(t)) for t in map(traceviz.load, paths)]
    r = analyze_ranks(items, force=True)
    assert (r.consistent, r.forced, r.cross_rank) == (False, True, True)
    assert r.straggler is not None and (r.straggler.rank, r.straggler.cause) == (1, "host")
    assert [s.comm_wait_ns for s in r.rank_steps if s.rank == 0] == [25_000] * 3
    assert "world_size_mismatch" in {w.code for w in r.health}


def test_cli_refuses_inconsistent_rank_traces_with_exit_1_and_one_line(tmp_path: Path) -> None:
    paths = [str(p) for p in pair(tmp_path, world1=4)]
    out = tmp_path / "r.html"
    r = traceviz_cli("report", *paths, "-o", str(out))
    assert r.returncode == 1
    assert r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line == ("traceviz: error: the rank traces are not one run: the traces disagree on "
                    "the world size: 2 (rank 0) vs 4 (rank 1); --force-ranks reports them as "
                    "one run anyway")
    assert not out.exists()


def test_cli_force_ranks_writes_the_report_with_straggler_and_warnings(tmp_path: Path) -> None:
    paths = [str(p) for p in pair(tmp_path, world1=4)]
    r = traceviz_cli("report", *paths, "--format", "text", "--force-ranks")
    assert r.returncode == 0, r.stderr
    assert "straggler: rank 1 arrives 25.0 µs late" in r.stdout
    assert "[forced: the rank traces are not one run" in r.stdout
    assert "one run: no: 1 consistency check failed" in r.stdout
    assert "the traces disagree on the world size: 2 (rank 0) vs 4 (rank 1)" in r.stdout
    j = traceviz_cli("report", *paths, "--format", "json", "--force-ranks")
    ranks = json.loads(j.stdout)["ranks"]
    assert (ranks["consistent"], ranks["forced"], ranks["straggler"]["rank"]) == (False, True, 1)
    assert ranks["inconsistency"] == [
        "the traces disagree on the world size: 2 (rank 0) vs 4 (rank 1)"]


def test_force_ranks_is_refused_for_a_single_trace(tmp_path: Path) -> None:
    (p0, _) = pair(tmp_path)
    r = traceviz_cli("report", str(p0), "--format", "json", "--force-ranks")
    assert r.returncode == 2 and "--force-ranks" in r.stderr


def test_api_has_the_same_force_keyword(tmp_path: Path) -> None:
    paths = pair(tmp_path, world1=4)
    plain = traceviz.analyze(paths)
    assert (plain.consistent, plain.straggler) == (False, None)
    assert plain.inconsistency == (
        "the traces disagree on the world size: 2 (rank 0) vs 4 (rank 1)",)
    assert "not one run" in repr(plain)
    doc = plain.to_dict()["ranks"]
    assert (doc["consistent"], doc["forced"], doc["straggler"]) == (False, False, None)
    forced = traceviz.analyze(paths, force_ranks=True)
    assert forced.straggler is not None and forced.straggler.rank == 1
    assert traceviz.Ranks.from_paths(paths, force=True).straggler is not None


# --- GPU model --------------------------------------------------------------------------------

def _gpu(name: str) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["deviceProperties"][0]["name"] = name
    return change


def test_device_mismatch_is_inconsistent(tmp_path: Path) -> None:
    p0, p1 = pair(tmp_path)
    edit(p1, _gpu("Other GPU"))
    r = analyze_paths([p0, p1])
    assert [ri.gpu for ri in r.ranks] == ["Test GPU", "Other GPU"]
    assert_no_cross_rank(r)
    assert r.inconsistency == (
        "the traces ran on different GPU models: Test GPU (rank 0) vs Other GPU (rank 1)",)
    assert [w.code for w in r.health] == ["device_mismatch"]


def test_an_unknown_gpu_model_is_not_compared(tmp_path: Path) -> None:
    p0, p1 = pair(tmp_path)
    edit(p1, lambda doc: doc.pop("deviceProperties"))
    r = analyze_paths([p0, p1])
    assert [ri.gpu for ri in r.ranks] == ["Test GPU", None]
    assert r.consistent and r.straggler is not None and r.straggler.rank == 1


def test_the_gpu_model_is_the_device_the_activities_ran_on(tmp_path: Path) -> None:
    p0, p1 = pair(tmp_path)

    def two_models(doc: dict[str, Any]) -> None:  # device 0 (used) and another model
        doc["deviceProperties"].append({"id": 1, "name": "Idle GPU"})
    for p in (p0, p1):
        edit(p, two_models)
    r = analyze_paths([p0, p1])
    assert [ri.gpu for ri in r.ranks] == ["Test GPU", "Test GPU"] and r.consistent


# --- clocks -----------------------------------------------------------------------------------

def _late_ends(tmp_path: Path, late_ends: tuple[int, int, int]) -> list[Path]:
    """Two hosts (unknown): rank 1's all-reduce of step n ends ``late_ends[n-1]`` after rank
    0's (both start at S+30, rank 0's last 40 µs): offset = median, spread = MAD."""
    p0 = rank_trace(tmp_path, 0, 2, arrive=30_000, hostname=None)
    b = TraceBuilder()
    b.distributed(1, 2)
    for n, late_end in zip((1, 2, 3), late_ends, strict=True):
        s = n * STEP
        b.step(n, s, STEP)
        b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=20_000, name="gemm")
        b.collective(s + 26_000, s + 30_000, 40_000 + late_end)
    return [p0, b.write(tmp_path / "x.rank1.json")]


def test_offsets_not_estimable_when_the_spread_exceeds_the_median_duration(
        tmp_path: Path) -> None:
    # d = 0, 50, 100 µs -> offset 50, spread 50 µs > median duration 40 µs
    r = analyze_paths(_late_ends(tmp_path, (0, 50_000, 100_000)))
    assert (r.clock.spread_ns[1], r.clock.median_instance_ns) == (50_000, 40_000)
    assert_no_cross_rank(r)
    assert r.inconsistency == (
        "rank 1's clock offset to rank 0 cannot be estimated: its per-instance offsets spread "
        "50.0 µs (median absolute deviation), more than the collectives' median duration "
        "40.0 µs: the matched collectives do not line up in time",)
    assert "clock_offset_spread" not in {w.code for w in r.health}  # the stronger one only


def test_a_spread_exactly_equal_to_the_median_duration_passes(tmp_path: Path) -> None:
    # d = 0, 40, 80 µs -> offset 40, |d - offset| = 40, 0, 40 -> spread 40 µs; durations
    # 40 ×4, 80, 120 -> lower median 40 µs: equal passes (only the 10 % warning)
    r = analyze_paths(_late_ends(tmp_path, (0, 40_000, 80_000)))
    assert (r.clock.spread_ns[1], r.clock.median_instance_ns) == (40_000, 40_000)
    assert r.consistent and r.straggler is not None
    assert [w.code for w in r.health] == ["clock_offset_spread"]
    sub = tmp_path / "over"
    sub.mkdir()
    r2 = analyze_paths(_late_ends(sub, (0, 40_001, 80_002)))  # spread 40.001 > 40 µs
    assert (r2.clock.spread_ns[1], r2.clock.median_instance_ns) == (40_001, 40_000)
    assert not r2.consistent
    assert [w.code for w in r2.health] == ["clock_offsets_not_estimable"]


def test_an_implausible_clock_offset_is_inconsistent(tmp_path: Path) -> None:
    r = analyze_paths(pair(tmp_path, host0="node0", host1="node1",
                           shift1=MAX_CLOCK_OFFSET_NS + 1_000))
    assert r.clock.aligned_by == "collective_end"
    assert r.clock.offsets_ns[1] == MAX_CLOCK_OFFSET_NS + 1_000
    assert_no_cross_rank(r)
    assert r.inconsistency == (
        "rank 1's clock is 60.0 s ahead of rank 0's (from collective ends), more than the "
        "60.0 s two hosts of one run can differ: the traces were recorded at different times",)


def test_a_large_but_plausible_clock_offset_is_one_run(tmp_path: Path) -> None:
    r = analyze_paths(pair(tmp_path, host0="node0", host1="node1", shift1=30_000_000_000))
    assert r.consistent and r.clock.offsets_ns[1] == 30_000_000_000
    assert r.straggler is not None and r.straggler.rank == 1


def test_one_host_traces_that_do_not_overlap_in_time_are_inconsistent(tmp_path: Path) -> None:
    r = analyze_paths(pair(tmp_path, shift1=10 * STEP))  # both "node0"; rank 1 1 ms later
    assert r.clock.aligned_by == "same_host"
    assert_no_cross_rank(r)
    (line,) = r.inconsistency
    assert line.startswith("rank 1's trace (2026-") and "do not overlap in time, though both " \
        "were recorded on host node0" in line
    assert [w.code for w in r.health] == ["rank_times_disjoint"]


def test_clock_health_bounds_are_pinned() -> None:
    def clock(kind: str, off: int = 0, spread: int = 0, med: int | None = 1_000
              ) -> ClockAlignment:
        return ClockAlignment(kind, 0, {0: 0, 1: off}, {0: 0, 1: spread}, med)

    def codes(c: ClockAlignment, spans=(None, None)) -> list[str]:
        return [w.code for w in clock_health(c, [0, 1], list(spans), "h")]

    assert codes(clock("collective_end", spread=1_000)) == []
    assert codes(clock("collective_end", spread=1_001)) == ["clock_offsets_not_estimable"]
    assert codes(clock("collective_end", off=-MAX_CLOCK_OFFSET_NS)) == []
    assert codes(clock("collective_end", off=-MAX_CLOCK_OFFSET_NS - 1)) == [
        "clock_offset_implausible"]
    # one host: the ranges must share an instant; touching is not overlapping
    assert codes(clock("same_host"), ((0, 100), (99, 200))) == []
    assert codes(clock("same_host"), ((0, 100), (100, 200))) == ["rank_times_disjoint"]
    assert codes(clock("same_host"), ((0, 100), None)) == []  # unknown: not checked
    # not aligned: at most the offset bound apart
    gap = MAX_CLOCK_OFFSET_NS
    assert codes(clock("none"), ((0, 100), (100 + gap, 200 + gap))) == []
    assert codes(clock("none"), ((0, 100), (101 + gap, 200 + gap))) == ["rank_times_disjoint"]


# --- effective busy ---------------------------------------------------------------------------

def _concurrent_collectives(tmp_path: Path) -> list[Path]:
    """Per step, three all-reduces (groups 0, 1, 2) on three streams at once: rank 0 starts
    them at S+30, rank 1 at S+55, all end at S+70. Rank 0: comm wait 3 × 25 = 75 µs, GPU busy
    20 (compute) + 40 (the comm union) = 60 µs: gpu_busy − comm_wait = −15 µs."""
    paths = []
    for rank, launch, arrive in ((0, 26_000, 30_000), (1, 50_000, 55_000)):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0", groups={g: [0, 1] for g in ("0", "1", "2")})
        for n in (1, 2, 3):
            s = n * STEP
            b.step(n, s, STEP)
            b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=20_000, name="gemm")
            for i, g in enumerate(("0", "1", "2")):
                b.collective(s + launch + 100 * i, s + arrive, 70_000 - arrive, group=g,
                             stream=20 + i)
        paths.append(b.write(tmp_path / f"c.rank{rank}.json"))
    return paths


def test_effective_busy_that_used_to_be_negative_is_clamped_at_zero_with_a_warning(
        tmp_path: Path) -> None:
    r = analyze_paths(_concurrent_collectives(tmp_path))
    assert r.consistent
    s0 = [s for s in r.rank_steps if s.rank == 0]
    assert [(s.gpu_busy_ns, s.comm_wait_ns) for s in s0] == [(60_000, 75_000)] * 3
    assert [s.effective_busy_ns for s in s0] == [0, 0, 0]  # was -15 µs
    assert all(s.effective_busy_clamped for s in s0)
    assert r.per_rank[0].effective_busy_ns_median == 0
    (w,) = [w for w in r.health if w.code == "effective_busy_clamped"]
    assert w.count == 3 and w.message.startswith("3 rank-steps have a comm wait larger")
    s1 = [s for s in r.rank_steps if s.rank == 1]
    assert [s.effective_busy_ns for s in s1] == [s.gpu_busy_ns for s in s1]


def test_no_format_prints_a_negative_effective_busy(tmp_path: Path) -> None:
    r = analyze_paths(_concurrent_collectives(tmp_path))
    docs = [b"{}", b"{}"]
    doc = json.loads(render_loaded(r, docs, "json"))["ranks"]
    values = [s["effective_busy_us"] for s in doc["rank_steps"]] + [
        p["effective_busy_us_median"] for p in doc["per_rank"]]
    assert all(v is not None and v >= 0 for v in values)
    negative = re.compile(r"(?<![\w.])[-−]\d")
    for fmt in ("text", "md"):
        assert not negative.search(render_loaded(r, docs, fmt)), fmt
    page = render_loaded(r, docs, "html", "cdn")
    table = page[page.index('id="ranks-per-rank"'):]
    table = table[:table.index("</table>")]
    assert not negative.search(table)


def test_rank_step_effective_busy_is_never_negative() -> None:
    def step(busy: int, wait: int | None, period: int = 100) -> RankStep:
        return RankStep(0, 1, period, busy, 0, 0, 0, None, 1, True, wait, 0, 0, 0)

    assert step(60, 75).effective_busy_ns == 0 and step(60, 75).effective_busy_clamped
    assert step(60, 60).effective_busy_ns == 0 and not step(60, 60).effective_busy_clamped
    assert step(60, 25).effective_busy_ns == 35
    assert step(60, None).effective_busy_ns is None
    assert step(0, 75, period=0).effective_busy_ns is None  # no GPU period
    assert not step(0, 75, period=0).effective_busy_clamped


# --- where the lateness concentrates ----------------------------------------------------------

def _lateness_per_index(tmp_path: Path, lates: tuple[int, ...]) -> list[Path]:
    """Per step, one all-reduce per entry of ``lates``, one after the other: rank 0 starts the
    k-th at S+10+25k µs, rank 1 ``lates[k]`` later; both end at S+30+25k µs."""
    paths = []
    for rank in (0, 1):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0")
        for n in (1, 2, 3):
            s = n * STEP
            b.step(n, s, STEP)
            for k, late in enumerate(lates):
                start = s + 10_000 + 25_000 * k + (late if rank == 1 else 0)
                end = s + 30_000 + 25_000 * k
                b.collective(start - 2_000, start, end - start)
        paths.append(b.write(tmp_path / f"l.rank{rank}.json"))
    return paths


def test_lateness_concentrated_at_one_index_is_named(tmp_path: Path) -> None:
    r = analyze_paths(_lateness_per_index(tmp_path, (15_000, 5_000)))
    st = r.straggler
    assert st is not None and st.rank == 1
    assert st.concentrated_at == ("allreduce", 0, 0.75)
    assert st.concentrated_lateness_ns == 15_000
    sentence = json.loads(render_loaded(r, [b"{}", b"{}"], "json"))["ranks"]["straggler"]
    assert sentence["concentrated_at"] == {"collective": "allreduce", "index": 0,
                                           "share": 0.75, "lateness_us_per_step": 15.0}
    assert "20.0 µs per step in all, 75 % of it at allreduce #0 (15 µs); straggler in 3 of 3" \
        in sentence["sentence"]


def test_lateness_at_a_later_index_names_that_index(tmp_path: Path) -> None:
    r = analyze_paths(_lateness_per_index(tmp_path, (1_000, 2_000, 12_000)))
    st = r.straggler
    assert st is not None and st.concentrated_at == ("allreduce", 2, 0.8)


def test_exactly_half_at_one_index_is_named(tmp_path: Path) -> None:
    r = analyze_paths(_lateness_per_index(tmp_path, (10_000, 5_000, 5_000)))
    st = r.straggler
    assert st is not None and st.concentrated_at == ("allreduce", 0, 0.5)


def test_spread_lateness_is_not_named(tmp_path: Path) -> None:
    r = analyze_paths(_lateness_per_index(tmp_path, (10_000, 10_000, 10_000)))
    st = r.straggler
    assert st is not None and (st.concentrated_at, st.concentrated_lateness_ns) == (None, 0)
    sentence = json.loads(render_loaded(r, [b"{}", b"{}"], "json"))["ranks"]["straggler"]
    assert sentence["concentrated_at"] is None
    assert "of it at" not in sentence["sentence"]


# --- real traces ------------------------------------------------------------------------------

def test_the_committed_straggler_run_is_consistent_and_still_names_rank_1() -> None:
    paths = [STRAGGLER / f"eager.rank{k}.pt.trace.json.gz" for k in (0, 1)]
    if not all(p.is_file() for p in paths):
        pytest.skip("reports/ddp_mlp_straggler eager traces not present")
    r = analyze_paths(paths)
    assert r.consistent and r.inconsistency == () and not r.forced
    assert [ri.gpu for ri in r.ranks] == ["NVIDIA H200", "NVIDIA H200"]
    st = r.straggler
    assert st is not None and (st.rank, st.cause, st.steps, st.matched_steps) == (
        1, "host", 5, 5)
    assert st.concentrated_at is not None and st.concentrated_at[:2] == ("allreduce", 0)
    assert st.concentrated_at[2] >= 0.5
    assert all(s.effective_busy_ns is not None and s.effective_busy_ns >= 0
               for s in r.rank_steps)


def test_the_real_mismatched_hta_pair_exits_1_unless_forced(tmp_path: Path) -> None:
    a100 = SHARED_HTA / "a100_eager_nccl_rank3.json.gz"
    v100 = SHARED_HTA / "v100_compiled_cudagraph_nccl_rank1.json.gz"
    if not (a100.is_file() and v100.is_file()):
        pytest.skip("the HTA traces are not in ../shared/cases/hta")
    r = traceviz_cli("report", str(a100), str(v100), "--format", "json")
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("traceviz: error: the rank traces are not one run: the traces "
                           "disagree on the world size: 2 (rank 1) vs 8 (rank 3) (and 3 more: "
                           "device_mismatch, clock_offsets_not_estimable, "
                           "clock_offset_implausible); --force-ranks")
    f = traceviz_cli("report", str(a100), str(v100), "--format", "json", "--force-ranks")
    assert f.returncode == 0, f.stderr
    ranks = json.loads(f.stdout)["ranks"]
    assert (ranks["consistent"], ranks["forced"]) == (False, True)
    assert len(ranks["inconsistency"]) == 4
    assert "8.5 days" in ranks["inconsistency"][3]
    assert [t["gpu"] for t in ranks["traces"]] == ["Tesla V100-SXM2-16GB",
                                                   "NVIDIA A100-PG509-200"]
    values = [s["effective_busy_us"] for s in ranks["rank_steps"]] + [
        p["effective_busy_us_median"] for p in ranks["per_rank"]]
    assert all(v is not None and v >= 0 for v in values)  # was −25,557 µs

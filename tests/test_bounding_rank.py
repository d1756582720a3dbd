"""The rank that bounds a distributed mode's step (``traceviz/analyze/distributed/bounding.py``):
the headline names it with its exposed communication before → after, and the launch verdict
reads its own unprofiled host issue time when the lockstep blocks record every rank's.

Hand-built rank traces, all times ns, steps 1..3 of 200 µs (``S = n × 200 µs``), one host:

* rank 0: a compute kernel ``[S+1, S+4)`` µs, then its all-reduce from ``S+5`` µs (it waits for
  rank 1) to ``S+110`` µs;
* rank 1, late by construction (the straggler): a compute kernel from ``S+10`` µs, its
  all-reduce ``[S+10, S+110)`` µs — 100 µs, starting exactly with the compute kernel (the "at
  or after" edge). Baseline: compute to ``S+50`` (40 µs overlapped, **60 µs exposed**); mode:
  compute to ``S+90`` (80 µs overlapped, **20 µs exposed**).

Rank 0's period (``S+1`` → ``S+110``) is longer than rank 1's (``S+10`` → ``S+110``): the
slowest rank by period is rank 0, the rank that bounds the step is rank 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from tests.synthetic_runs import paired_split
from traceviz.analyze.compare.modes import ModeInput, compare
from traceviz.analyze.distributed.bounding import (
    PROFILED_LATENESS,
    SLOWEST,
    STRAGGLER,
    BoundingRank,
    bounding_paired,
    bounding_rank,
    headline_clause,
)
from traceviz.analyze.distributed.launch import LaunchEvidence
from traceviz.report.compare_report import build, load_inputs, render

STEP = 200_000
US = 1_000


def rank_trace(folder: Path, rank: int, *, compute: tuple[int, int], arrive: int,
               end: int = 110 * US) -> Path:
    b = TraceBuilder()
    b.distributed(rank, 2, hostname="node0")
    for n in (1, 2, 3):
        s = n * STEP
        b.step(n, s, STEP)
        b.kernel(launch_ts=s + 500, ts=s + compute[0], dur=compute[1] - compute[0], name="gemm")
        b.collective(s + arrive - 500, s + arrive, end - arrive)
    folder.mkdir(parents=True, exist_ok=True)
    return b.write(folder / f"rank{rank}.json")


def rank_dir(folder: Path, straggler_compute_end: int, late: bool = True) -> Path:
    rank_trace(folder, 0, compute=(1 * US, 4 * US), arrive=5 * US if late else 10 * US)
    rank_trace(folder, 1, compute=(10 * US, straggler_compute_end), arrive=10 * US)
    return folder


@pytest.fixture(scope="module")
def rank_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bounding")
    return rank_dir(root / "eager", 50 * US), rank_dir(root / "compile", 90 * US)


def test_the_headline_names_the_straggler_and_its_exposed_communication(rank_dirs):
    comparison, report = build(load_inputs(list(rank_dirs)))
    assert [m.mode for m in comparison.rows] == ["eager", "compile"]
    (h,) = comparison.headlines
    assert ("rank 1 bounds the step (the straggler: last to arrive at its collectives); "
            "exposed communication on it 60.0 µs/step → 20.0 µs/step (median over steps, its "
            "own trace)") in h.text
    assert h.ranks == {"bounding_rank": [1, 1], "bounding_rule": [STRAGGLER, STRAGGLER],
                       "exposed_comm_us_per_step": [60.0, 20.0],
                       # rank traces given directly: no unprofiled timing to check it by
                       "straggler_rule": [PROFILED_LATENESS, PROFILED_LATENESS],
                       "late_under_profiler_only": [None, None],
                       "late_without_profiler_only": [None, None],
                       "straggler_check": [None, None]}
    doc = json.loads(render(comparison, report, "json"))
    assert doc["headline"]["compile"]["ranks"] == h.ranks  # every headline number in JSON


def test_the_bounding_rank_is_not_the_slowest_period_rank(rank_dirs):
    inputs = load_inputs(list(rank_dirs))
    for m, s in zip(inputs.modes, inputs.rank_sets, strict=True):
        assert s.slowest_path.name == "rank0.json"  # rank 0's period is the longest
        assert m.bounding == BoundingRank(1, STRAGGLER, m.bounding.exposed_comm_ns)
    assert [m.bounding.exposed_comm_ns for m in inputs.modes] == [60 * US, 20 * US]


def test_the_launch_verdict_says_which_rule_applied_and_carries_the_ranks(rank_dirs):
    comparison, _ = build(load_inputs(list(rank_dirs)))
    launch = next(v for v in comparison.verdicts if v.kind == "launch")
    assert launch.evidence["rules"] == "profiled-trace, straggler"  # trace files: today's rule
    assert launch.evidence["bounding_rank"] == [1, 1]
    assert launch.evidence["exposed_comm_us_per_step"] == [60.0, 20.0]


def test_without_a_straggler_the_slowest_period_rank_bounds_the_step(tmp_path: Path):
    # both ranks arrive at S+10 µs: nobody is late, so no straggler; rank 0's period is longest
    paths = [rank_trace(tmp_path, 0, compute=(1 * US, 4 * US), arrive=10 * US),
             rank_trace(tmp_path, 1, compute=(10 * US, 50 * US), arrive=10 * US)]
    items = [(traceviz.load(p), traceviz.analyze(p).result) for p in paths]
    from traceviz.analyze.distributed import analyze_ranks

    assert analyze_ranks(items).straggler is None
    b = bounding_rank([(0, items[0][1]), (1, items[1][1])], None)
    assert b == BoundingRank(0, SLOWEST, 100 * US)  # rank 0: its 100 µs all-reduce, alone
    assert bounding_rank([], 1) is None
    # a straggler that is not among the ranks analysed falls back to the slowest too
    assert bounding_rank([(0, items[0][1]), (1, items[1][1])], 5).rule == SLOWEST


def test_the_clause_of_ranks_without_communication_and_of_different_ranks():
    assert headline_clause(BoundingRank(0, SLOWEST, None), BoundingRank(0, SLOWEST, None)) == (
        "rank 0 bounds the step (no straggler: the largest median step period); no "
        "communication kernels on it")
    assert headline_clause(BoundingRank(0, STRAGGLER, 1_500.0),
                           BoundingRank(1, STRAGGLER, None)) == (
        "rank 1 bounds the step (the straggler: last to arrive at its collectives; baseline: "
        "rank 0, straggler); exposed communication on it 1.5 µs/step → none (no communication "
        "kernels) (median over steps, its own trace)")


# --- the bounding rank's own unprofiled split ---------------------------------------------------


def lockstep(rank_issue_base: list[list[float]] | None, rank_issue_mode: list[list[float]] | None,
             pairs: int = 8) -> dict:
    """Lockstep blocks: baseline 1.0 ms, mode 0.5 ms per step (4 steps a block); the block's
    issue time is rank 0's (the slowest by block time), 0.25 / 0.125 ms: far behind, GPU-bound;
    ``rank_issue_*``: every rank's issue time per block."""
    p = paired_split([1.0] * pairs, [0.5] * pairs, [0.25] * pairs, [0.125] * pairs, iters=4)
    p.update({"block_time": "slowest rank", "ranks": 2,
              "rank_baseline_block_ms": [[1.0, 0.999]] * pairs,
              "rank_mode_block_ms": [[0.5, 0.499]] * pairs})
    if rank_issue_base is not None:
        p["rank_baseline_issue_ms"] = rank_issue_base
    if rank_issue_mode is not None:
        p["rank_mode_issue_ms"] = rank_issue_mode
    return p


def test_bounding_paired_takes_each_sides_bounding_ranks_issue_times():
    p = lockstep([[0.25, 0.95]] * 8, [[0.125, 0.45]] * 8)
    got = bounding_paired(p, 1, 1)
    assert got is not None
    assert (got["baseline_issue_ms"], got["mode_issue_ms"]) == ([0.95] * 8, [0.45] * 8)
    assert got["baseline_block_ms"] == p["baseline_block_ms"]  # the step's time is kept
    assert bounding_paired(p, 0, 1)["baseline_issue_ms"] == [0.25] * 8  # type: ignore[index]


@pytest.mark.parametrize("broken", [
    lockstep(None, None),  # an older lockstep run: no per-rank issue times
    lockstep([[0.25, 0.95]] * 7, [[0.125, 0.45]] * 8),  # one block short
    lockstep([[0.25]] * 8, [[0.125, 0.45]] * 8),  # rank 1 missing
    lockstep([[0.25, "x"]] * 8, [[0.125, 0.45]] * 8),  # not a number
    {**lockstep([[0.25, 0.95]] * 8, [[0.125, 0.45]] * 8), "pairs": 0},
])
def test_bounding_paired_without_usable_per_rank_issue_times_is_none(broken):
    assert bounding_paired(broken, 1, 1) is None


def run_inputs(tmp_path: Path, paired: dict, peers_fall: bool) -> list[ModeInput]:
    """The eager / compile rank sets as a ``profile --nproc`` run would give them: rank 1 the
    straggler of both; its host wait 0.9 → 0.4 ms/step; its peer's comm wait falls only when
    ``peers_fall``."""
    base_a = traceviz.analyze(rank_trace(tmp_path / "e", 1, compute=(10 * US, 50 * US),
                                         arrive=10 * US)).result
    mode_a = traceviz.analyze(rank_trace(tmp_path / "c", 1, compute=(10 * US, 90 * US),
                                         arrive=10 * US)).result
    ms = 1_000_000
    base_ev = LaunchEvidence(1, 0.9 * ms, 0.8 * ms, 1.0 * ms)
    mode_ev = LaunchEvidence(1, 0.4 * ms, (0.3 if peers_fall else 0.8) * ms, 0.5 * ms)
    timing = {"median_ms": 1.0, "p10_ms": 0.99, "p90_ms": 1.01}
    return [ModeInput("eager", None, base_a, {"status": "ok", "timing": timing}, None, base_ev,
                      bounding=BoundingRank(1, STRAGGLER, 60 * US)),
            ModeInput("compile", None, mode_a,
                      {"status": "ok", "timing": {**timing, "median_ms": 0.5}, "paired": paired},
                      None, mode_ev, bounding=BoundingRank(1, STRAGGLER, 20 * US))]


def test_with_every_ranks_issue_times_the_bounding_ranks_split_decides(tmp_path: Path):
    # rank 1 issues 0.9375 of its 1.0 ms step (lag 0.25 steps: host-bound) and saves 0.5 ms
    # of issue time, all of the 0.5 ms saved: launch WIN on its own split, though the block's
    # (rank 0's) issue time says GPU-bound and the straggler rule alone would not (its peer's
    # comm wait does not fall)
    p = lockstep([[0.25, 0.9375]] * 8, [[0.125, 0.4375]] * 8)
    c = compare(run_inputs(tmp_path, p, peers_fall=False))
    launch = next(v for v in c.verdicts if v.kind == "launch")
    assert launch.evidence["rules"] == "unprofiled, bounding rank"
    assert launch.status == "WIN", launch.explanation
    assert launch.evidence["host_issue_ms"] == [0.9375, 0.4375]
    assert launch.evidence["host_bound"] == [True, True]
    assert launch.evidence["straggler_host_wait_us"] == [900.0, 400.0]  # beside, not deciding
    assert "host issue times of the bounding ranks (baseline rank 1, mode rank 1)" in (
        launch.explanation)
    assert c.unprofiled["compile"].issue_saved_ms.value == 0.5
    # traces with communication kernels on the unprofiled split: fusion reads compute busy
    fusion = next(v for v in c.verdicts if v.kind == "fusion")
    assert fusion.evidence["rules"] == "unprofiled"
    assert fusion.evidence["gpu_busy_us_per_step"] == [40.0, 80.0]


def test_a_bounding_split_does_not_let_the_straggler_rule_overrule_it(tmp_path: Path):
    # rank 1 GPU-bound too (issue 0.25 of 1.0 ms): NO_WIN on its split stands although the
    # straggler rule (host wait −0.5 ms = all of the 0.5 ms saved, peers waiting less) is met
    p = lockstep([[0.25, 0.25]] * 8, [[0.125, 0.125]] * 8)
    launch = next(v for v in compare(run_inputs(tmp_path, p, peers_fall=True)).verdicts
                  if v.kind == "launch")
    assert launch.evidence["rules"] == "unprofiled, bounding rank"
    assert launch.status == "NO_WIN", launch.explanation


def test_without_per_rank_issue_times_todays_rule_applies_and_says_so(tmp_path: Path):
    # the block's issue times (rank 0's: GPU-bound) give NO_WIN; the straggler rule turns it
    # into a WIN when its peer waits less
    for peers_fall, status in ((False, "NO_WIN"), (True, "WIN")):
        launch = next(v for v in compare(run_inputs(tmp_path / str(peers_fall),
                                                    lockstep(None, None), peers_fall)).verdicts
                      if v.kind == "launch")
        assert launch.evidence["rules"] == "unprofiled, straggler"
        assert launch.status == status, launch.explanation
        assert launch.evidence["host_issue_ms"] == [0.25, 0.125]


def test_on_the_cpu_the_bounding_ranks_split_still_knows_the_host_is_the_device(tmp_path):
    # the block's issue time equals its time (the host is the device); rank 1's own issue
    # times differ from the slowest rank's blocks, yet no launch claim is made on the CPU
    p = paired_split([1.0] * 8, [0.5] * 8, [1.0] * 8, [0.5] * 8, iters=4)
    p.update({"rank_baseline_issue_ms": [[1.0, 0.9375]] * 8,
              "rank_mode_issue_ms": [[0.5, 0.4375]] * 8})
    c = compare(run_inputs(tmp_path, p, peers_fall=False))
    launch = next(v for v in c.verdicts if v.kind == "launch")
    assert launch.evidence["rules"] == "unprofiled, bounding rank"
    assert launch.status == "INCONCLUSIVE" and "the host is the device" in launch.explanation

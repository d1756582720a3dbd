"""``profile --nproc 2`` on the CPU (gloo): paired timing in lockstep across ranks, and a mode
whose build fails or hangs on one rank ending on both, named after that rank, with the next
mode still running.

One run of ``tests/workloads_for_tests/ddp_faulty.py`` (about 60-90 s on a 2-core machine:
three launcher sessions, two compiles, and the hang waiting out the process group's timeout):
``eager`` raises on rank 1, ``compile`` hangs on rank 1, ``max-autotune-no-cudagraphs`` runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from traceviz.collect.distributed import failing_rank, merge_rank_results, ranks_that_waited

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "tests" / "workloads_for_tests" / "ddp_faulty.py"
TIMEOUT_S = 40  # per mode; the process group times out after half of it


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    pytest.importorskip("torch")
    run_dir = tmp_path_factory.mktemp("lockstep") / "run"
    env = {**os.environ, "TRACEVIZ_TEST_FAIL": "eager:1:raise,compile:1:hang"}
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(WORKLOAD), "--nproc", "2",
         "--modes", "eager,compile,max-autotune-no-cudagraphs", "--device", "cpu",
         "--out", str(run_dir), "--repeats", "2", "--warmup", "1", "--min-repeat-ms", "1",
         "--timing-budget-s", "1", "--timeout", str(TIMEOUT_S), "--no-stack"],
        capture_output=True, text=True, timeout=600, env=env, check=False)
    manifest = run_dir / "manifest.json"
    assert manifest.is_file(), proc.stdout + proc.stderr
    return json.loads(manifest.read_text())["modes"]


def test_a_rank_that_raises_fails_the_mode_and_is_named(faulty_run: dict) -> None:
    e = faulty_run["eager"]
    assert e["status"] == "failed" and e["failed_rank"] == 1
    assert e["reason"].startswith("rank 1:") and "injected failure" in e["reason"]


def test_a_rank_that_hangs_ends_within_the_timeout_and_is_named(faulty_run: dict) -> None:
    e = faulty_run["compile"]
    assert e["status"] in ("failed", "timeout") and e["failed_rank"] == 1, e["reason"]
    assert e["wall_s"] < TIMEOUT_S + 15
    assert "rank 1" in e["reason"] and "compiling" in e["reason"]


def test_the_next_mode_runs_and_times_pairs_in_lockstep(faulty_run: dict) -> None:
    e = faulty_run["max-autotune-no-cudagraphs"]
    assert e["status"] == "ok", e["reason"]
    p = e["paired"]
    assert p["block_time"] == "slowest rank" and p["ranks"] == 2 and p["pairs"] >= 2
    assert len(p["rank_baseline_block_ms"]) == len(p["baseline_block_ms"]) == p["pairs"]
    for block, per_rank in ((p["baseline_block_ms"], p["rank_baseline_block_ms"]),
                            (p["mode_block_ms"], p["rank_mode_block_ms"])):
        assert all(b == max(r) and len(r) == 2 for b, r in zip(block, per_rank, strict=True))
    assert sum(p["slowest_rank_blocks"].values()) == 2 * p["pairs"]
    for issue, per_rank in ((p["baseline_issue_ms"], p["rank_baseline_issue_ms"]),
                            (p["mode_issue_ms"], p["rank_mode_issue_ms"])):
        assert len(per_rank) == p["pairs"] and all(len(r) == 2 for r in per_rank)
        assert all(i in r for i, r in zip(issue, per_rank, strict=True))  # the slowest's
    assert p["speedup"] > 0 and p["ci_low"] <= p["speedup"] <= p["ci_high"]
    assert [r["paired"]["baseline_block_ms"] for r in e["ranks"]] == [p["baseline_block_ms"]] * 2


def test_blame_goes_to_the_rank_with_its_own_failure_not_the_peer_that_timed_out() -> None:
    ranks = [{"rank": 0, "status": "failed", "reason": "during checking: RuntimeError: "
              "[../gloo/transport/tcp/pair.cc:534] Connection closed by peer"},
             {"rank": 1, "status": "failed", "reason": "during compiling: ValueError: bad"}]
    assert failing_rank(ranks, ["checking", "compiling"]) == 1
    # the peer timed out, the hung rank wrote nothing: the silent rank is blamed
    e = merge_rank_results([{"rank": 0, "status": "failed", "reason": "during compiling: "
                             "DistBackendError: Timed out waiting 20000ms"}, None],
                           "compile", ["compiling", "compiling"])
    assert e["failed_rank"] == 1 and "last phase 'compiling'" in e["reason"]
    # two silent ranks: the one in the earlier phase
    assert failing_rank([{"rank": 0, "status": "failed", "reason": "rank 0 wrote no result"},
                         {"rank": 1, "status": "failed", "reason": "rank 1 wrote no result"}],
                        ["timing", "checking"]) == 1
    assert failing_rank([{"rank": 0, "status": "ok"}], [None]) is None


#: The line NCCL's watchdog wrote for rank 0 on 2 H200s (ddp_faulty, cudagraph, 2026-11-26), while
#: rank 1 slept in the workload's code before its capture.
WATCHDOG_LINE = ("[rank0]:[E1126 23:41:14.330247830 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog "
                 "caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, "
                 "NumelIn=272, NumelOut=272, Timeout(ms)=60000) ran for 60001 milliseconds "
                 "before timing out.")


def test_of_two_silent_ranks_in_one_phase_the_one_that_did_not_wait_on_a_peer_is_blamed() -> None:
    log = f"@@traceviz-phase capturing\n{WATCHDOG_LINE}\n[rank1]:[W] something else\n"
    assert ranks_that_waited(log) == {0}
    e = merge_rank_results([None, None], "cudagraph", ["capturing", "capturing"], {0})
    assert e["failed_rank"] == 1 and e["reason"].startswith("rank 1: rank 1 wrote no result")
    assert e["ranks"][0]["reason"].endswith("one of its collectives timed out waiting for a peer")
    assert e["ranks"][0]["waited_on_peer"] and not e["ranks"][1]["waited_on_peer"]
    # without the log's word, the first of the two (as before)
    assert merge_rank_results([None, None], "cudagraph", ["capturing"] * 2)["failed_rank"] == 0
    # waiting on a peer outweighs the phase: rank 0 is in the earlier phase but was a victim
    assert merge_rank_results([None, None], "x", ["capturing", "timing"], {0})["failed_rank"] == 1
    assert ranks_that_waited("[rank3]:[E] nothing timed out here\nWatchdog caught collective "
                             "operation timeout (no rank prefix)") == set()

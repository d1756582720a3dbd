"""``traceviz profile --nproc 2`` end to end on the CPU (gloo), and the rank-merge rules.

The run uses workloads/ddp_mlp.py (a tiny MLP on CPU) with the straggler knob set: rank 1's
host sleeps 50 ms per step, about 20x a step here, so which rank straggles is not a timing
question but the knob's effect.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from traceviz.collect.distributed import launcher_cmd, merge_rank_results, nproc_problem

ROOT = Path(__file__).resolve().parents[1]
DELAY_MS = 50


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    pytest.importorskip("torch")
    run_dir = tmp_path_factory.mktemp("ddp") / "run"
    env = {**os.environ, "TRACEVIZ_STRAGGLER_RANK": "1",
           "TRACEVIZ_STRAGGLER_DELAY_MS": str(DELAY_MS)}
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(ROOT / "workloads" / "ddp_mlp.py"),
         "--nproc", "2", "--modes", "eager,compile,cudagraph", "--device", "cpu",
         "--out", str(run_dir), "--repeats", "2", "--warmup", "1", "--min-repeat-ms", "1",
         "--timing-budget-s", "1"],
        capture_output=True, text=True, timeout=900, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return run_dir, json.loads((run_dir / "manifest.json").read_text())


def test_each_mode_runs_on_two_ranks_with_one_trace_per_rank(ddp_run) -> None:
    run_dir, manifest = ddp_run
    for mode in ("eager", "compile"):
        e = manifest["modes"][mode]
        assert e["status"] == "ok", e["reason"]
        assert e["nproc"] == 2 and [r["rank"] for r in e["ranks"]] == [0, 1]
        assert all(r["status"] == "ok" and r["hostname"] for r in e["ranks"])
        assert e["profiled"]["traces"] == [f"{mode}.rank0.pt.trace.json.gz",
                                           f"{mode}.rank1.pt.trace.json.gz"]
        assert all((run_dir / t).is_file() for t in e["profiled"]["traces"])
        assert e["correctness"]["ok"] and e["correctness"]["updates_compared"] >= 5
        slowest = e["timing"]["slowest_rank"]
        assert e["timing"]["median_ms"] == max(r["timing"]["median_ms"] for r in e["ranks"])
        assert e["ranks"][slowest]["timing"]["median_ms"] == e["timing"]["median_ms"]
    assert manifest["modes"]["cudagraph"]["status"] == "skipped"


def test_each_mode_gets_a_ranks_report_and_summary_naming_the_straggler(ddp_run) -> None:
    run_dir, manifest = ddp_run
    for mode in ("eager", "compile"):
        e = manifest["modes"][mode]
        assert (run_dir / e["ranks_report"]).is_file()
        assert e["ranks_summary"]["straggler"]["rank"] == 1
        assert e["ranks_summary"]["count"] == 2


def test_rank_traces_name_their_rank_and_the_knob_makes_rank_1_the_straggler(ddp_run) -> None:
    run_dir, _ = ddp_run
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "report", str(run_dir / "eager.rank0.pt.trace.json.gz"),
         str(run_dir / "eager.rank1.pt.trace.json.gz"), "--format", "json"],
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    ranks = json.loads(proc.stdout)["ranks"]
    assert [t["rank_source"] for t in ranks["traces"]] == ["distributedInfo"] * 2
    assert ranks["world_size"] == 2 and ranks["clock"]["aligned_by"] == "same_host"
    assert ranks["collectives"] and ranks["collectives"][0]["name"] == "all_reduce"
    assert ranks["straggler"]["rank"] == 1
    assert ranks["straggler"]["cause"] == "unknown"  # CPU-only traces: no GPU to tell
    wait0, wait1 = (p["comm_wait_us_median"] for p in ranks["per_rank"])
    assert wait0 > DELAY_MS * 1000 / 2 > wait1


def test_the_run_dir_report_compares_modes(ddp_run) -> None:
    run_dir, _ = ddp_run
    proc = subprocess.run([sys.executable, "-m", "traceviz", "report", str(run_dir),
                           "--format", "json"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "eager" in proc.stdout and "compile" in proc.stdout
    md = subprocess.run([sys.executable, "-m", "traceviz", "report", str(run_dir),
                         "--format", "md"], capture_output=True, text=True, timeout=300,
                        check=False).stdout
    assert "eager ranks" in md and "rank 1 arrives" in md


def test_launcher_runs_one_process_per_rank_through_torch_distributed_run() -> None:
    cmd = launcher_cmd(Path("w.py"), "eager", Path("run"), 4, "cuda", "{}")
    assert cmd[1:5] == ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node=4"]
    assert cmd[5:7] == ["-m", "traceviz.collect.rank_child"]


def _rank(rank: int, median: float, status: str = "ok") -> dict:
    return {"rank": rank, "status": status, "reason": None if status == "ok" else "boom",
            "timing": {"median_ms": median}, "first_call_s": 1.0 + rank,
            "profiled": {"trace": f"m.rank{rank}.pt.trace.json.gz", "steps": 5,
                         "gpu_activities": 10, "step_ms": median * 2},
            "correctness": {"ok": True}}


def test_merge_takes_the_slowest_rank_and_keeps_every_rank() -> None:
    e = merge_rank_results([_rank(0, 2.0), _rank(1, 3.0)], "eager")
    assert (e["status"], e["timing"]["median_ms"], e["timing"]["slowest_rank"]) == ("ok", 3.0, 1)
    assert (e["profiled"]["step_ms"], e["profiled"]["inflation"]) == (6.0, 2.0)
    assert e["profiled"]["gpu_activities"] == 20 and e["first_call_s"] == 2.0
    assert [r["rank"] for r in e["ranks"]] == [0, 1] and e["nproc"] == 2


def test_merge_names_the_failed_rank_and_the_rank_without_a_result() -> None:
    e = merge_rank_results([None, _rank(1, 3.0, status="failed")], "cudagraph")
    assert e["status"] == "failed" and e["reason"] == "rank 1: boom"
    assert "wrote no result" in e["ranks"][0]["reason"]
    e = merge_rank_results([None, None], "cudagraph")
    assert e["status"] == "failed" and e["reason"].startswith("rank 0: rank 0 wrote no result")


def test_straggler_knob_sleeps_only_on_the_chosen_rank(monkeypatch) -> None:
    pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("ddp_mlp_t", ROOT / "workloads" / "ddp_mlp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    slept: list[float] = []
    monkeypatch.setattr(mod.time, "sleep", slept.append)
    monkeypatch.setenv("TRACEVIZ_STRAGGLER_RANK", "1")
    monkeypatch.setenv("TRACEVIZ_STRAGGLER_DELAY_MS", "3")
    mod.before_step(0)
    mod.before_step(1)
    assert slept == [0.003]


def test_nproc_needs_one_gpu_per_rank_on_cuda_only() -> None:
    assert nproc_problem(2, "cuda", {"gpu_count": 2}) is None
    assert "torch sees 1 GPU" in (nproc_problem(2, "cuda", {"gpu_count": 1}) or "")
    assert nproc_problem(4, "cpu", {"gpu_count": 0}) is None

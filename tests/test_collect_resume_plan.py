"""Stopping and resuming a run, on hand-built run directories (no torch, no child processes)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from traceviz.atomic import partial_name
from traceviz.collect import manifest, run_control
from traceviz.collect.runner import RunSettings

SETTINGS = {"device": "cpu", "timeout_s": 60.0, "warmup": 3, "repeats": 2, "min_repeat_ms": 1.0,
            "max_iters": 200, "check_steps": 5,
            "trace_schedule": {"wait": 1, "warmup": 2, "active": 5}}
ENV = {"torch": "2.13.0+cpu", "triton": None, "cuda": None, "gpu": None, "python": "3.11.7"}
STATUSES = {"eager": "ok", "compile": "interrupted", "reduce-overhead": "skipped",
            "max-autotune-no-cudagraphs": "timeout", "max-autotune": "crashed",
            "cudagraph": "failed", "triton": "pending"}


def make_run(tmp_path: Path, statuses: dict[str, str] = STATUSES) -> tuple[Path, Path]:
    workload = tmp_path / "wl.py"
    workload.write_text("DESCRIPTION = 'x'\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    record = {"schema": 1, "workload": {"path": str(workload), "name": "wl"},
              "environment": ENV, "settings": SETTINGS, "modes": {}, "report": None}
    run_control.start_run(run_dir, record, list(statuses), workload)
    for mode, status in statuses.items():
        record["modes"][mode] = manifest.mode_entry(status=status)
        (run_dir / f"{mode}.pt.trace.json.gz").write_bytes(b"trace of " + mode.encode())
    manifest.write_manifest(run_dir, record)
    return run_dir, workload


def test_a_new_run_lists_every_mode_as_pending_with_the_workload_digest(tmp_path):
    run_dir, workload = make_run(tmp_path, {})
    record = manifest.read_manifest(run_dir)
    run_control.start_run(run_dir, record, ["eager", "compile"], workload)
    on_disk = manifest.read_manifest(run_dir)
    assert {m: e["status"] for m, e in on_disk["modes"].items()} == {
        "eager": "pending", "compile": "pending"}
    assert on_disk["workload"]["sha256"] == run_control.workload_digest(workload)
    assert len(on_disk["workload"]["sha256"]) == 64


def test_resume_runs_only_the_modes_that_did_not_finish_in_manifest_order(tmp_path):
    run_dir, workload = make_run(tmp_path)
    plan = run_control.plan_resume(run_dir, force=False)
    assert plan.modes == ("compile", "max-autotune-no-cudagraphs", "max-autotune", "triton")
    assert plan.workload == workload
    assert RunSettings.from_manifest(plan.record["settings"]).timeout_s == 60.0


def test_resume_refuses_a_changed_workload_unless_forced(tmp_path):
    run_dir, workload = make_run(tmp_path)
    workload.write_text("DESCRIPTION = 'edited'\n", encoding="utf-8")
    with pytest.raises(run_control.ResumeError, match="changed since the run started"):
        run_control.plan_resume(run_dir, force=False)
    assert run_control.plan_resume(run_dir, force=True).modes[0] == "compile"


def test_resume_refuses_a_manifest_without_a_digest_unless_forced(tmp_path):
    run_dir, _ = make_run(tmp_path)
    record = manifest.read_manifest(run_dir)
    del record["workload"]["sha256"]
    manifest.write_manifest(run_dir, record)
    with pytest.raises(run_control.ResumeError, match="no workload digest"):
        run_control.plan_resume(run_dir, force=False)
    assert run_control.plan_resume(run_dir, force=True).modes


def test_resume_refuses_a_run_where_every_mode_finished(tmp_path):
    run_dir, _ = make_run(tmp_path, {"eager": "ok", "compile": "failed", "cudagraph": "skipped",
                                     "triton": "mismatch"})
    with pytest.raises(run_control.ResumeError, match="nothing to resume"):
        run_control.plan_resume(run_dir, force=True)


def test_resume_refuses_a_directory_without_manifest_or_workload(tmp_path):
    with pytest.raises(run_control.ResumeError, match=r"cannot read manifest\.json"):
        run_control.plan_resume(tmp_path, force=True)
    run_dir, workload = make_run(tmp_path)
    workload.unlink()
    with pytest.raises(run_control.ResumeError, match="is gone"):
        run_control.plan_resume(run_dir, force=True)


def test_resume_refuses_another_torch_unless_forced(tmp_path):
    run_dir, _ = make_run(tmp_path)
    plan = run_control.plan_resume(run_dir, force=False)
    run_control.check_environment(plan, dict(ENV), force=False)  # same: accepted
    other = {**ENV, "torch": "2.14.0+cpu"}
    with pytest.raises(run_control.ResumeError, match=r"torch 2\.13\.0\+cpu → 2\.14\.0\+cpu"):
        run_control.check_environment(plan, other, force=False)
    run_control.check_environment(plan, other, force=True)


def test_beginning_a_resume_resets_only_the_modes_run_again(tmp_path):
    run_dir, workload = make_run(tmp_path)
    stale = partial_name(run_dir / "compile.pt.trace.json.gz")
    stale.write_bytes(b"half")
    plan = run_control.plan_resume(run_dir, force=False)
    run_control.begin_resume(plan, "2026-01-01T00:00:00+00:00")
    on_disk = manifest.read_manifest(run_dir)
    statuses = {m: e["status"] for m, e in on_disk["modes"].items()}
    assert statuses == {**STATUSES, **dict.fromkeys(plan.modes, "pending")}
    assert on_disk["resumed"] == [{"at": "2026-01-01T00:00:00+00:00", "modes": list(plan.modes),
                                   "workload_sha256": run_control.workload_digest(workload)}]
    left = sorted(p.name for p in run_dir.glob("*.pt.trace.json.gz"))
    assert left == sorted(f"{m}.pt.trace.json.gz" for m in STATUSES if m not in plan.modes)
    assert not stale.exists()


def test_an_interruption_marks_the_running_mode_and_the_ones_not_started(tmp_path):
    run_dir, _ = make_run(tmp_path, {"eager": "ok", "compile": "pending", "triton": "pending"})
    record = manifest.read_manifest(run_dir)
    partial = partial_name(run_dir / "compile.pt.trace.json.gz")
    partial.write_bytes(b"half a trace")
    exc = run_control.RunInterrupted(signal.SIGTERM)
    exc.during("compile", "timing", 12.25)
    run_control.record_interruption(run_dir, record, exc)
    modes = manifest.read_manifest(run_dir)["modes"]
    assert modes["eager"]["status"] == "ok"
    assert modes["compile"]["status"] == "interrupted"
    assert modes["compile"]["reason"] == "interrupted by SIGTERM during 'timing' after 12.2 s"
    assert modes["compile"]["wall_s"] == 12.25
    assert modes["triton"] == manifest.mode_entry(
        status="interrupted", reason="not started: the run was interrupted by SIGTERM")
    assert not partial.exists()
    assert exc.exit_code == 128 + signal.SIGTERM


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_stop_signals_raise_run_interrupted_and_restore_the_handlers(signum):
    before = signal.getsignal(signum)
    with pytest.raises(run_control.RunInterrupted) as caught, run_control.stop_signals():
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler interrupts this at once
    assert caught.value.signal_name == signal.Signals(signum).name
    assert caught.value.exit_code == 128 + signum
    assert signal.getsignal(signum) is before

"""Ranks that wrote every result and then hang on their way out (on two H100s, `tp_mlp`'s
`reduce-overhead` ranks did, after tracing: the whole mode was lost to its 200 s timeout) are
killed ``EXIT_GRACE_S`` after the last result, not at the mode's timeout, and the mode keeps
its measurements, with a note that says what happened."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from traceviz.collect import runner
from traceviz.collect.distributed import lingering_note, run_mode_ranks
from traceviz.collect.runner import RunSettings, run_child_session

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "tests" / "workloads_for_tests" / "ddp_faulty.py"

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")


def _session(tmp_path: Path, script: str, timeout_s: float):
    result = tmp_path / "result"
    cmd = [sys.executable, "-c", script.format(result=str(result))]
    begin = time.monotonic()
    out = run_child_session(cmd, tmp_path / "log", env={}, timeout_s=timeout_s, mode="m",
                            on_phase=lambda _: None, on_stop=lambda: None,
                            finished=result.exists)
    return out, time.monotonic() - begin


def test_a_child_that_lingers_after_its_results_is_killed_after_the_grace(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "EXIT_GRACE_S", 1.0)
    out, took = _session(
        tmp_path, "import pathlib, time; pathlib.Path({result!r}).write_text('x'); "
        "time.sleep(3600)", timeout_s=60)
    assert out.lingered and not out.timed_out
    assert took < 30
    assert out.left_running == ()


def test_a_child_that_exits_after_its_results_did_not_linger(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "EXIT_GRACE_S", 1.0)
    out, _ = _session(tmp_path, "import pathlib, time; pathlib.Path({result!r}).write_text('x');"
                      " time.sleep(0.5)", timeout_s=60)
    assert not out.lingered and not out.timed_out and out.returncode == 0


def test_a_child_without_results_still_times_out(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "EXIT_GRACE_S", 1.0)
    out, _ = _session(tmp_path, "import time; time.sleep(3600)", timeout_s=3)
    assert out.timed_out and not out.lingered


def test_ranks_hung_at_exit_keep_their_measurements_with_a_note(
        tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setattr(runner, "EXIT_GRACE_S", 3.0)
    monkeypatch.setenv("TRACEVIZ_TEST_FAIL", "eager:0:linger,eager:1:linger")
    settings = RunSettings(device="cpu", timeout_s=240, warmup=1, repeats=2, min_repeat_ms=1.0,
                           max_iters=5, check_steps=2, timing_budget_s=0, with_stack=False)
    begin = time.monotonic()
    entry = run_mode_ranks(WORKLOAD, "eager", tmp_path / "run", settings, {}, 2,
                           on_phase=lambda _: None)
    took = time.monotonic() - begin
    assert entry["status"] == "ok", entry.get("reason")
    assert entry["timing"]["median_ms"] > 0
    assert entry["exit"] == lingering_note(())
    assert took < 200  # not the mode's 240 s timeout


TP_MLP = ROOT / "reports" / "tp_mlp"


@pytest.mark.parametrize("fmt", ["text", "md", "json", "html"])
def test_the_committed_lingering_mode_is_measured_and_says_so_in_every_format(
        tmp_path: Path, fmt: str) -> None:
    """``reports/tp_mlp`` (two H200s): the ``reduce-overhead`` ranks hung on their way out
    after writing their results; the mode is measured and every format carries the note."""
    import json
    import subprocess

    if not (TP_MLP / "manifest.json").exists():
        pytest.skip("reports/tp_mlp absent")
    entry = json.loads((TP_MLP / "manifest.json").read_text())["modes"]["reduce-overhead"]
    assert entry["status"] == "ok" and entry["exit"] == lingering_note(())
    out = tmp_path / f"report.{fmt}"
    subprocess.run([sys.executable, "-m", "traceviz", "report", str(TP_MLP), "--format", fmt,
                    "-o", str(out), "--plotlyjs", "cdn"], check=True, capture_output=True)
    assert "hung tearing down" in out.read_text(encoding="utf-8")


"""Compiling the compile modes side by side before any mode is timed
(:mod:`traceviz.collect.ahead`): how many at once, which modes, the ``warm`` child for real
on the CPU, a stop that kills every compile at once, and the line ``profile`` prints."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from traceviz.cli.display import ahead_spent
from traceviz.collect import ahead
from traceviz.collect.runner import RunSettings, SessionStopped, run_child_session

WORKLOADS = Path(__file__).parent / "workloads_for_tests"


@pytest.mark.parametrize(("modes", "cores", "want"), [
    (4, 2, 0), (4, 7, 1), (4, 8, 2), (4, 16, 4), (4, 64, 4), (1, 64, 1), (0, 64, 0)])
def test_one_compile_at_once_per_four_cores_and_at_most_one_per_mode(modes, cores, want):
    assert ahead.ahead_workers(modes, cores) == want


def test_only_compile_modes_are_compiled_ahead_in_run_order():
    assert ahead.ahead_modes(["eager", "max-autotune", "cudagraph", "compile", "triton"]) == [
        "max-autotune", "compile"]


def test_fewer_than_two_at_once_skips_the_step(tmp_path, monkeypatch):
    monkeypatch.setattr(ahead, "usable_cpus", lambda: 4)
    settings = RunSettings(device="cpu", timeout_s=60, warmup=1, repeats=1, min_repeat_ms=1,
                           max_iters=1, check_steps=1)
    assert ahead.compile_ahead(WORKLOADS / "tiny.py", ["compile", "max-autotune"], tmp_path,
                               settings, {}, lambda m, s: None) is None
    assert not (tmp_path / "logs").exists()


def test_a_stop_kills_the_child_session_and_raises(tmp_path):
    stop = threading.Event()
    timer = threading.Timer(0.2, stop.set)
    timer.start()
    stopped: list[bool] = []
    with pytest.raises(SessionStopped):
        run_child_session([sys.executable, "-c", "import time; time.sleep(600)"],
                          tmp_path / "child.log", env={}, timeout_s=600, mode="compile",
                          on_phase=lambda p: None, on_stop=lambda: stopped.append(True),
                          stop=stop)
    assert stopped == [True]


def test_the_line_profile_prints_names_each_mode_and_what_failed():
    record = {"workers": 4, "wall_s": 84.6, "modes": {
        "compile": {"status": "ok", "wall_s": 31.24},
        "max-autotune": {"status": "timeout", "wall_s": 240.0},
        "reduce-overhead": {"status": "failed"}}}
    assert ahead_spent(record) == [
        "compiled ahead, 4 at once: 85 s (compile 31.2, max-autotune 240.0 timeout, "
        "reduce-overhead failed)"]
    assert ahead_spent(None) == []


@pytest.mark.slow
def test_compile_ahead_runs_each_modes_warm_child_for_real(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setattr(ahead, "usable_cpus", lambda: 8)
    settings = RunSettings(device="cpu", timeout_s=300, warmup=1, repeats=1, min_repeat_ms=1,
                           max_iters=1, check_steps=1)
    env = {"torch": "", "triton": None, "cuda": None, "gpu": None, "driver": None}
    seen: list[tuple[str, str]] = []
    modes = ["compile", "max-autotune-no-cudagraphs"]
    got = ahead.compile_ahead(WORKLOADS / "tiny.py", modes, tmp_path, settings, env,
                              lambda m, s: seen.append((m, s)))
    assert got is not None and got["workers"] == 2 and list(got["modes"]) == modes
    assert sorted(seen) == sorted((m, "ok") for m in modes)
    for mode, record in got["modes"].items():
        assert record["status"] == "ok", record
        assert record["first_call_s"] > 0 and record["wall_s"] >= record["first_call_s"]
        assert "compiling" in record["phase_s"]  # the first call's phase, where it compiled
        log = (tmp_path / record["log"]).read_text()
        assert "@@traceviz-phase building" in log, log
        assert not (tmp_path / "logs" / f"{mode}.ahead.result.json").exists()
    json.dumps(got)  # the manifest's record is plain JSON

"""``traceviz profile`` on a CUDA GPU: the graph modes replay and their traces hold kernels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKLOADS = Path(__file__).parent / "workloads_for_tests"


@pytest.mark.gpu
def test_graph_modes_run_and_trace_their_replays(tmp_path):
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(WORKLOADS / "tiny.py"),
         "--modes", "eager,reduce-overhead,cudagraph", "--out", str(run_dir),
         "--repeats", "3", "--min-repeat-ms", "10"],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    modes = json.loads((run_dir / "manifest.json").read_text())["modes"]
    for mode in ("eager", "reduce-overhead", "cudagraph"):
        assert modes[mode]["status"] == "ok", modes[mode]["reason"]
        assert modes[mode]["profiled"]["gpu_activities"] > 0
        assert modes[mode]["peak_mem_bytes"] > 0
    assert modes["cudagraph"]["analysis_summary"]["graph_launches_per_step"] == 1

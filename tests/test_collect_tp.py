"""``workloads/tp_mlp.py`` (tensor-parallel MLP, functional all-reduce per block) on two gloo
ranks: eager and compile both run, match a single-model eager run after the same updates, and
time pairs against eager. About 60-90 s on a 2-core machine (two launcher sessions, a compile).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_tp_mlp_runs_eager_and_compile_on_two_ranks(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(ROOT / "workloads" / "tp_mlp.py"),
         "--nproc", "2", "--modes", "eager,compile", "--device", "cpu", "--out", str(run_dir),
         "--repeats", "2", "--warmup", "1", "--min-repeat-ms", "1", "--timing-budget-s", "1",
         "--no-stack"], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    modes = json.loads((run_dir / "manifest.json").read_text())["modes"]
    for mode in ("eager", "compile"):
        e = modes[mode]
        assert e["status"] == "ok", e["reason"]
        assert e["correctness"]["ok"] and e["nproc"] == 2
    assert modes["compile"]["paired"]["ranks"] == 2


def test_tp_mlp_single_device_forward_matches_the_blocks() -> None:
    torch = pytest.importorskip("torch")
    from traceviz.collect.workload import load_workload

    wl = load_workload(str(ROOT / "workloads" / "tp_mlp.py"))
    module = sys.modules[f"traceviz_workload_{wl.path.stem}"]
    inputs = module.make_inputs(torch.device("cpu"))
    torch.manual_seed(0)
    model = module.make_model(torch.device("cpu"))  # world size 1: whole blocks
    with torch.no_grad():
        torch.testing.assert_close(module.step(*inputs), model(inputs[0]))

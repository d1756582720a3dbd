"""A mode that raises or mismatches is recorded as such; the other modes still run (a mode that
hangs: ``test_collect_crash_runs.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

BROKEN = Path(__file__).parent / "workloads_for_tests" / "broken.py"


def run_broken(kind: str, out: Path, timeout_s: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(BROKEN), "--modes", "eager,compile",
         "--out", str(out), "--device", "cpu", "--repeats", "2", "--min-repeat-ms", "1",
         "--timing-budget-s", "1", "--timeout", str(timeout_s)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "BROKEN_KIND": kind},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((out / "manifest.json").read_text())["modes"]


def assert_eager_unharmed(modes: dict) -> None:
    assert modes["eager"]["status"] == "ok"
    assert modes["eager"]["timing"]["median_ms"] > 0


def test_a_mode_that_raises_is_failed_with_the_error(tmp_path):
    modes = run_broken("raise", tmp_path / "run", timeout_s=300)
    assert_eager_unharmed(modes)
    compiled = modes["compile"]
    assert compiled["status"] == "failed"
    assert compiled["reason"].startswith("during compiling:")
    assert "view" in compiled["reason"] or "shape" in compiled["reason"]
    assert compiled["timing"] is None


def test_a_mode_that_computes_something_else_is_a_mismatch(tmp_path):
    modes = run_broken("mismatch", tmp_path / "run", timeout_s=300)
    assert_eager_unharmed(modes)
    compiled = modes["compile"]
    assert compiled["status"] == "mismatch"
    assert compiled["reason"].startswith("outputs differ from the eager reference: ")
    assert compiled["profiled"]["steps"] > 0  # traced all the same
    assert compiled["correctness"]["ok"] is False
    assert compiled["correctness"]["max_abs_err"] == pytest.approx(1.0)

"""One ``--nproc 2`` mode of ``tests/workloads_for_tests/ddp_faulty.py`` on CPU gloo ranks, run
in-process (so that tests can shorten the parent's grace periods), with the failures that
``TRACEVIZ_TEST_FAIL`` injects."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from traceviz.collect.distributed import run_mode_ranks
from traceviz.collect.runner import RunSettings

WORKLOAD = Path(__file__).resolve().parent / "workloads_for_tests" / "ddp_faulty.py"
#: The mode's timeout (s): far above what the tests' graces allow, so reaching it fails them.
TIMEOUT_S = 240.0


def run_faulty_eager(run_dir: Path, monkeypatch: Any,
                     failures: str) -> tuple[dict[str, Any], float]:
    """The manifest entry of ``eager`` with ``failures`` injected, and the seconds it took."""
    monkeypatch.setenv("TRACEVIZ_TEST_FAIL", failures)
    settings = RunSettings(device="cpu", timeout_s=TIMEOUT_S, warmup=1, repeats=2,
                           min_repeat_ms=1.0, max_iters=5, check_steps=2, timing_budget_s=0,
                           with_stack=False)
    begin = time.monotonic()
    entry = run_mode_ranks(WORKLOAD, "eager", run_dir, settings, {}, 2, on_phase=lambda _: None)
    return entry, time.monotonic() - begin

"""``profile --nproc 2`` where every rank hangs outside any collective (no process-group
timeout can fire): the mode's timeout ends the launcher *and* the ranks, which
``torch.distributed.run`` started in sessions of their own, the mode is ``timeout``, and the
run finishes. On a GPU the same happens when NCCL's watchdog is slower than the mode's timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "tests" / "workloads_for_tests" / "ddp_faulty.py"
TIMEOUT_S = 20

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline:
                found.append(int(entry.name))
    return found


def test_a_mode_hung_on_every_rank_ends_at_its_timeout_with_no_rank_left(
        tmp_path: Path) -> None:
    pytest.importorskip("torch")
    run_dir = tmp_path / "run"
    env = {**os.environ, "TRACEVIZ_TEST_FAIL": "eager:0:hang,eager:1:hang"}
    begin = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "traceviz", "profile", str(WORKLOAD), "--nproc", "2",
         "--modes", "eager", "--device", "cpu", "--out", str(run_dir), "--repeats", "2",
         "--warmup", "1", "--timing-budget-s", "0", "--timeout", str(TIMEOUT_S), "--no-stack"],
        capture_output=True, text=True, timeout=300, env=env, check=False)
    took = time.monotonic() - begin
    try:
        entry = json.loads((run_dir / "manifest.json").read_text())["modes"]["eager"]
        assert entry["status"] == "timeout", entry.get("reason")
        assert entry["reason"].startswith(f"no result after {TIMEOUT_S} s; killed during")
        assert "still alive" not in entry["reason"]
        assert took < TIMEOUT_S + 60, proc.stdout + proc.stderr
        time.sleep(1)  # SIGKILLed ranks are reaped by init
        assert _processes_mentioning(str(run_dir)) == []
    finally:
        for pid in _processes_mentioning(str(run_dir)):
            os.kill(pid, 9)

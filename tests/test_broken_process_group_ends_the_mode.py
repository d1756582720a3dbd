"""A rank that says its collective timed out (NCCL's watchdog line) and stays blocked, as ranks
do with NCCL's async error handling off (the CUDA-graph capture recipe), ends the mode: the
ranks get ``BROKEN_GRACE_S`` to end by themselves, are killed, and the mode is ``failed``,
naming the rank that hung, instead of waiting out the mode's timeout (on two H200s
``ddp_faulty``'s capture hang was recorded as ``timeout`` after 120 s although rank 0's
watchdog had reported the broken all-reduce at 60 s)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from tests.rank_runs import TIMEOUT_S, run_faulty_eager
from traceviz.collect import runner
from traceviz.collect.runner import run_child_session

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")


def test_a_child_whose_log_says_it_is_broken_is_killed_after_the_grace(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "BROKEN_GRACE_S", 1.0)
    log = tmp_path / "log"
    begin = time.monotonic()
    out = run_child_session(
        [sys.executable, "-c", "import time; print('step 1'); print('BROKEN here', flush=True);"
         " time.sleep(3600)"], log, env={}, timeout_s=60, mode="m",
        on_phase=lambda _: None, on_stop=lambda: None, broken=re.compile("BROKEN"))
    assert out.broken == "BROKEN here" and not out.timed_out and not out.lingered
    assert time.monotonic() - begin < 30


def test_a_stalled_process_group_fails_the_mode_before_its_timeout_naming_the_hung_rank(
        tmp_path: Path, monkeypatch) -> None:
    """Rank 0 says (as NCCL's watchdog does) that its collective timed out, and stays blocked;
    rank 1 hangs before its step: the mode fails BROKEN_GRACE_S later, naming rank 1."""
    pytest.importorskip("torch")
    monkeypatch.setattr(runner, "BROKEN_GRACE_S", 2.0)
    entry, took = run_faulty_eager(tmp_path / "run", monkeypatch, "eager:0:stall,eager:1:hang")
    assert entry["status"] == "failed", entry.get("reason")
    assert entry["reason"].startswith("the process group broke: rank 0's collective timed out")
    assert entry["failed_rank"] == 1
    assert took < TIMEOUT_S - 40  # ended by the rule, not at the mode's timeout


def test_the_reason_names_the_rank_of_the_real_watchdog_line() -> None:
    """The line rank 0 wrote on two H200s (``reports/ddp_faulty``, ``logs/cudagraph.log``)."""
    from traceviz.collect.distributed import COLLECTIVE_TIMEOUT_LINE, broken_group_note

    line = ("[rank0]:[E1127 03:00:42.282749687 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, "
            "NumelIn=272, NumelOut=272, Timeout(ms)=60000) ran for 60001 milliseconds before "
            "timing out.")
    assert COLLECTIVE_TIMEOUT_LINE.search(line)
    assert broken_group_note(line).startswith(
        "the process group broke: rank 0's collective timed out waiting for a peer")
    log = ROOT / "reports" / "ddp_faulty" / "logs" / "cudagraph.log"
    if log.exists():
        assert line[:60] in log.read_text(encoding="utf-8")

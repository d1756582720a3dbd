"""Ranks that wrote every result and then hang on their way out (on two H100s, `tp_mlp`'s
`reduce-overhead` ranks did, after tracing: the whole mode was lost to its 200 s timeout) are
killed ``EXIT_GRACE_S`` after the last result, not at the mode's timeout, and the mode keeps
its measurements, with a note that says what happened."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.rank_runs import TIMEOUT_S, run_faulty_eager
from traceviz.collect import runner
from traceviz.collect.distributed import lingering_note
from traceviz.collect.runner import run_child_session

ROOT = Path(__file__).resolve().parents[1]

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
    entry, took = run_faulty_eager(tmp_path / "run", monkeypatch, "eager:0:linger,eager:1:linger")
    assert entry["status"] == "ok", entry.get("reason")
    assert entry["timing"]["median_ms"] > 0
    assert entry["exit"] == lingering_note()
    assert took < TIMEOUT_S - 40  # killed after the grace, not at the mode's timeout


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
    assert entry["status"] == "ok" and entry["exit"] == lingering_note()
    out = tmp_path / f"report.{fmt}"
    subprocess.run([sys.executable, "-m", "traceviz", "report", str(TP_MLP), "--format", fmt,
                    "-o", str(out), "--plotlyjs", "cdn"], check=True, capture_output=True)
    assert "hung tearing down" in out.read_text(encoding="utf-8")


"""The stacked trace is recorded by the mode's own child, last, and its failure costs only the
``stack_profiled`` record (``traceviz/collect/child.py``, ``ModeRun.trace_stacked``;
``traceviz/collect/runner.py``, ``run_mode``).

The child side runs the real child in this process on the CPU (``child.main``) with the stacked
recording made to raise; the parent side runs ``run_mode`` over a stand-in child (a few lines of
Python, no torch) that writes a mode result, enters the stacked phase and then dies, hangs or
exits badly there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from traceviz.collect import runner
from traceviz.collect.profiled_step import PHASE_PREFIX, STACK_PHASE

TINY = Path(__file__).parent / "workloads_for_tests" / "tiny.py"
CHILD_SETTINGS: dict[str, Any] = {
    "warmup": 1, "repeats": 2, "min_repeat_ms": 0.0, "max_iters": 3, "check_steps": 2,
    "timing_budget_s": 0, "with_stack": True, "environment": {}}


def phases(text: str) -> list[str]:
    return [line[len(PHASE_PREFIX):] for line in text.splitlines()
            if line.startswith(PHASE_PREFIX)]


def test_a_failing_stacked_recording_leaves_the_mode_ok_and_its_measurements_written_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("torch")
    from traceviz.collect import child, tracing

    out = tmp_path / "eager.result.json"
    stack = tmp_path / "eager.stack.pt.trace.json.gz"
    seen_on_disk: list[dict[str, Any]] = []
    profile_steps = tracing.profile_steps

    def stacks_break(call: Any, trace_path: Path, **kw: Any) -> Any:
        if not kw.get("with_stack"):
            return profile_steps(call, trace_path, **kw)
        seen_on_disk.append(json.loads(out.read_text()))
        raise RuntimeError("no stacks today")

    monkeypatch.setattr(tracing, "profile_steps", stacks_break)
    assert child.main(["run", str(TINY), "eager", str(tmp_path / "eager.pt.trace.json.gz"),
                       str(out), "--device", "cpu", "--settings", json.dumps(CHILD_SETTINGS),
                       "--stack-trace", str(stack)]) == 0
    result = json.loads(out.read_text())
    assert (result["status"], result["reason"]) == ("ok", None)
    assert result["timing"]["repeats"] == 2 and result["profiled"]["steps"] == 5
    assert result["stack_profiled"] == {"status": "failed",
                                        "reason": "during stacks: RuntimeError: no stacks today"}
    assert not stack.exists()
    # written before the stacked trace began: every measurement, no stacked record yet
    [before] = seen_on_disk
    assert before["status"] == "ok" and before["timing"] == result["timing"]
    assert before["profiled"] == result["profiled"] and "stack_profiled" not in before
    assert phases(capsys.readouterr().out)[-2:] == ["tracing", STACK_PHASE]


#: A stand-in mode child: writes an ok result to its 5th argument, enters the stacked phase,
#: then ends as its last argument says.
STAND_IN = """
import json, os, signal, sys, time
out, how = sys.argv[5], sys.argv[-1]  # argv[0] is "-c"
print("@@traceviz-phase tracing", flush=True)
print("@@traceviz-phase stacks", flush=True)
with open(out, "w") as fh:
    json.dump({"status": "ok", "reason": None, "timing": {"median_ms": 1.5}}, fh)
if how == "sigkill":
    os.kill(os.getpid(), signal.SIGKILL)
elif how == "hang":
    time.sleep(60)
sys.exit(3)
"""


def run_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, *,
                 with_stack: bool = True, timeout_s: float = 60) -> tuple[dict, list[str]]:
    cmds: list[list[str]] = []

    def child_cmd(*args: str) -> list[str]:
        cmds.append(list(args))
        return [sys.executable, "-c", STAND_IN, *args, how]

    monkeypatch.setattr(runner, "_child_cmd", child_cmd)
    settings = runner.RunSettings(device="cpu", timeout_s=timeout_s, warmup=1, repeats=1,
                                  min_repeat_ms=0.0, max_iters=1, check_steps=1,
                                  with_stack=with_stack)
    entry = runner.run_mode(TINY, "eager", tmp_path, settings, {}, lambda _: None)
    [cmd] = cmds
    return entry, cmd


@pytest.mark.parametrize(("how", "status", "reason"), [
    ("sigkill", "failed", "the mode's child was killed by SIGKILL while recording the stacked "
     "trace"),
    ("exit", "failed", "the mode's child exited with code 3 while recording the stacked trace"),
    ("hang", "timeout", "killed at the 3 s timeout while recording the stacked trace"),
])
def test_a_child_that_dies_or_hangs_in_the_stacked_phase_keeps_the_mode_ok(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, status: str,
        reason: str) -> None:
    entry, cmd = run_stand_in(tmp_path, monkeypatch, how, timeout_s=3 if how == "hang" else 60)
    assert cmd[cmd.index("--stack-trace") + 1] == str(tmp_path / "eager.stack.pt.trace.json.gz")
    assert (entry["status"], entry["reason"]) == ("ok", None), entry["reason"]
    assert entry["timing"] == {"median_ms": 1.5}
    assert entry["stack_profiled"] == {"status": status, "reason": reason,
                                       "log": "logs/eager.log"}
    assert STACK_PHASE in entry["phase_s"]


def test_without_stacks_the_child_is_not_asked_for_them_and_a_bad_exit_fails_the_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry, cmd = run_stand_in(tmp_path, monkeypatch, "exit", with_stack=False)
    assert "--stack-trace" not in cmd
    # the stand-in still says "stacks", but a child asked for none has no stacked phase to
    # lose: its result is read as ever (exit code 3 after an ok result: failed)
    assert (entry["status"], entry["reason"]) == ("failed", "child exited with code 3")
    assert "stack_profiled" not in entry

"""The phases both mode children share (:class:`traceviz.collect.profiled_step.StepRun`), on a
trivial CPU step: what each phase records, the order the parent sees them in, and what a
baseline that cannot run does to a mode in a process of its own and to a rank."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from traceviz.collect.profiled_step import PHASE_PREFIX, StepRun

torch = pytest.importorskip("torch")

SETTINGS: dict[str, Any] = {"warmup": 1, "repeats": 2, "min_repeat_ms": 0.0, "max_iters": 3,
                            "timing_budget_s": 0.01, "check_steps": 3, "environment": {}}


def phases(text: str) -> list[str]:
    return [line[len(PHASE_PREFIX):] for line in text.splitlines()
            if line.startswith(PHASE_PREFIX)]


def step() -> Any:
    return torch.ones(4) + 1


def no_baseline() -> Any:
    raise RuntimeError("no eager step here")


class AloneInLockstep:
    """A :class:`~traceviz.collect.paired.Lockstep` of one rank."""

    def barrier(self) -> None:
        pass

    def gather(self, values: list[float]) -> list[list[float]]:
        return [list(values)]


def test_the_first_call_is_timed_and_the_check_makes_check_steps_steps(capsys) -> None:
    run = StepRun("w.py", "compile", "cpu", SETTINGS, rank=1)
    calls: list[int] = []

    def call() -> int:
        calls.append(len(calls))
        return calls[-1]

    assert run.first_call(call) == 0
    assert run.check_steps(call, 0) == 2
    assert len(calls) == SETTINGS["check_steps"]
    assert run.result["first_call_s"] >= 0
    assert run.result["rank"] == 1 and run.result["status"] == "failed"
    assert phases(capsys.readouterr().out) == ["compiling", "checking"]


def test_a_mode_is_timed_paired_and_traced_lean_in_that_order(tmp_path: Path, capsys) -> None:
    run = StepRun("w.py", "triton", "cpu", SETTINGS)
    trace = tmp_path / "m.pt.trace.json.gz"
    run.measure_and_trace(step, baseline=lambda: step, trace_path=trace, metadata={},
                          mismatch=None)
    assert phases(capsys.readouterr().out) == ["timing", "paired timing", "tracing"]
    assert run.result["status"] == "ok"
    assert run.result["timing"]["repeats"] == SETTINGS["repeats"]
    assert run.result["paired"]["baseline"] == "eager" and run.result["paired"]["pairs"] >= 2
    assert run.result["profiled"]["trace"] == trace.name and trace.is_file()


def test_eager_is_not_timed_against_itself(tmp_path: Path, capsys) -> None:
    run = StepRun("w.py", "eager", "cpu", SETTINGS)
    run.measure_and_trace(step, baseline=no_baseline, trace_path=tmp_path / "e.pt.trace.json.gz",
                          metadata={}, mismatch="outputs differ")
    assert "paired" not in run.result
    assert phases(capsys.readouterr().out) == ["timing", "tracing"]
    assert (run.result["status"], run.result["reason"]) == ("mismatch", "outputs differ")


def test_a_baseline_that_cannot_run_is_recorded_and_the_mode_still_traced(tmp_path: Path) -> None:
    run = StepRun("w.py", "triton", "cpu", SETTINGS)
    run.measure_and_trace(step, baseline=no_baseline, trace_path=tmp_path / "t.pt.trace.json.gz",
                          metadata={}, mismatch=None)
    assert run.result["paired"] == {"baseline": "eager",
                                    "error": "RuntimeError: no eager step here"}
    assert run.result["status"] == "ok"


def test_a_rank_whose_baseline_cannot_run_fails_in_paired_timing(tmp_path: Path) -> None:
    run = StepRun("w.py", "triton", "cpu", SETTINGS)
    run.lockstep = AloneInLockstep()
    with pytest.raises(RuntimeError, match="no eager step here"):
        run.measure_and_trace(step, baseline=no_baseline,
                              trace_path=tmp_path / "r.pt.trace.json.gz", metadata={},
                              mismatch=None)
    try:
        raise RuntimeError("peer gone")
    except RuntimeError as exc:
        run.fail(exc)
    assert run.result["reason"] == "during paired timing: RuntimeError: peer gone"
    assert "timing" in run.result and "profiled" not in run.result

"""Per-step results that name their step hold the trace's own name strings, also when the
analysis runs on forked workers: a result that came back from a worker would hold pickled
copies, one new string a step (at 10⁶ steps ≈ 70 MiB a table in the parent, at the analysis's
peak). The gap statistics and the compile structure are therefore computed in the analysing
process itself, never in the forked map.

The map's items are all left to the forked worker here (this process takes none), so any
result computed in the map would be a copy.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.trace import parallel

hw = importlib.import_module("traceviz.analyze.host_wait.blocks")  # block-size settings
STEPS = 6


def _trace(tmp_path: Path) -> traceviz.Trace:
    """``STEPS`` steps of 10 µs, each launching two kernels 2 µs apart from inside a CPU op
    (host wait between them), so that host-wait blocks exist to cut."""
    b = TraceBuilder()
    for s in range(STEPS):
        t0 = s * 10_000
        b.step(s + 1, t0, 9_000)
        b.cpu_op("aten::add", t0 + 100, 8_000)
        for k in range(2):
            corr = b.launch(t0 + 500 + k * 3_000, 1_000)
            b.gpu(corr, t0 + 2_000 + k * 3_000, 500)
    return traceviz.load(b.write(tmp_path / "t.json"), workers=1)


@pytest.fixture
def forked_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Blocks of one event where a cut allows (so the analysis maps on forked workers), and
    this process takes no item of a forked map; records each map's item count."""
    if not parallel.can_fork():
        pytest.skip("needs fork")
    monkeypatch.setattr(hw, "MIN_BLOCK_EVENTS", 1)
    monkeypatch.setattr(hw, "BLOCKS_PER_THREAD", 1_000)
    monkeypatch.setattr(parallel.ForkedMap, "take_part", lambda self, poll=None: None)
    counts: list[int] = []

    class Recorded(parallel.ForkedMap):
        def __init__(self, fn: object, count: int, workers: int) -> None:
            counts.append(count)
            super().__init__(fn, count, workers)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "ForkedMap", Recorded)
    return counts


def test_step_named_results_hold_the_traces_strings_on_forked_workers(
        tmp_path: Path, forked_only: list[int]) -> None:
    from traceviz.analyze.analysis import analyze

    trace = _trace(tmp_path)
    own = {n: n for n in trace.names}  # the trace's string objects, by value
    result = analyze(trace, workers=3)
    assert forked_only and forked_only[0] > 1  # the analysis did run a forked map
    keys = [k for scope, k in zip(result.gap_stats.column("scope").tolist(),
                                  result.gap_stats.column("key").tolist(), strict=True)
            if scope == "step"]
    steps = result.compile.steps.column("step").tolist()
    assert len(steps) == STEPS and len(keys) >= STEPS
    assert all(k is own[k] for k in keys)
    assert all(s is own[s] for s in steps)


def test_the_forked_analysis_gives_the_single_process_answer(
        tmp_path: Path, forked_only: list[int]) -> None:
    from traceviz.analyze.analysis import analyze
    from traceviz.report.jsonout import analysis_to_dict

    trace = _trace(tmp_path)
    forked = analyze(trace, workers=3)
    assert forked_only
    assert analysis_to_dict(trace, forked) == analysis_to_dict(trace, analyze(trace, workers=1))

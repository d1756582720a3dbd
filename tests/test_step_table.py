"""Per-step results stored as columns (``analyze/columnar.py``): the tables behave as the tuples
of frozen rows they replace, the API's DataFrames come whole from the columns, and the analysis
keeps no Python object per step.

The hand-built trace (all times ns): step 1 ``[0, 100 000]`` launches kernel A at 1 000
(runs 10 000–15 000) and kernel B at 30 000 (runs 40 000–45 000); step 2 ``[100 000, 200 000]``
launches D at 110 000 (runs 120 000–130 000); step 3 ``[200 000, 250 000]`` launches nothing.
So step 1's period runs from 10 000 to D's start (110 000 ns), its busy time is 10 000, and its
two holes — 15 000→40 000 (B launched at 30 000, after the hole began) and the tail
45 000→120 000 (D launched at 110 000) — are host wait; step 2's period is its own extent
(10 000, no later step has GPU work); step 3 has no GPU work.
"""

from __future__ import annotations

import dataclasses
import pickle
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.analyze.columnar import RowTable
from traceviz.analyze.model import (
    CompileStepTable,
    GapStatsTable,
    StepMetrics,
    StepTable,
    cpu_bound_share,
)

EXPECTED = (
    StepMetrics(index=0, name="ProfilerStep#1", number=1, cpu_start_ns=0, cpu_ns=100_000,
                kernels=2, memcpys=0, memsets=0, launches=2, graph_launches=0,
                gpu_start_ns=10_000, gpu_end_ns=45_000, period_ns=110_000, gpu_busy_ns=10_000,
                host_wait_ns=25_000 + 75_000, sync_wait_ns=0, graph_internal_ns=0,
                other_idle_ns=0),
    StepMetrics(index=1, name="ProfilerStep#2", number=2, cpu_start_ns=100_000,
                cpu_ns=100_000, kernels=1, memcpys=0, memsets=0, launches=1, graph_launches=0,
                gpu_start_ns=120_000, gpu_end_ns=130_000, period_ns=10_000,
                gpu_busy_ns=10_000, host_wait_ns=0, sync_wait_ns=0, graph_internal_ns=0,
                other_idle_ns=0),
    StepMetrics(index=2, name="ProfilerStep#3", number=3, cpu_start_ns=200_000, cpu_ns=50_000,
                kernels=0, memcpys=0, memsets=0, launches=0, graph_launches=0,
                gpu_start_ns=None, gpu_end_ns=None, period_ns=0, gpu_busy_ns=0,
                host_wait_ns=0, sync_wait_ns=0, graph_internal_ns=0, other_idle_ns=0),
)


@dataclasses.dataclass(frozen=True)
class _Row:
    a: int
    b: str
    c: int | None
    d: tuple[str, ...]
    e: float


class _Table(RowTable[_Row], row=_Row):
    pass


@dataclasses.dataclass(frozen=True)
class _ConstRow:
    k: int
    zero: int
    tag: tuple[str, ...]


class _ConstTable(RowTable[_ConstRow], row=_ConstRow):
    pass


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory) -> traceviz.Analysis:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000)
    b.step(2, 100_000, 100_000)
    b.kernel(launch_ts=110_000, ts=120_000, dur=10_000)
    b.step(3, 200_000, 50_000)
    return traceviz.analyze(b.write(tmp_path_factory.mktemp("table") / "t.json"))


def test_step_table_rows_are_the_hand_computed_step_metrics(analysis: traceviz.Analysis
                                                            ) -> None:
    steps = analysis.result.steps
    assert isinstance(steps, StepTable)
    assert len(steps) == 3
    assert list(steps) == list(EXPECTED)
    assert (steps[0], steps[2], steps[-1], steps[-3]) == (EXPECTED[0], EXPECTED[2],
                                                          EXPECTED[2], EXPECTED[0])
    first, second, third = steps  # unpacks as the tuple did
    assert (first, second, third) == EXPECTED
    assert type(steps[0].kernels) is int and type(steps[0].name) is str
    assert steps[2].gpu_start_ns is None and steps[2].cpu_bound_share is None
    with pytest.raises(IndexError):
        steps[3]
    with pytest.raises(IndexError):
        steps[-4]
    assert EXPECTED[1] in steps and steps.index(EXPECTED[2]) == 2


def test_step_table_slices_take_and_equality(analysis: traceviz.Analysis) -> None:
    steps = analysis.result.steps
    assert isinstance(steps[1:], StepTable) and list(steps[1:]) == list(EXPECTED[1:])
    assert list(steps.take([2, 0])) == [EXPECTED[2], EXPECTED[0]]
    assert list(steps.take(np.array([False, True, False]))) == [EXPECTED[1]]
    assert list(steps.take([])) == []
    assert steps == StepTable.from_rows(EXPECTED)
    assert steps != StepTable.from_rows(EXPECTED[:2])
    assert steps != StepTable.from_rows([EXPECTED[0], EXPECTED[1],
                                         dataclasses.replace(EXPECTED[2], cpu_ns=1)])
    assert steps != StepTable.from_rows([EXPECTED[0], EXPECTED[1],
                                         dataclasses.replace(EXPECTED[2], gpu_start_ns=0)])
    assert pickle.loads(pickle.dumps(steps)) == steps


def test_step_table_is_frozen(analysis: traceviz.Analysis) -> None:
    steps = analysis.result.steps
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps.x = 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        steps.column("kernels")[0] = 5
    with pytest.raises(ValueError):
        steps.missing("gpu_start_ns")[2] = False
    assert hash(EXPECTED[0]) == hash(steps[0])  # the rows stay frozen dataclasses
    with pytest.raises(TypeError):
        hash(steps)


def test_step_table_columns_match_the_row_properties(analysis: traceviz.Analysis) -> None:
    steps = analysis.result.steps
    assert steps.column("period_ns").tolist() == [110_000, 10_000, 0]
    assert steps.column("period_ns").dtype == np.int64
    assert steps.missing("gpu_start_ns").tolist() == [False, False, True]
    assert steps.missing("period_ns").tolist() == [False, False, False]  # not optional
    assert steps.has_gpu().tolist() == [True, True, False]
    assert steps.activities().tolist() == [s.activities for s in EXPECTED]
    assert steps.names().tolist() == [s.name for s in EXPECTED]
    share = steps.cpu_bound_share()
    assert share[:2].tolist() == [100_000 / 110_000, 0.0]  # the same float, to the last bit
    assert share[0] == cpu_bound_share(100_000, 0, 110_000) and np.isnan(share[2])


def test_columns_are_the_fields_of_the_row_dataclass() -> None:
    assert [s.name for s in StepTable.specs] == [f.name for f in
                                                 dataclasses.fields(StepMetrics)]
    assert {s.name for s in StepTable.specs if s.optional} == {"number", "gpu_start_ns",
                                                               "gpu_end_ns"}
    assert GapStatsTable.specs[0].name == "scope" and CompileStepTable.specs[2].name == "frames"

    Row, Table = _Row, _Table
    kinds = {s.name: (s.dtype.kind, s.optional) for s in Table.specs}
    assert kinds == {"a": ("i", False), "b": ("O", False), "c": ("i", True),
                     "d": ("O", False), "e": ("f", False)}
    rows = [Row(1, "x", None, ("p", "q"), 0.5), Row(2, "y", 7, ("p", "q"), 1.5)]
    t = Table.from_rows(rows)
    assert list(t) == rows and t.column("d").shape == (2,)  # equal-length tuples stay rows
    with pytest.raises(ValueError, match="missing"):
        Table({"a": [1], "b": ["x"], "c": [0], "d": [()]})
    with pytest.raises(ValueError, match="unknown"):
        Table({"a": [1], "b": ["x"], "c": [0], "d": [()], "e": [0.0], "f": [1]})
    with pytest.raises(ValueError, match="unequal"):
        Table({"a": [1, 2], "b": ["x"], "c": [0], "d": [()], "e": [0.0]})
    with pytest.raises(ValueError, match="optional"):
        Table({"a": [1], "b": ["x"], "c": [0], "d": [()], "e": [0.0]}, {"a": [True]})


def test_constant_columns_are_stored_once_and_read_as_the_others() -> None:
    Row, Table = _ConstRow, _ConstTable
    n = 1000
    shared = ("f0",)
    tags = np.empty(n, dtype=object)
    tags.fill(shared)
    t = Table({"k": np.arange(n), "zero": np.zeros(n, np.int64), "tag": tags})
    assert t.column("zero").strides == (0,) and t.column("tag").strides == (0,)
    assert t.column("k").strides == (8,)
    assert t[999] == Row(999, 0, shared) and t.column("zero").sum() == 0
    back = pickle.loads(pickle.dumps(t))
    assert back == t and back.column("zero").strides == (0,)
    assert len(pickle.dumps(t)) < 12 * n  # the constant columns are pickled once


def test_gap_stats_and_compile_tables(analysis: traceviz.Analysis) -> None:
    r = analysis.result
    assert isinstance(r.gap_stats, GapStatsTable)
    step_rows = [(g.key, g.gap_class, g.count, g.sum_ns) for g in r.gap_stats
                 if g.scope == "step"]
    assert step_rows == [("ProfilerStep#1", "host_wait", 2, 100_000)]
    (total,) = [g for g in r.gap_stats if g.scope == "all"]
    assert (total.count, total.p50_ns, total.p90_ns, total.max_ns) == (2, 25_000, 75_000, 75_000)
    assert isinstance(r.compile.steps, CompileStepTable)
    assert [c.step for c in r.compile.steps] == [s.name for s in EXPECTED]
    assert all(c.frames == () and c.regions == 0 for c in r.compile.steps)


def test_step_without_a_representable_number(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.x("user_annotation", "ProfilerStep#99999999999999999999", 0, 50_000)  # > int64
    b.kernel(launch_ts=1_000, ts=2_000, dur=1_000)
    a = traceviz.analyze(b.write(tmp_path / "big.json"))
    (s,) = a.result.steps
    assert (s.name, s.number, s.kernels) == ("ProfilerStep#99999999999999999999", None, 1)
    assert a.steps["number"].isna().tolist() == [True]


# --- the DataFrames stay complete when the reports are capped -----------------------------

STEPS = 1_100  # more than the default cap (1000)
STEP_NS = 100_000


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> traceviz.Analysis:
    """Step k (0-based) launches one kernel of ``(k % 50 + 1)`` µs at 1 µs, running 5 µs into
    the step: its period runs to the next step's kernel (100 µs; the last one's: its own
    length), and the rest of it is host wait."""
    b = TraceBuilder()
    for k in range(STEPS):
        t0 = k * STEP_NS
        b.step(k, t0, 90_000)
        b.kernel(t0 + 1_000, t0 + 5_000, (k % 50 + 1) * 1_000)
    return traceviz.analyze(b.write(tmp_path_factory.mktemp("many") / "steps.json"))


def test_dataframes_hold_every_step_beyond_the_report_cap(many: traceviz.Analysis) -> None:
    import json

    doc = json.loads(many.to_json())
    assert (doc["steps_total"], doc["steps_shown"]) == (STEPS, 1000)
    k = np.arange(STEPS)
    busy = (k % 50 + 1) * 1_000
    period = np.where(k < STEPS - 1, STEP_NS, busy)
    df = many.steps
    assert len(df) == STEPS
    assert df["step"].tolist() == k.tolist()
    assert df["name"].tolist() == [f"ProfilerStep#{i}" for i in k]
    assert df["number"].tolist() == k.tolist()
    assert df["gpu_busy_ns"].tolist() == busy.tolist()
    assert df["period_ns"].tolist() == period.tolist()
    assert df["host_wait_ns"].tolist() == (period - busy).tolist()
    assert df["gpu_start_ns"].tolist() == (k * STEP_NS + 5_000).tolist()
    assert df["cpu_bound_share"].tolist() == ((period - busy) / period).tolist()
    assert {c: str(t) for c, t in df.dtypes.items()} == {
        "step": "int64", "name": "object", "number": "Int64", "cpu_start_ns": "int64",
        "cpu_ns": "int64", "kernels": "int64", "memcpys": "int64", "memsets": "int64",
        "launches": "int64", "graph_launches": "int64", "gpu_start_ns": "Int64",
        "gpu_end_ns": "Int64", "period_ns": "int64", "gpu_busy_ns": "int64",
        "host_wait_ns": "int64", "sync_wait_ns": "int64", "graph_internal_ns": "int64",
        "other_idle_ns": "int64", "queued_ns": "int64", "cpu_bound_share": "float64"}
    gaps = many.gaps  # one tail gap per step but the last
    assert len(gaps) == STEPS - 1
    assert gaps["step_name"].tolist() == [f"ProfilerStep#{i}" for i in k[:-1]]
    assert (gaps["duration_ns"] == (period - busy)[:-1]).all()
    df.loc[0, "kernels"] = 99  # a fresh frame: writing it leaves the analysis as it was
    assert many.result.steps[0].kernels == 1


def test_step_figure_draws_at_most_its_cap(many: traceviz.Analysis) -> None:
    from traceviz.report import figures

    fig = figures.step_breakdown(many.result)
    assert figures.MAX_FIGURE_STEPS == 1000
    assert all(len(t.x) == 1000 for t in fig.data)
    assert fig.data[0].x[499] == "ProfilerStep#499" and fig.data[0].x[500] == "ProfilerStep#600"
    html = many.render("html", "cdn", max_step_rows=5000)  # a cap above the figure's own
    assert "1,000 of 1,100 steps: the first and last halves (a figure draws at most 1,000 " \
           "steps)." in html


# --- no Python object per step ---------------------------------------------------------------


def _retained_blocks(path: Path) -> tuple[int, int]:
    """(memory blocks, bytes) the analysis of ``path`` holds, allocated while analysing."""
    from traceviz.analyze.analysis import analyze

    trace = traceviz.load(path, workers=1)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        result = analyze(trace, workers=1)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    diff = after.compare_to(before, "filename")
    assert len(result.steps) > 0
    return sum(d.count_diff for d in diff), sum(d.size_diff for d in diff)


def test_analysis_keeps_no_python_object_per_step(tmp_path: Path) -> None:
    """Analysing 8 000 steps (2 kernels each) instead of 2 000 adds memory blocks by the dozen,
    not by the step, and under 700 bytes a step. Measured: the columns add -25 blocks and
    406 bytes a step; the frozen rows of boxed ints they replaced added 156 022 blocks (26 a
    step) and 1 496 bytes a step."""
    from benchmarks.many_steps import write_trace

    small, big = tmp_path / "s.json", tmp_path / "b.json"
    write_trace(small, 2_000, 2)
    write_trace(big, 8_000, 2)
    _retained_blocks(small)  # warm-up: imports and caches
    blocks_small, bytes_small = _retained_blocks(small)
    blocks_big, bytes_big = _retained_blocks(big)
    assert blocks_big - blocks_small < 300
    assert (bytes_big - bytes_small) / 6_000 < 700

"""Informative sources (the deepest call paths holding ≥ 10 % of the host wait), the summary
sentence built from them, display names and address-free labels, on hand-built traces (ns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kineto import TraceBuilder
from tests.test_host_wait_handbuilt import assert_sums, incl_ns, run, self_ns
from traceviz.analyze.host_wait import display_name, informative_sources
from traceviz.report.host_wait_section import summary_sentence, top_table_rows


def wrapped(edge_ns: int) -> TraceBuilder:
    """One gap of 100 µs (10–110): the window 10–109 and the launch tail 109–110 all inside
    `wrap` (10–110), which holds `opt` 10–50 ⊃ `aten::add` 10–40 ⊃ `inner` 10–15, then `fwd`
    50–80, `tiny` 80–85 and `edge` from 85 for ``edge_ns``."""
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("wrap.py(1): wrap", 10_000, 100_000, cat="python_function")
    b.cpu_op("opt", 10_000, 40_000)
    b.cpu_op("aten::add", 10_000, 30_000)
    b.cpu_op("inner", 10_000, 5_000)
    b.cpu_op("fwd", 50_000, 30_000)
    b.cpu_op("tiny", 80_000, 5_000)
    b.cpu_op("edge", 85_000, edge_ns)
    b.kernel(launch_ts=109_000, launch_dur=500, ts=110_000, dur=1_000)
    return b


def test_the_deepest_paths_holding_ten_percent_are_named(tmp_path: Path) -> None:
    a, h = run(wrapped(edge_ns=10_000), tmp_path)
    assert_sums(a, h)
    assert incl_ns(h)["wrap.py(1): wrap"] == 100_000 and incl_ns(h)["opt"] == 40_000
    # wrap (100 %) and opt (40 %) have a child with ≥ 10 %; inner (5 %) and tiny (5 %) are
    # small; edge holds exactly 10 %, the boundary, so it is named. Ties go by name.
    assert informative_sources(h) == (("aten::add", 30_000), ("fwd", 30_000), ("edge", 10_000))
    s = summary_sentence(h, a.totals.cpu_bound_share)
    assert s is not None and s.endswith(
        ": 30% of it in `aten::add`, 30% in `fwd`, 10% in `edge` (deepest call paths holding "
        "≥ 10% each, not the table's inclusive shares)")


def test_a_path_one_ns_under_ten_percent_is_not_named(tmp_path: Path) -> None:
    _, h = run(wrapped(edge_ns=9_999), tmp_path)
    assert [s for s, _ in informative_sources(h)] == ["aten::add", "fwd"]


def test_a_source_informative_on_two_paths_is_summed_and_its_parents_skipped(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("A", 10_000, 30_000)  # 10–40 ⊃ mm 10–35
    b.cpu_op("aten::mm", 10_000, 25_000)
    b.cpu_op("B", 40_000, 40_000)  # 40–80 ⊃ mm 40–75
    b.cpu_op("aten::mm", 40_000, 35_000)
    b.kernel(launch_ts=90_000, launch_dur=500, ts=100_000, dur=1_000)  # gap 10–100
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    # mm: 25 + 35 µs; untraced 80–90 µs (10 µs, 11 %); the launch tail 90–100 (11 %).
    assert informative_sources(h) == (("aten::mm", 60_000), ("(python / untraced)", 10_000),
                                      ("cudaLaunchKernel", 10_000))
    assert sum(ns for _, ns in informative_sources(h)) <= h.total_ns


def test_object_addresses_are_dropped_so_one_method_is_one_source(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("<built-in method add_ of Tensor object at 0x7eff10006e40>", 10_000, 20_000,
             cat="python_function")
    b.cpu_op("<built-in method add_ of Tensor object at 0x7eff10007f00>", 30_000, 20_000,
             cat="python_function")
    b.kernel(launch_ts=50_000, launch_dur=500, ts=51_000, dur=1_000)  # gap 10–51
    a, h = run(b, tmp_path)
    assert_sums(a, h)
    assert self_ns(h) == {"<built-in method add_ of Tensor object>": 40_000,
                          "cudaLaunchKernel": 1_000}


@pytest.mark.parametrize(("label", "shown"), [
    ("/work/main/workloads/train_step.py(30): step", "train_step.py(30): step"),
    ("traceviz/collect/child.py(251): <lambda>", "child.py(251): <lambda>"),
    ("<frozen runpy>(198): _run_module_as_main", "<frozen runpy>(198): _run_module_as_main"),
    ("Torch-Compiled Region: 2/0 › workloads/train_step.py(36): _sgd_momentum_",
     "Torch-Compiled Region: 2/0 › train_step.py(36): _sgd_momentum_"),
    ("Torch-Compiled Region: 0/0 › /tmp/torchinductor_root/4h/"
     "c4hed5zelgr2x4ly4kakqlcungwa4qmkkzp7gz7mdudnjcf23ksu.py(123): call",
     "Torch-Compiled Region: 0/0 › c4hed5zelgr2x4ly4kakqlc….py(123): call"),
    ("site-packages/triton/runtime/triton_heuristics.py(1407): run",
     "triton_heuristics.py(1407): run"),
    ("C:\\proj\\train.py(7): main", "train.py(7): main"),
    ("<built-in method add_ of Tensor object>", "<built-in method add_>"),
    ("<built-in method  of pybind11_builtins.record object>", "<built-in method (unnamed)>"),
    ("<built-in function isinstance>", "<built-in function isinstance>"),
    ("aten::add_", "aten::add_"),
    ("CompiledFxGraph fuhrz47b › input copies", "CompiledFxGraph fuhrz47b › input copies"),
    ("(python / untraced)", "(python / untraced)"),
])
def test_display_names_keep_file_name_and_line(label: str, shown: str) -> None:
    assert display_name(label) == shown


def test_tables_show_display_names_and_json_keeps_the_label(tmp_path: Path) -> None:
    from traceviz.report.host_wait_section import host_wait_json

    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("/abs/dir/workloads/train_step.py(30): step", 10_000, 40_000,
             cat="python_function")
    b.kernel(launch_ts=50_000, launch_dur=500, ts=51_000, dur=1_000)
    _, h = run(b, tmp_path)
    assert top_table_rows(h)[0][0] == "train_step.py(30): step"
    assert host_wait_json(h)["trace"]["inclusive"][0]["source"] == (
        "/abs/dir/workloads/train_step.py(30): step")


@pytest.mark.parametrize(("step_ns", "noted"), [(400, True), (399, False)])
def test_section_notes_the_profiler_step_call_from_one_percent(
        tmp_path: Path, step_ns: int, noted: bool) -> None:
    import traceviz
    from traceviz.analyze.host_wait import profiler_step_ns
    from traceviz.report.host_wait_section import host_wait_section

    # One gap of 40 µs (10–50): the profiler's step() call takes `step_ns` of it (1 % = 400).
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    b.kernel(launch_ts=1_000, ts=3_000, dur=7_000)
    b.cpu_op("/venv/torch/profiler/profiler.py(884): step", 20_000, step_ns,
             cat="python_function")
    b.kernel(launch_ts=49_000, launch_dur=500, ts=50_000, dur=1_000)
    trace = traceviz.load(b.write(tmp_path / "t.json"))
    a = traceviz.analyze(trace)
    assert a.host_wait_sources is not None
    assert profiler_step_ns(a.host_wait_sources) == step_ns
    section = host_wait_section(a)
    assert section is not None
    assert ("profiler's own step() call" in section.intro) is noted

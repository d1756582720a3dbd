"""Ambiguity health codes (``traceviz/analyze/health/ambiguity.py``; ``docs/metrics.md``,
"Ambiguity"): on hand-built traces each code is named with its count and first event, absent from
a clean trace, never raised by a CUDA-graph replay, follows its documented attribution rule, and
fails ``--strict``; the generators (``tests/strategies.ambiguous``, ``benchmarks.fuzz``) make
each."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

import traceviz
from benchmarks.fuzz import AMBIGUITY_MUTATIONS
from tests.kineto import CPU_PID, CPU_TID, TraceBuilder, us
from tests.strategies import AMBIGUITIES, GeneratedTrace, ambiguous
from tests.test_fuzz_property import (
    assert_invariants,
    fuzz_settings,
    parallel_loader,
    strict_json,
    written,
)
from traceviz.analyze.health.ambiguity import AMBIGUITY_CODES
from traceviz.analyze.health.validity import DATA_VALIDITY_CODES
from traceviz.analyze.model import Analysis, HealthWarning


def analyze_b(b: TraceBuilder, tmp_path: Path, name: str = "t.json") -> Analysis:
    return traceviz.analyze(traceviz.load(b.write(tmp_path / name)))


def by_code(a: Analysis) -> dict[str, HealthWarning]:
    return {h.code: h for h in a.health}


def traceviz_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=120)


def flow(b: TraceBuilder, ph: str, flow_id: int, ts: int, pid: int = CPU_PID,
         tid: int = CPU_TID, name: str = "ac2g") -> None:
    ev: dict[str, Any] = {"ph": ph, "id": flow_id, "pid": pid, "tid": tid, "ts": us(ts),
                          "cat": name, "name": name}
    if ph == "f":
        ev["bp"] = "e"
    b.events.append(ev)


def clean() -> TraceBuilder:
    """Three 100 µs steps, one kernel each with its ac2g flow pair, one 3-node graph replay in
    step 2, and an orphan flow end (a non-launch runtime call's, as Kineto writes)."""
    b = TraceBuilder()
    for i in range(3):
        t0 = i * 100_000
        b.step(i + 1, t0, 100_000)
        corr = b.kernel(launch_ts=t0 + 1_000, ts=t0 + 10_000, dur=5_000, name=f"k{i}")
        flow(b, "s", corr, t0 + 1_000)
        flow(b, "f", corr, t0 + 10_000, pid=0, tid=7)
    g = b.launch(150_000, 2_000, name="cudaGraphLaunch")
    flow(b, "s", g, 150_000)
    for n in range(3):
        b.gpu(g, 160_000 + n * 1_000, 500, name=f"node{n}")
        flow(b, "f", g, 160_000 + n * 1_000, pid=0, tid=7)
    b.runtime("cudaStreamIsCapturing", 250_000, 500)
    flow(b, "f", b._corr, 250_000)  # orphan end, no start: never judged
    return b


def test_a_clean_trace_with_flows_and_a_graph_replay_has_no_ambiguity(tmp_path: Path) -> None:
    a = analyze_b(clean(), tmp_path)
    assert not [h for h in a.health if h.strict]
    assert a.totals.graph_launches == 1 and a.graph_replays[0].nodes == 3


def test_flows_are_loaded_as_their_own_table(tmp_path: Path) -> None:
    t = traceviz.load(clean().write(tmp_path / "t.json"))
    assert len(t.flows) == 3 * 2 + 1 + 3 + 1
    assert set(t.flows.columns) == {"cat", "name", "ts_ns", "id"}
    assert t.flows["ts_ns"].is_monotonic_increasing
    # no flow row leaks into the other tables
    assert len(t.gpu) == 6 and len(t.runtime) == 5


def test_31_kernels_on_one_launch_call_are_named(tmp_path: Path) -> None:
    """The issue's trace: one cudaLaunchKernel, 31 kernels carrying its correlation id."""
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    corr = b.launch(1_000)
    for i in range(31):
        b.gpu(corr, 10_000 + i * 2_000, 1_000, name=f"k{i}")
    a = analyze_b(b, tmp_path)
    w = by_code(a)["multi_activity_launch"]
    assert w.strict and w.count == 30
    assert w.first_event is not None
    assert (w.first_event.table, w.first_event.name, w.first_event.ts_ns) == ("gpu", "k1", 12_000)
    assert "'cudaLaunchKernel'" in w.message and "30 activities" in w.message
    # The documented rule: every activity is attributed to the one call and its step.
    assert a.steps[0].kernels == 31 and a.steps[0].launches == 1
    assert a.totals.attributed == 31


@pytest.mark.parametrize("api", ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"])
def test_a_graph_launch_owning_31_kernels_is_not_an_ambiguity(tmp_path: Path, api: str) -> None:
    b = TraceBuilder()
    b.step(1, 0, 1_000_000)
    corr = b.launch(1_000, name=api)
    for i in range(31):
        b.gpu(corr, 10_000 + i * 2_000, 1_000, name=f"k{i}")
    a = analyze_b(b, tmp_path)
    assert not [h for h in a.health if h.strict]
    assert a.graph_replays[0].nodes == 31


@pytest.mark.parametrize(("api", "cat", "flagged"), [
    ("cudaLaunchKernel", "kernel", True),
    ("cuLaunchKernel", "kernel", True),
    ("cudaLaunchKernelExC_v11060", "kernel", True),
    ("cudaMemcpyAsync", "gpu_memcpy", True),
    ("cudaMemsetAsync", "gpu_memset", True),
    ("cudaMemcpyBatchAsync", "gpu_memcpy", False),  # a batch: several copies by design
    ("cudaLaunchCooperativeKernelMultiDevice", "kernel", False),
])
def test_which_apis_start_exactly_one_activity(tmp_path: Path, api: str, cat: str,
                                               flagged: bool) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    corr = b.launch(1_000, name=api)
    b.gpu(corr, 10_000, 1_000, cat=cat, stream=7)
    b.gpu(corr, 10_000, 1_000, cat=cat, stream=8)
    w = by_code(analyze_b(b, tmp_path)).get("multi_activity_launch")
    assert (w is not None) is flagged
    if w is not None:
        assert w.count == 1


def test_one_activity_per_launch_is_not_flagged(tmp_path: Path) -> None:
    a = analyze_b(clean(), tmp_path)
    assert "multi_activity_launch" not in by_code(a)


def test_shared_correlation_is_the_duplicate_call_and_the_earlier_call_owns(
        tmp_path: Path) -> None:
    b = clean()
    corr = b.kernel(launch_ts=201_000, ts=220_000, dur=1_000, name="k3")
    b.x("cuda_runtime", "cudaLaunchKernel", 250_000, 1_000, correlation=corr)
    b.x("cuda_runtime", "cudaLaunchKernel", 260_000, 1_000, correlation=corr)
    a = analyze_b(b, tmp_path)
    w = by_code(a)["shared_correlation"]
    assert w.strict and w.count == 2
    assert w.first_event is not None and w.first_event.ts_ns == 250_000
    assert "multi_activity_launch" not in by_code(a)
    assert a.steps[2].kernels == 2  # owned by the call at 201 µs: step 3


def test_launch_on_several_devices_is_named_once_per_call(tmp_path: Path) -> None:
    b = clean()
    for t in (50_000, 60_000):
        corr = b.launch(t, name="cudaMemcpyBatchAsync")
        b.gpu(corr, t + 5_000, 100, cat="gpu_memcpy", name="Memcpy DtoD", device=0, stream=30)
        b.gpu(corr, t + 5_000, 100, cat="gpu_memcpy", name="Memcpy DtoD", device=1, stream=30)
    a = analyze_b(b, tmp_path)
    w = by_code(a)["launch_on_several_devices"]
    assert w.strict and w.count == 2
    assert w.first_event is not None
    assert (w.first_event.table, w.first_event.name, w.first_event.ts_ns) == (
        "runtime", "cudaMemcpyBatchAsync", 50_000)
    assert "multi_activity_launch" not in by_code(a)  # a batch copy may start several
    assert a.steps[0].memcpys == 4  # all attributed to their call's step
    assert by_code(a)["multiple_devices"].count == 2


def test_a_kernel_launch_on_two_devices_raises_both_codes(tmp_path: Path) -> None:
    b = clean()
    corr = b.launch(50_000)
    b.gpu(corr, 55_000, 100, device=0, stream=30)
    b.gpu(corr, 55_000, 100, device=1, stream=30)
    codes = by_code(analyze_b(b, tmp_path))
    assert codes["launch_on_several_devices"].count == 1
    assert codes["multi_activity_launch"].count == 1


def test_a_graph_replay_on_two_devices_is_not_flagged(tmp_path: Path) -> None:
    b = clean()
    g = b.launch(50_000, name="cudaGraphLaunch")
    b.gpu(g, 55_000, 100, device=0, stream=30)
    b.gpu(g, 55_000, 100, device=1, stream=30)
    assert not [h for h in analyze_b(b, tmp_path).health if h.strict]


@pytest.mark.parametrize(("end_offset_ns", "flagged"), [(0, False), (-1, True)])
def test_flow_end_before_start_edge_equal_times_are_fine(tmp_path: Path, end_offset_ns: int,
                                                        flagged: bool) -> None:
    b = clean()
    corr = b.kernel(launch_ts=210_000, ts=220_000, dur=1_000, name="k3")
    flow(b, "s", corr, 210_000)
    flow(b, "f", corr, 210_000 + end_offset_ns, pid=0, tid=7)
    a = analyze_b(b, tmp_path)
    w = by_code(a).get("flow_end_before_start")
    assert (w is not None) is flagged
    if w is not None:
        assert w.strict and w.count == 1
        assert w.first_event is not None
        assert (w.first_event.table, w.first_event.name, w.first_event.ts_ns,
                w.first_event.dur_ns) == ("flow", "ac2g", 209_999, None)
        assert "flow event 'ac2g' at ts=209.999 µs" in w.message
    # Flows never change the metrics: the kernel is attributed by correlation.
    assert a.steps[2].kernels == 2


def test_backward_flows_are_counted_per_end_and_keyed_by_name_and_id(tmp_path: Path) -> None:
    b = clean()
    g = b.launch(210_000, name="cudaGraphLaunch")
    flow(b, "s", g, 210_000)
    for n in range(3):  # a graph replay: one start, three ends
        b.gpu(g, 220_000 + n * 1_000, 500, name=f"g{n}")
        flow(b, "f", g, 208_000 + n * 1_000, pid=0, tid=7)  # 208, 209: early; 210: equal
    flow(b, "s", 7, 300_000, name="fwdbwd")  # same id, other name: its own flow
    flow(b, "f", 7, 200_000, name="fwdbwd")
    flow(b, "f", 7, 100, name="other")  # no start under this name: not judged
    a = analyze_b(b, tmp_path)
    w = by_code(a)["flow_end_before_start"]
    assert w.count == 3
    assert w.first_event is not None
    assert (w.first_event.name, w.first_event.ts_ns) == ("fwdbwd", 200_000)


def test_string_and_hex_flow_ids_pair_up(tmp_path: Path) -> None:
    b = clean()
    b.events.append({"ph": "s", "id": "0x10", "pid": 1, "tid": 1, "ts": us(210_000),
                     "cat": "x", "name": "x"})
    b.events.append({"ph": "f", "id": 16, "pid": 1, "tid": 1, "ts": us(209_000),
                     "cat": "x", "name": "x", "bp": "e"})
    b.events.append({"ph": "s", "id": "abc", "pid": 1, "tid": 1, "ts": us(210_000),
                     "cat": "x", "name": "x"})
    b.events.append({"ph": "f", "id": "abc", "pid": 1, "tid": 1, "ts": us(209_500),
                     "cat": "x", "name": "x", "bp": "e"})
    assert by_code(analyze_b(b, tmp_path))["flow_end_before_start"].count == 2


def test_nested_steps_are_named_and_follow_the_documented_attribution(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)  # outer
    b.step(2, 10_000, 20_000)  # inner: [10, 30] µs
    b.step(3, 200_000, 50_000)
    b.kernel(launch_ts=5_000, ts=6_000, dur=100, name="before_inner")  # outer only: step 1
    b.kernel(launch_ts=15_000, ts=16_000, dur=100, name="in_inner")  # both: the inner wins
    b.kernel(launch_ts=50_000, ts=51_000, dur=100, name="after_inner")  # outer, after inner
    a = analyze_b(b, tmp_path)
    w = by_code(a)["nested_steps"]
    assert w.strict and w.count == 1
    assert w.first_event is not None
    assert (w.first_event.table, w.first_event.name, w.first_event.ts_ns) == (
        "cpu", "ProfilerStep#2", 10_000)
    kernels = {s.name: s.kernels for s in a.steps}
    assert kernels == {"ProfilerStep#1": 1, "ProfilerStep#2": 1, "ProfilerStep#3": 0}
    assert a.totals.unattributed == 1  # after_inner: the inner window (last to start) ended


def test_steps_with_equal_starts_nest_and_the_longest_takes_every_call(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.step(2, 0, 100_000)
    b.step(2, 0, 100_000)  # an exact duplicate: one window
    b.kernel(launch_ts=5_000, ts=6_000, dur=100)
    a = analyze_b(b, tmp_path)
    assert by_code(a)["nested_steps"].count == 1
    assert {s.name: s.kernels for s in a.steps} == {"ProfilerStep#1": 0, "ProfilerStep#2": 1}


def test_overlapping_but_not_nested_steps_are_not_nested(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.step(2, 50_000, 100_000)
    b.kernel(launch_ts=5_000, ts=6_000, dur=100)
    codes = by_code(analyze_b(b, tmp_path))
    assert "nested_steps" not in codes and codes["overlapping_steps"].count == 1


def test_ambiguity_codes_are_strict_and_distinct_from_the_data_validity_ones() -> None:
    assert len(set(AMBIGUITY_CODES)) == len(AMBIGUITY_CODES) == 4
    assert not set(AMBIGUITY_CODES) & set(DATA_VALIDITY_CODES)
    assert set(AMBIGUITIES) == {*AMBIGUITY_CODES, "shared_correlation"}
    assert set(AMBIGUITY_MUTATIONS) == set(AMBIGUITIES)


def nested_and_31(tmp_path: Path) -> Path:
    b = clean()
    b.step(9, 10_000, 5_000)  # inside step 1
    corr = b.launch(210_000)
    for i in range(31):
        b.gpu(corr, 220_000 + i * 1_000, 500, name=f"k{i}")
    return b.write(tmp_path / "ambiguous.json")


def test_report_json_names_each_ambiguity_with_its_first_event(tmp_path: Path) -> None:
    r = traceviz_cli("report", str(nested_and_31(tmp_path)), "--format", "json")
    assert r.returncode == 0, r.stderr
    health = {h["code"]: h for h in json.loads(r.stdout)["health"]}
    assert health["multi_activity_launch"]["count"] == 30
    assert health["multi_activity_launch"]["strict"] is True
    assert health["multi_activity_launch"]["first_event"] == {
        "table": "gpu", "name": "k1", "ts_us": 221.0, "dur_us": 0.5}
    assert health["nested_steps"]["first_event"]["name"] == "ProfilerStep#9"


def test_strict_report_exits_1_on_an_ambiguity_and_0_on_the_clean_trace(tmp_path: Path) -> None:
    bad, good = nested_and_31(tmp_path), clean().write(tmp_path / "clean.json")
    r = traceviz_cli("report", str(bad), "--format", "json", "--strict")
    assert r.returncode == 1, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("traceviz: error: --strict: 2 ")
    assert "multi_activity_launch (30)" in last and "nested_steps (1)" in last
    assert "Traceback" not in r.stderr
    assert json.loads(r.stdout)["health"]  # the report is still written
    assert traceviz_cli("report", str(good), "--format", "json", "--strict").returncode == 0
    assert traceviz_cli("report", str(bad), "--format", "json").returncode == 0


def test_strict_check_exits_1_on_an_ambiguity_before_its_verdicts(tmp_path: Path) -> None:
    bad, good = nested_and_31(tmp_path), clean().write(tmp_path / "clean.json")
    expect = ["-e", "ambiguous:launch!=WIN"]
    r = traceviz_cli("check", str(good), str(bad), *expect, "--strict")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "multi_activity_launch (30)" in r.stderr.strip().splitlines()[-1]
    assert traceviz_cli("check", str(good), str(bad), *expect).returncode != 1
    again = clean().write(tmp_path / "again.json")
    assert traceviz_cli("check", str(good), str(again), "-e", "again:launch!=WIN",
                        "--strict").returncode != 1


def test_strict_compare_fails_on_an_ambiguous_mode(tmp_path: Path) -> None:
    bad, good = nested_and_31(tmp_path), clean().write(tmp_path / "clean.json")
    r = traceviz_cli("compare", str(good), str(bad), "--format", "json", "--strict")
    assert r.returncode == 1
    assert "multi_activity_launch (30)" in r.stderr.splitlines()[-1]


@pytest.mark.parametrize("code", sorted(AMBIGUITY_MUTATIONS))
def test_each_fuzz_mutation_makes_its_ambiguity(tmp_path: Path, code: str) -> None:
    made = 0
    for seed in range(5):
        doc = clean().document()
        AMBIGUITY_MUTATIONS[code](random.Random(seed), doc)
        path = tmp_path / f"{code}-{seed}.json"
        path.write_text(json.dumps(doc))
        made += code in by_code(traceviz.analyze(traceviz.load(path)))
    assert made == 5


def test_fuzz_mutations_make_their_ambiguity_from_scratch(tmp_path: Path) -> None:
    """On a trace with no flow and no step, the flow and nested-step mutations add them."""
    b = TraceBuilder()
    b.kernel(launch_ts=1_000, ts=5_000, dur=100)
    for code in ("flow_end_before_start", "nested_steps"):
        doc = b.document()
        AMBIGUITY_MUTATIONS[code](random.Random(0), doc)
        path = tmp_path / f"{code}.json"
        path.write_text(json.dumps(doc))
        assert code in by_code(traceviz.analyze(traceviz.load(path))), code


@fuzz_settings(300)
@given(ambiguous())
def test_generated_ambiguities_are_named_with_their_exact_counts(gen: GeneratedTrace) -> None:
    with written(gen) as path:
        trace = traceviz.load(path)
    a = traceviz.analyze(trace)
    assert_invariants(a)
    counts = {h.code: h.count for h in a.health if h.strict}
    assert counts == dict(gen.injected), (counts, gen.injected)
    strict_json(a, trace)


@fuzz_settings(60)
@given(ambiguous())
def test_ambiguities_are_found_alike_by_the_serial_and_the_parallel_loader(
        gen: GeneratedTrace) -> None:
    with written(gen) as path:
        t1 = traceviz.load(path)
        with parallel_loader():
            t2 = traceviz.load(path, workers=3)
    assert t1.flows.equals(t2.flows)
    assert strict_json(traceviz.analyze(t1), t1) == strict_json(traceviz.analyze(t2), t2)

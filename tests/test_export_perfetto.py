"""``traceviz export``: the trace plus overlay tracks, valid Chrome trace JSON that analyzes
exactly like the original."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import traceviz
from tests.conftest import shared_hta_traces
from tests.kineto import TraceBuilder
from traceviz.errors import OutputExistsError
from traceviz.export.perfetto import PID_BASE, default_output, us
from traceviz.vocab import OVERLAY_CATEGORY

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "tests/data/gpu"
#: Fields of the JSON report's ``trace`` section that describe the file, not its events.
FILE_FIELDS = ("path", "size_bytes", "json_bytes", "gzipped")


def read(path: Path, exact: bool = False) -> Any:
    """The JSON document; ``exact``: numbers with a fraction as :class:`Decimal` (epoch-µs
    timestamps do not fit a float64 to the nanosecond)."""
    data = path.read_bytes()
    text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return json.loads(text, parse_float=Decimal) if exact else json.loads(text)


def overlay(doc: Any, pid: int) -> list[dict[str, Any]]:
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if e.get("pid") == pid]


def report_without_file_facts(a: traceviz.Analysis) -> dict[str, Any]:
    doc = json.loads(a.to_json())
    for key in FILE_FIELDS:
        doc["trace"].pop(key)
    return doc


def assert_valid_chrome_trace(path: Path) -> None:
    """The trace-event format's required fields, and properly nested slices per track."""
    doc = read(path, exact=True)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    by_track: dict[tuple[Any, Any], list[tuple[Decimal, Decimal]]] = {}
    for e in events:
        assert isinstance(e.get("ph"), str) and "name" in e and "pid" in e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, Decimal)) and e["dur"] >= 0
            if e.get("cat") == OVERLAY_CATEGORY:
                by_track.setdefault((e["pid"], e["tid"]), []).append(
                    (e["ts"], e["ts"] + e["dur"]))
    for spans in by_track.values():  # overlay slices of one track never overlap
        spans.sort()
        for (_, end), (start, _) in pairwise(spans):
            assert start >= end


@pytest.mark.parametrize("name", ["elementwise_eager", "elementwise_cudagraph",
                                  "elementwise_compile", "elementwise_reduce-overhead"])
def test_export_round_trips_with_identical_metrics_and_one_slice_per_gap(
        name: str, tmp_path: Path) -> None:
    src = GPU / f"{name}.pt.trace.json.gz"
    a = traceviz.analyze(src)
    out = tmp_path / "out.json.gz"
    result = a.export_perfetto(out)
    doc = read(out)
    assert_valid_chrome_trace(out)
    original = read(src)
    assert doc["traceEvents"][: len(original["traceEvents"])] == original["traceEvents"]
    assert {k: v for k, v in doc.items() if k != "traceEvents"} == \
        {k: v for k, v in original.items() if k != "traceEvents"}
    events = overlay(doc, result.pid)
    assert len(doc["traceEvents"]) == len(original["traceEvents"]) + len(events)
    assert all(e["cat"] == OVERLAY_CATEGORY for e in events)
    gap_tracks = {e["tid"] for e in events if e["name"] == "thread_name"
                  and e["args"]["name"].startswith("idle gaps")}
    gap_slices = [e for e in events if e["ph"] == "X" and e["tid"] in gap_tracks]
    assert len(gap_slices) == len(a.gaps) == result.gap_slices
    assert Counter(e["name"] for e in gap_slices) == Counter(a.gaps["class"].astype(str))
    replays = [e for e in events if e["ph"] == "X" and e["name"].startswith("graph replay")]
    assert len(replays) == len(a.graph_replays) == result.replay_slices
    back = traceviz.analyze(out)
    assert report_without_file_facts(back) == report_without_file_facts(a)
    assert back.trace.meta.events == a.trace.meta.events


def test_overlay_slices_carry_the_numbers_of_the_analysis(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000, name="A")
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_001, name="C")  # host_wait 15-40
    src = b.write(tmp_path / "t.json")
    a = traceviz.analyze(src)
    r = a.export_perfetto(tmp_path / "o.json")
    events = overlay(read(tmp_path / "o.json"), r.pid)
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names == {"steps", "idle gaps: GPU 0 stream 7"}
    assert {e["args"]["name"] for e in events if e["name"] == "process_name"} == {"traceviz"}
    (gap,) = [e for e in events if e["ph"] == "X" and e["name"] == "host_wait"]
    base_us = 0  # TraceBuilder writes ts relative to baseTimeNanoseconds
    assert (gap["ts"], gap["dur"], gap["args"]["length_us"]) == (base_us + 15.0, 25.0, 25.0)
    assert gap["args"]["ending_activity"] == "C" and gap["args"]["step"] == "ProfilerStep#1"
    (step,) = [e for e in events if e["ph"] == "X" and e["name"] == "ProfilerStep#1"]
    assert step["dur"] == pytest.approx(35.001)
    assert step["args"]["busy_pct"] == pytest.approx(100 * 10_001 / 35_001, abs=1e-3)
    assert step["args"]["cpu_bound_share"] == pytest.approx(25_000 / 35_001, abs=1e-6)


def test_timestamps_are_exact_microseconds() -> None:
    assert [us(0), us(1), us(1500), us(-1500), us(1_790_000_000_000_123)] == [
        "0.000", "0.001", "1.500", "-1.500", "1790000000000.123"]


def test_overlapping_step_periods_go_to_separate_lanes(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10_000)
    b.kernel(launch_ts=1_000, ts=20_000, dur=30_000, name="long")  # 20-50, step 1
    b.step(2, 10_000, 10_000)
    b.kernel(launch_ts=11_000, ts=30_000, dur=5_000, name="short", stream=18)  # 30-35, step 2
    b.kernel(launch_ts=12_000, ts=40_000, dur=5_000, name="short2", stream=18)  # gap 35-40
    a = traceviz.analyze(b.write(tmp_path / "t.json"))
    assert "overlapping_step_gpu_work" in set(a.health["code"])
    r = a.export_perfetto(tmp_path / "o.json")
    assert_valid_chrome_trace(tmp_path / "o.json")
    assert any("(overlap 1)" in t for t in r.tracks)


def test_pid_avoids_every_pid_of_the_trace_and_legacy_arrays_work(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000)
    b.x("cpu_op", "squatter", 50_000, 1_000, pid=PID_BASE, tid=1)
    src = tmp_path / "legacy.json"
    src.write_text(json.dumps(b.document()["traceEvents"]))
    a = traceviz.analyze(src)
    r = a.export_perfetto(tmp_path / "o.json")
    assert r.pid == PID_BASE + 1
    doc = read(tmp_path / "o.json")
    assert isinstance(doc, list)
    assert len(overlay(doc, r.pid)) > 0
    assert traceviz.analyze(tmp_path / "o.json").to_dict()["steps"] == a.to_dict()["steps"]


def test_empty_event_array_gets_only_the_overlay(tmp_path: Path) -> None:
    src = tmp_path / "empty.json"
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)
    src = b.write(src)
    a = traceviz.analyze(src)
    doc = json.loads(src.read_text())
    doc["traceEvents"] = []
    empty = tmp_path / "e.json"
    empty.write_text(json.dumps({"traceEvents": [], "x": 1}))
    from traceviz.export.perfetto import write_overlay

    write_overlay(empty, tmp_path / "o.json", a.trace, a.result)
    out = read(tmp_path / "o.json")
    assert out["x"] == 1 and all(e["cat"] == OVERLAY_CATEGORY for e in out["traceEvents"])


def test_existing_output_needs_force_and_the_trace_itself_is_never_overwritten(
        tmp_path: Path) -> None:
    src = GPU / "elementwise_eager.pt.trace.json.gz"
    a = traceviz.analyze(src)
    out = tmp_path / "o.json.gz"
    out.write_text("keep")
    with pytest.raises(OutputExistsError):
        a.export_perfetto(out)
    assert out.read_text() == "keep"
    a.export_perfetto(out, force=True)
    assert read(out)["traceEvents"]
    assert default_output(Path("r/eager.pt.trace.json.gz")) == Path(
        "eager.pt.trace.traceviz.json.gz")


def test_export_without_out_writes_in_the_working_directory_not_beside_the_trace(
        tmp_path: Path) -> None:
    src = GPU / "elementwise_eager.pt.trace.json.gz"
    r = subprocess.run([sys.executable, "-m", "traceviz", "export", str(src)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "elementwise_eager.pt.trace.traceviz.json.gz").is_file()
    assert not (src.parent / "elementwise_eager.pt.trace.traceviz.json.gz").exists()


def test_export_command_writes_the_overlay_and_says_where(tmp_path: Path) -> None:
    src = GPU / "elementwise_eager.pt.trace.json.gz"
    out = tmp_path / "x.json"
    r = subprocess.run([sys.executable, "-m", "traceviz", "export", str(src), "-o", str(out),
                        "--format", "perfetto"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "94 gap" in r.stderr and "ui.perfetto.dev" in r.stderr
    assert out.read_bytes()[:1] == b"{"  # no .gz: plain JSON
    again = subprocess.run([sys.executable, "-m", "traceviz", "export", str(src), "-o",
                            str(out)], capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and again.stderr.count("\n") == 1
    assert "exists" in again.stderr


def test_export_refuses_an_existing_output_before_reading_the_trace(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("not json")
    out = tmp_path / "x.json"
    out.write_text("keep")
    r = subprocess.run([sys.executable, "-m", "traceviz", "export", str(broken), "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "exists; use --force" in r.stderr, r.stderr
    assert out.read_text() == "keep"


SHARED = shared_hta_traces()


@pytest.mark.skipif(not SHARED, reason="../shared/cases/hta is absent")
@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name.split(".")[0])
def test_export_round_trips_on_shared_hta_traces(path: Path, tmp_path: Path) -> None:
    a = traceviz.analyze(path)
    result = a.export_perfetto(tmp_path / "o.json.gz")
    assert result.gap_slices == len(a.gaps)
    assert result.replay_slices == len(a.graph_replays)
    assert_valid_chrome_trace(tmp_path / "o.json.gz")
    back = traceviz.analyze(tmp_path / "o.json.gz")
    assert report_without_file_facts(back) == report_without_file_facts(a)

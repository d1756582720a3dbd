"""The loader accepts every format variant of docs/kineto-trace-format.md §11, in integer ns."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.errors import NotATraceError, TraceDecodeError, TraceNotFoundError


def small() -> TraceBuilder:
    b = TraceBuilder()
    b.step(3, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=2_000)
    return b


def test_float_microseconds_become_exact_nanoseconds(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"baseTimeNanoseconds": 1, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
         "ts": 4438845301080.667, "dur": 0.001, "args": {"correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
         "ts": 7889238000000.999, "dur": 12.5, "args": {"correlation": 6}},
    ]}))
    g = traceviz.load(p).gpu
    assert list(g["ts_ns"]) == [4438845301080667, 7889238000000999]
    assert list(g["dur_ns"]) == [1, 12500]


def test_gzip_is_recognised_by_magic_not_suffix(tmp_path: Path) -> None:
    p = small().write(tmp_path / "looks_plain.json", gzipped=True)
    t = traceviz.load(p)
    assert t.meta.gzipped and len(t.gpu) == 1


def test_legacy_array_form_with_integer_epoch_microseconds(tmp_path: Path) -> None:
    p = tmp_path / "legacy.json"
    p.write_text(json.dumps([
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 1615207264505000, "dur": 5, "args": {"correlation": 9, "external id": 3}},
        {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7",
         "ts": 1615207264505010, "dur": 4, "args": {"correlation": 9}},
    ]))
    t = traceviz.load(p)
    assert t.meta.form == "array" and t.meta.timestamps == "absolute"
    assert int(t.gpu["ts_ns"].iat[0]) == 1615207264505010_000
    assert int(t.gpu["stream"].iat[0]) == 7
    assert int(t.runtime["external_id"].iat[0]) == 3
    a = traceviz.analyze(t)
    assert a.totals.kernel_launches == 1 and a.steps[0].name == "trace"


def test_string_ids_odd_values_and_duplicate_metadata_are_tolerated(tmp_path: Path) -> None:
    b = small()
    b.events.append({"ph": "X", "cat": "kernel", "name": "k2", "pid": "0", "tid": 7,
                     "ts": 20.0, "dur": 1.0,
                     "args": {"correlation": "N/A", "est. achieved occupancy %": "inf",
                              "Python parent id": None}})
    b.events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100,
                     "ts": 21.0, "dur": 1.0})  # no args at all
    b.events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
                     "args": {"name": "stream 7 "}})
    b.events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
                     "args": {"name": "stream 7 "}})
    b.events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100,
                     "tid": 100, "ts": 1.0, "s": "t"})
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert len(t.gpu) == 2 and int(t.gpu["correlation"].iat[1]) == -1
    assert t.meta.thread_names == {(0, 7): "stream 7"}
    a = traceviz.analyze(t)
    assert a.totals.unlinked == 1


def test_bare_nan_tokens_are_repaired_with_a_note(tmp_path: Path) -> None:
    text = json.dumps(small().document()).replace('"dur": 2.0', '"dur": 2.0, "bw": N/A', 1)
    p = tmp_path / "t.json"
    p.write_text(text)
    t = traceviz.load(p)
    assert any("repaired" in n for n in t.meta.notes) and len(t.gpu) == 1


def test_metadata_and_devices_are_kept(tmp_path: Path) -> None:
    b = small()
    b.top.update({"distributedInfo": {"rank": 3, "world_size": 8},
                  "traceviz": {"workload": "w", "mode": "eager"}})
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert t.meta.rank == 3 and t.meta.devices[0].name == "Test GPU"
    assert t.meta.metadata["traceviz"]["mode"] == "eager"
    assert t.meta.base_time_ns is not None and t.meta.timestamps == "relative"


def test_chunked_decoding_matches_single_chunk(tmp_path: Path, monkeypatch) -> None:
    b = TraceBuilder()
    for i in range(300):
        b.step(i, i * 100_000, 100_000)
        b.kernel(launch_ts=i * 100_000 + 1_000, ts=i * 100_000 + 5_000, dur=1_000 + i)
    p = b.write(tmp_path / "t.json")
    whole = traceviz.analyze(traceviz.load(p))
    import traceviz.trace.loader as load_mod

    monkeypatch.setattr(load_mod, "CHUNK_BYTES", 4096)
    chunked = traceviz.analyze(traceviz.load(p))
    assert chunked.steps == whole.steps and len(whole.steps) == 300


@pytest.mark.parametrize(
    ("content", "error", "needle"),
    [
        (b"", TraceDecodeError, "empty"),
        (b"hello", TraceDecodeError, "not JSON"),
        (b'{"traceEvents": [{"ph": "X"', TraceDecodeError, "truncated"),
        (b'{"foo": 1}', NotATraceError, "traceEvents"),
        (b'{"traceEvents": [1, 2]}', NotATraceError, "not event objects"),
        (b"\x1f\x8b\x08\x00garbage", TraceDecodeError, "gzip"),
    ],
)
def test_bad_input_raises_a_clear_error(tmp_path: Path, content: bytes, error: type,
                                        needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(error, match=needle):
        traceviz.load(p)


def test_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(TraceNotFoundError):
        traceviz.load(tmp_path / "nope.json")


def test_truncated_gzip_member_is_reported(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(small().document()).encode())
    p = tmp_path / "t.json.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceDecodeError, match="gzip"):
        traceviz.load(p)

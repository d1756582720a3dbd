"""Hostile input: the loader either loads it or raises a TracevizError — never anything else."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.errors import NotATraceError, TraceDecodeError, TraceTooLargeError
from traceviz.trace.chunk import decode_span
from traceviz.trace.decode import INVALID_NS, split_event_array


def small() -> TraceBuilder:
    b = TraceBuilder()
    b.step(3, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=2_000)
    return b


def _text(b: TraceBuilder) -> bytes:
    return json.dumps(b.document()).encode()


def test_non_utf8_byte_in_a_top_level_value_is_not_a_traceback(tmp_path: Path) -> None:
    """Issue 12: UnicodeDecodeError escaped from ``_split_top_level``."""
    data = _text(small()).replace(b'{"', b'{"trace_name": "ab\xffcd", "', 1)
    p = tmp_path / "t.json"
    p.write_bytes(data)
    t = traceviz.load(p)
    assert len(t.gpu) == 1
    assert "trace_name" not in t.meta.metadata
    assert "top-level key 'trace_name' is not valid JSON; ignored" in t.meta.notes


def test_external_id_beyond_64_bits_is_missing_not_an_overflow(tmp_path: Path) -> None:
    """Issue 12: OverflowError from ``columns_from_events``."""
    b = small()
    for e in b.events:
        if e.get("cat") == "kernel":
            e["args"]["External id"] = 2**64 + 5
            e["args"]["correlation"] = -(2**70)
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert list(t.gpu["external_id"]) == [-1]
    assert list(t.gpu["correlation"]) == [-1]


def test_timestamps_beyond_int64_nanoseconds_do_not_wrap(tmp_path: Path) -> None:
    b = small()
    b.events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                     "ts": 1e300, "dur": 9.3e15, "args": {"correlation": 99}})
    t = traceviz.load(b.write(tmp_path / "t.json"))
    big = t.gpu[t.gpu["correlation"] == 99]
    # Marked invalid (never wrapped, never turned into 0); the analysis excludes and names it.
    assert list(big["ts_ns"]) == [INVALID_NS] and list(big["dur_ns"]) == [INVALID_NS]
    codes = {w.code for w in traceviz.analyze(t).health}
    assert {"invalid_timestamp", "invalid_duration"} <= codes


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_deeply_nested_args_are_a_decode_error(tmp_path: Path, depth: int) -> None:
    nest = b"[" * depth + b"1" + b"]" * depth
    data = _text(small()).replace(b'"args": {', b'"args": {"deep": ' + nest + b", ", 1)
    p = tmp_path / "t.json"
    p.write_bytes(data)
    try:
        t = traceviz.load(p)
    except TraceDecodeError as exc:
        assert "nested too deeply" in str(exc)
    else:  # a depth msgspec can skip is simply ignored
        assert len(t.gpu) == 1


def test_lone_surrogate_escapes_are_repaired(tmp_path: Path) -> None:
    b = small()
    b.events[-1]["name"] = "k\ud800x"  # json.dumps writes the escape \ud800
    b.events.append({"ph": "X", "cat": "kernel", "name": "nan", "pid": 0, "tid": 7,
                     "ts": 50.0, "dur": float("nan"), "args": {"correlation": 77}})
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert "k\ufffdx" in set(t.gpu["name"].astype(str))


def test_long_whitespace_around_the_legacy_array_is_accepted(tmp_path: Path) -> None:
    events = json.dumps(small().events).encode()
    p = tmp_path / "t.json"
    p.write_bytes(b" \n" * 500 + events + b"\n \t" * 500)
    t = traceviz.load(p)
    assert t.meta.form == "array" and len(t.gpu) == 1


def test_in_place_chunk_decode_restores_the_buffer() -> None:
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": float(i),
               "dur": 1.0, "args": {"correlation": i}} for i in range(200)]
    text = json.dumps(events).encode().replace(b"}, {", b"},\n   {")
    buf = bytearray(text)
    spans = split_event_array(memoryview(buf), 1024)
    assert len(spans) > 3
    names = []
    for s, e in spans:
        chunk = decode_span(memoryview(buf), s, e)
        names += [chunk.names[c] for c in chunk.name]
    assert bytes(buf) == text
    assert names == [f"k{i}" for i in range(200)]


def test_multi_member_gzip_is_read_whole(tmp_path: Path) -> None:
    text = _text(small())
    p = tmp_path / "t.json.gz"
    p.write_bytes(gzip.compress(text[:40]) + gzip.compress(text[40:]))
    assert len(traceviz.load(p).gpu) == 1


@pytest.mark.parametrize("mangle", ["truncate", "garbage", "header"])
def test_corrupt_gzip_is_a_decode_error(tmp_path: Path, mangle: str) -> None:
    z = gzip.compress(_text(small()))
    data = {"truncate": z[: len(z) // 2], "garbage": z + b"not gzip",
            "header": z[:3] + b"\xff" * 10 + z[13:]}[mangle]
    p = tmp_path / "t.json.gz"
    p.write_bytes(data)
    with pytest.raises(TraceDecodeError):
        traceviz.load(p)


def test_invalid_json_that_needs_repair_is_refused_when_repair_would_not_fit(
        tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(_text(small()).replace(b'"dur": 2.0', b'"dur": NaN', 1))
    assert traceviz.load(p).meta.notes  # repaired under the default limit
    with pytest.raises(TraceTooLargeError, match="repairing it needs"):
        traceviz.load(p, max_memory_bytes_=p.stat().st_size * 2)


def test_a_chunk_cut_inside_a_name_is_merged_not_decoded_whole(tmp_path: Path,
                                                              monkeypatch) -> None:
    import traceviz.trace.loader as loader

    monkeypatch.setattr(loader, "CHUNK_BYTES", 600)
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    for i in range(60):
        b.kernel(launch_ts=1_000 + 100_000 * i, ts=10_000 + 100_000 * i, dur=2_000,
                 name="k}, {" * 40 if i % 7 == 3 else f"k{i}")
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert len(t.gpu) == 60
    assert (t.gpu["name"].astype(str) == "k}, {" * 40).sum() == len(range(3, 60, 7))
    assert any(n.startswith("chunk cut inside a string") for n in t.meta.notes)


def test_a_non_event_in_one_chunk_is_not_a_trace(tmp_path: Path, monkeypatch) -> None:
    import traceviz.trace.loader as loader

    monkeypatch.setattr(loader, "CHUNK_BYTES", 600)
    b = TraceBuilder()
    b.step(1, 0, 10_000_000)
    for i in range(60):
        b.kernel(launch_ts=1_000 + 100_000 * i, ts=10_000 + 100_000 * i, dur=2_000)
    p = b.write(tmp_path / "t.json")
    text = p.read_bytes()
    # valid JSON, but a string where an event object belongs, in a later chunk
    marker = b"},\n  {"
    assert text.count(marker) > 40
    cut = text.index(marker, len(text) * 2 // 3)
    p.write_bytes(text[:cut] + b'}, "x", {' + text[cut + len(marker):])
    with pytest.raises(NotATraceError, match="not event objects"):
        traceviz.load(p)


def test_device_properties_of_the_wrong_types_are_left_out(tmp_path: Path) -> None:
    b = small()
    doc = b.document()
    doc["deviceProperties"] = [{"id": "x", "name": 5, "numSms": "132", "computeMajor": "9",
                                "computeMinor": 0}, "not a dict", {"id": True}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    devices = traceviz.load(p).meta.devices
    assert [(d.id, d.name, d.sms, d.compute_capability) for d in devices] == [
        (0, "5", None, None), (1, "?", None, None)]


@pytest.mark.parametrize("base", ["1e999", "-1e999", "1e30", "\"12\""])
def test_base_time_that_is_not_an_int64_is_absent(tmp_path: Path, base: str) -> None:
    text = _text(small())
    p = tmp_path / "t.json"
    p.write_bytes(text.replace(b'"baseTimeNanoseconds": ', b'"baseTimeNanoseconds": '
                               + base.encode() + b', "was": ', 1))
    assert traceviz.load(p).meta.base_time_ns is None


@pytest.mark.timeout(60)
def test_a_fifo_is_refused_in_one_line_without_waiting_for_a_writer(tmp_path: Path) -> None:
    import os

    from traceviz.errors import TraceNotFoundError

    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    with pytest.raises(TraceNotFoundError, match=r"not a regular file \(a FIFO\)"):
        traceviz.load(fifo)


def test_a_character_device_is_refused_in_one_line() -> None:
    from traceviz.errors import TraceNotFoundError

    with pytest.raises(TraceNotFoundError, match=r"a character device"):
        traceviz.load("/dev/zero")


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_utf8_byte_order_mark_is_accepted_and_noted(tmp_path: Path, gzipped: bool) -> None:
    b = TraceBuilder()
    b.step(1, 0, 50_000)
    b.kernel(500, 1_000, 2_000)
    text = b"\xef\xbb\xbf" + json.dumps(b.document()).encode()
    path = tmp_path / ("bom.json.gz" if gzipped else "bom.json")
    path.write_bytes(gzip.compress(text) if gzipped else text)
    trace = traceviz.load(path)
    assert "UTF-8 byte-order mark ignored" in trace.meta.notes
    assert traceviz.analyze(trace).totals.kernels == 1

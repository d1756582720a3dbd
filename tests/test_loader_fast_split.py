"""The big-trace split: the ``traceEvents`` array found from the skeleton at both ends and
decoded in parallel, without the serial whole-text pass — same result as the general path
on every layout, and the general path's exact error when the guess fails.

Thresholds are lowered so small hand-built traces take the big-trace path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

import traceviz
import traceviz.trace.loader as loader
import traceviz.trace.source as source
from tests.kineto import TraceBuilder
from traceviz.api import Analysis
from traceviz.errors import TracevizError

MS = 1_000_000


def _builder() -> TraceBuilder:
    b = TraceBuilder()
    for i in range(4):
        t0 = i * 10 * MS
        b.step(i, t0, 9 * MS)
        for k in range(3):
            b.kernel(t0 + k * MS, t0 + k * MS + 500_000, 300_000, name=f"k{k}")
    return b


def _text(b: TraceBuilder, before: str = "", after: str = "") -> str:
    """The trace as JSON text with extra top-level members ``before``/``after`` the events."""
    doc = b.document()
    events = json.dumps(doc.pop("traceEvents"), indent=1)
    rest = json.dumps(doc)[1:-1]
    parts = [p for p in (before, rest, f'"traceEvents": {events}', after) if p]
    return "{\n" + ",\n".join(parts) + "\n}\n"


@pytest.fixture
def big_path() -> Iterator[list[bool]]:
    """Every trace counts as big (read by threads, split fast, decoded in 3 workers from 300-byte
    chunks); yields whether each fast attempt succeeded."""
    taken: list[bool] = []
    real = loader._split_and_decode_fast

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        taken.append(out is not None)
        return out

    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "CHUNK_BYTES", 300), \
            mock.patch.object(loader, "_split_and_decode_fast", recorded):
        yield taken


def _json(path: Path, workers: int | None = None) -> str:
    t = traceviz.load(path, workers=workers)
    return Analysis(t, traceviz.analyze(t)).to_json()


def _both(tmp_path: Path, text: str, taken: list[bool]) -> tuple[str, str]:
    """(general path, big-trace path) JSON of the same text."""
    p = tmp_path / "t.json"
    p.write_text(text)
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 1 << 62):
        general = _json(p)
    assert taken == [False]  # too small: the general path
    taken.clear()
    return general, _json(p, workers=3)


LAYOUTS = {
    "metadata first (Kineto)": ("", ""),
    "members after the events": ("", '"traceName": "t.json", "displayTimeUnit": "ms"'),
    "logs with ] inside strings after": (
        "", '"traceLogs": ["Profiler.cpp:1217] Traces Recorded:", "x.cpp:12] [1] done"]'),
    "an array of objects after the events": ("", '"extra": [{"a": [1]}, {"b": 2}]'),
    "a traceEvents key nested before": ('"meta": {"traceEvents": [{"ph": "X"}]}', ""),
    "the key inside a string before": ('"note": "\\"traceEvents\\": [ ]"', ""),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_big_trace_split_gives_the_general_paths_result_on_every_layout(
        tmp_path: Path, big_path: list[bool], layout: str) -> None:
    general, fast = _both(tmp_path, _text(_builder(), *LAYOUTS[layout]), big_path)
    assert fast == general
    assert big_path  # the fast split was tried


@pytest.mark.parametrize("layout", ["metadata first (Kineto)", "members after the events",
                                    "logs with ] inside strings after",
                                    "an array of objects after the events"])
def test_the_fast_split_is_taken_when_the_events_key_is_the_first_one_at_top_level(
        tmp_path: Path, big_path: list[bool], layout: str) -> None:
    _both(tmp_path, _text(_builder(), *LAYOUTS[layout]), big_path)
    assert big_path == [True]


def test_a_nested_events_key_before_the_real_one_falls_back_to_the_general_path(
        tmp_path: Path, big_path: list[bool]) -> None:
    _both(tmp_path, _text(_builder(), *LAYOUTS["a traceEvents key nested before"]), big_path)
    assert big_path == [False]


def test_duplicate_events_keys_give_the_general_paths_error(
        tmp_path: Path, big_path: list[bool]) -> None:
    first, last = _builder(), TraceBuilder()
    last.step(0, 0, 5 * MS)
    last.kernel(MS, 2 * MS, MS)
    p = tmp_path / "t.json"
    p.write_text(_text(first)[:-3] + ',\n"traceEvents": ' + json.dumps(last.events) + "\n}\n")
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 1 << 62), \
            pytest.raises(TracevizError) as general:
        traceviz.load(p)
    big_path.clear()
    with pytest.raises(TracevizError) as fast:
        traceviz.load(p, workers=3)
    assert str(fast.value) == str(general.value)
    assert "'traceEvents' is given more than once" in str(general.value)
    assert big_path == [False]  # the probe passed but the body did not decode


def test_an_event_that_is_not_an_object_gives_the_general_paths_error(
        tmp_path: Path, big_path: list[bool]) -> None:
    text = _text(_builder()).replace('"traceEvents": [', '"traceEvents": [7, ', 1)
    p = tmp_path / "t.json"
    p.write_text(text)
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 1 << 62), \
            pytest.raises(TracevizError) as general:
        traceviz.load(p)
    big_path.clear()
    with pytest.raises(TracevizError) as fast:
        traceviz.load(p, workers=3)
    assert str(fast.value) == str(general.value)
    assert big_path == [False]


def test_the_trace_file_is_not_changed_by_the_in_place_decode(
        tmp_path: Path, big_path: list[bool]) -> None:
    p = tmp_path / "t.json"
    p.write_text(_text(_builder()))
    before = p.read_bytes()
    traceviz.load(p, workers=3)
    assert p.read_bytes() == before
    assert big_path == [True]


def test_threaded_read_copies_every_slice_and_stops_at_a_short_file(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    data = bytes(range(256)) * 40  # 10,240 bytes
    p.write_bytes(data)
    with mock.patch.object(source, "READ_SLICE_BYTES", 1000), p.open("rb") as f:
        buf = bytearray(len(data))
        assert source._read_threaded(f.fileno(), buf, 4) == len(data)
        assert buf == data
        longer = bytearray(len(data) + 2500)  # the file shrank after its size was taken
        assert source._read_threaded(f.fileno(), longer, 4) == len(data)
        assert longer[: len(data)] == data


def test_a_big_plain_trace_read_by_threads_loads_like_a_small_one(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(_text(_builder()))
    small = _json(p)
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(source, "READ_SLICE_BYTES", 512):
        assert _json(p, workers=4) == small

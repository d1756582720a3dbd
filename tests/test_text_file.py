"""A big plain JSON trace is decoded by workers that read their own chunks from the file
(:class:`FileText`): the loading process reads only the text's ends and a window at each cut,
the result equals the in-memory load's, and a file that shrinks meanwhile is a clean error."""

from __future__ import annotations

import gzip
import multiprocessing
import os
import sys
import threading
from pathlib import Path
from unittest import mock

import pytest

import traceviz
import traceviz.trace.loader as loader
import traceviz.trace.text as text_mod
from tests.kineto import TraceBuilder
from traceviz.api import Analysis
from traceviz.errors import TraceDecodeError
from traceviz.trace.decode import split_event_array
from traceviz.trace.parallel import can_fork
from traceviz.trace.text import FileText, split_text

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork")
MS = 1_000_000


def _trace(tmp_path: Path, kernels: int = 400) -> Path:
    b = TraceBuilder()
    for i in range(4):
        b.step(i, i * 100 * MS, 99 * MS)
    for k in range(kernels):
        t = k * 400 * MS // kernels
        b.kernel(t + 1_000, t + 200_000, 50_000, name=f"kernel_{k % 9}")
    return b.write(tmp_path / "t.json")


def _json(path: Path, workers: int) -> str:
    t = traceviz.load(path, workers=workers)
    return Analysis(t, traceviz.analyze(t, workers=1)).to_json()


def test_file_text_reads_windows_spans_and_sub_texts_by_offset(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    data = bytes(range(256)) * 8
    p.write_bytes(data)
    fd = os.open(p, os.O_RDONLY)
    try:
        text = FileText(p, fd, 0, len(data))
        assert text.window(10, 700) == data[10:700]
        assert text.window(-5, len(data) + 9) == data  # clipped to the text
        assert text.bracketed(3, 9) == b"[" + data[3:9] + b"]"
        sub = text.sub(100, 300)
        assert len(sub) == 200 and sub.window(0, 200) == data[100:300]
        assert sub.bracketed(5, 10) == b"[" + data[105:110] + b"]"
        longer = FileText(p, fd, 0, len(data) + 10)  # the file shrank after its size was taken
        with pytest.raises(TraceDecodeError, match="became shorter while it was read"):
            longer.bracketed(len(data) - 4, len(data) + 4)
    finally:
        os.close(fd)


@pytest.mark.parametrize("window", [7, 64, 65_536])
def test_split_text_of_a_file_cuts_where_the_in_memory_split_does(
        tmp_path: Path, window: int) -> None:
    body = b",\n  ".join(b'{"ph": "X", "name": "k%d", "ts": %d}' % (i, i) for i in range(300))
    for data in (b"[" + body + b"]", b" \n[ " + body + b" ]\n\n"):
        p = tmp_path / "a.json"
        p.write_bytes(data)
        fd = os.open(p, os.O_RDONLY)
        try:
            with mock.patch.object(text_mod, "WINDOW_BYTES", window):
                for target in (50, 333, 4_000, len(data)):
                    got = split_text(FileText(p, fd, 0, len(data)), target)
                    assert got == split_event_array(memoryview(data), target)
        finally:
            os.close(fd)


def test_a_big_plain_trace_is_decoded_from_the_file_reading_only_its_ends_and_cuts(
        tmp_path: Path) -> None:
    path = _trace(tmp_path)
    size = path.stat().st_size
    in_memory = _json(path, workers=1)
    windows: list[int] = []
    real = FileText.window

    def window(self: FileText, start: int, end: int) -> bytes:
        out = real(self, start, end)
        windows.append(len(out))
        return out

    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "CHUNK_BYTES", 2_000), \
            mock.patch.object(loader, "SKELETON_BYTES", 1_024), \
            mock.patch.object(text_mod, "WINDOW_BYTES", 256), \
            mock.patch.object(FileText, "window", window), \
            mock.patch.object(loader, "read_trace_bytes") as read_all:
        from_file = _json(path, workers=3)
    assert from_file == in_memory
    read_all.assert_not_called()  # the text was never read whole
    assert len(windows) > 10 and sum(windows) < size // 4


def test_a_name_holding_an_event_boundary_is_merged_when_decoded_from_the_file(
        tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 10 * MS)
    for i in range(60):
        b.kernel(launch_ts=1_000 + 100_000 * i, ts=10_000 + 100_000 * i, dur=2_000,
                 name="k}, {" * 40 if i % 7 == 3 else f"k{i}")
    path = b.write(tmp_path / "t.json")
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "CHUNK_BYTES", 600), \
            mock.patch.object(loader, "read_trace_bytes") as read_all:
        t = traceviz.load(path, workers=3)
    read_all.assert_not_called()
    assert (t.gpu["name"].astype(str) == "k}, {" * 40).sum() == len(range(3, 60, 7))
    assert any(n.startswith("chunk cut inside a string") for n in t.meta.notes)


def test_gzip_and_single_worker_traces_are_read_whole(tmp_path: Path) -> None:
    path = _trace(tmp_path, kernels=50)
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    real = loader.read_trace_bytes
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "read_trace_bytes", side_effect=real) as read_all:
        got = [traceviz.analyze(traceviz.load(p, workers=w), workers=1) for p, w in
               ((gz, 3), (path, 1))]
    assert got[0].totals == got[1].totals and got[0].steps == got[1].steps
    assert read_all.call_count == 2


def test_meanwhile_runs_once_while_the_workers_decode_and_not_for_a_serial_decode(
        tmp_path: Path) -> None:
    path = _trace(tmp_path)
    seen: list[bool] = []

    def meanwhile() -> None:  # pandas, for the tables, is imported first
        workers = bool(multiprocessing.active_children()) or any(  # processes, or scan threads
            t.name.startswith("traceviz-scan") for t in threading.enumerate())
        seen.append("pandas" in sys.modules and workers)

    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "CHUNK_BYTES", 2_000):
        traceviz.load(path, workers=3, meanwhile=meanwhile)
        assert seen == [True]
        traceviz.load(path, workers=1, meanwhile=meanwhile)
    traceviz.load(path, workers=3, meanwhile=meanwhile)  # too small for workers
    assert seen == [True]

"""The forked worker pool (:class:`ForkedMap`, :func:`process_map`) and the decode on it:
workers take items from a shared counter and give values in item order; the chunks equal a
serial decode's whichever way the columns travel (shared memory, a span too full for its room,
no shared mapping at all), the text is only read, a span's error is raised (the first span's),
and progress counts decoded bytes up to the whole buffer."""

from __future__ import annotations

import dataclasses
import os
import time
from unittest import mock

import msgspec
import numpy as np
import pytest

from traceviz.errors import WorkerDiedError
from traceviz.trace import parallel, shared_columns
from traceviz.trace.chunk import decode_span
from traceviz.trace.decode import ColumnChunk, split_event_array
from traceviz.trace.parallel import ForkedMap, can_fork, decode_spans_parallel, process_map
from traceviz.trace.shared_columns import FIELDS, MIN_EVENT_BYTES, SharedColumns
from traceviz.trace.text import MemoryText

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork")


def _events(n: int) -> memoryview:
    """``n`` kernels, CPU ops and runtime calls with every column set, some ids missing."""
    rows = []
    for i in range(n):
        cat = ("kernel", "cpu_op", "cuda_runtime")[i % 3]
        args = f', "args": {{"correlation": {i}, "External id": {i // 2}}}' if i % 5 else ""
        rows.append(f'{{"ph": "X", "cat": "{cat}", "name": "n{i % 7}", "pid": {i % 2}, '
                    f'"tid": {7 + i % 3}, "ts": {i * 10}, "dur": {i % 4 + 1}{args}}}')
    return memoryview(bytearray(("[" + ", ".join(rows) + "]").encode()))


def _same(a: ColumnChunk, b: ColumnChunk) -> bool:
    for f in dataclasses.fields(ColumnChunk):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not (np.array_equal(x, y) and x.dtype == y.dtype if isinstance(x, np.ndarray)
                else x == y):
            return False
    return True


def _serial(buf: memoryview, spans: list[tuple[int, int]]) -> list[ColumnChunk]:
    return [decode_span(buf, *s) for s in spans]


def test_parallel_chunks_equal_serial_ones_through_shared_memory() -> None:
    buf = _events(900)
    spans = split_event_array(buf, 3_000)
    assert len(spans) > 8
    got = decode_spans_parallel(MemoryText(buf), spans, 3)
    want = _serial(buf, spans)
    assert len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    # every chunk's columns, decoded here or in a worker, are views of the shared mapping
    assert all(isinstance(getattr(g, f).base, memoryview) for g in got for f, _ in FIELDS)


def test_a_span_with_more_rows_than_its_room_comes_back_whole() -> None:
    buf = _events(600)
    spans = split_event_array(buf, 2_000)
    # Room for 1 row per 10 kB: every span overflows and is returned through the pipe.
    with mock.patch.object(shared_columns, "MIN_EVENT_BYTES", 10_000):
        got = decode_spans_parallel(MemoryText(buf), spans, 2)
    want = _serial(buf, spans)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))
    assert not any(isinstance(g.cat.base, memoryview) for g in got)  # unpickled: their own


def test_without_a_shared_mapping_the_columns_come_through_the_pipe() -> None:
    buf = _events(600)
    spans = split_event_array(buf, 2_000)

    def refused(*_: object) -> None:
        raise OSError(12, "Cannot allocate memory")

    with mock.patch.object(parallel, "SharedColumns", refused):
        got = decode_spans_parallel(MemoryText(buf), spans, 3)
    assert all(_same(g, w) for g, w in zip(got, _serial(buf, spans), strict=True))


def test_room_per_span_holds_every_event_of_the_smallest_json() -> None:
    # The smallest kept event (no ts, dur or name), comma included, is at least
    # MIN_EVENT_BYTES long: a span of only such events fits its room.
    one = b'{"ph":"X","cat":"cpu_op"}'
    assert len(one) + 1 >= MIN_EVENT_BYTES
    n = 500
    buf = memoryview(bytearray(b"[" + b",".join([one] * n) + b"]"))
    spans = [(1, len(buf) - 1)]
    room = SharedColumns(spans)
    chunk = decode_span(buf, *spans[0])
    assert len(chunk.cat) == n and room.capacity[0] >= n
    stored = room.store(0, chunk)
    assert stored is not None
    empty, rows = stored
    assert rows == n and all(len(getattr(empty, f)) == 0 for f, _ in FIELDS)
    assert _same(room.load(0, empty, rows), chunk)


def test_the_first_failing_span_raises_its_error() -> None:
    buf = _events(600)
    spans = split_event_array(buf, 2_000)
    bad = bytearray(buf)
    # Break two spans at different offsets into them: span 2's error is the one raised.
    at5 = bytes(bad).index(b'"pid": ', spans[5][0]) + 7
    bad[at5 : at5 + 1] = b"@"
    bad[spans[2][0] + 1 : spans[2][0] + 2] = b"@"
    with pytest.raises(msgspec.DecodeError) as got:
        decode_spans_parallel(MemoryText(memoryview(bad)), spans, 3)
    with pytest.raises(msgspec.DecodeError) as want:
        decode_span(memoryview(bytearray(bad)), *spans[2])
    with pytest.raises(msgspec.DecodeError) as other:
        decode_span(memoryview(bytearray(bad)), *spans[5])
    assert str(got.value) == str(want.value) != str(other.value)


def test_progress_counts_decoded_bytes_up_to_the_whole_buffer() -> None:
    buf = _events(900)
    spans = split_event_array(buf, 3_000)
    seen: list[tuple[int, int]] = []
    decode_spans_parallel(MemoryText(buf), spans, 3, progress=lambda d, t: seen.append((d, t)))
    assert seen and all(t == len(buf) for _, t in seen)
    done = [d for d, _ in seen]
    assert done == sorted(done)
    assert done[-1] == sum(e - s for s, e in spans)


def test_workers_take_every_span_once_whatever_the_worker_count() -> None:
    buf = _events(300)
    spans = split_event_array(buf, 1_000)
    want = _serial(buf, spans)
    for workers in (1, 2, 5, len(spans) + 3):
        got = decode_spans_parallel(MemoryText(buf), spans, workers)
        assert all(_same(g, w) for g, w in zip(got, want, strict=True)), workers


def test_decode_workers_only_read_the_text() -> None:
    buf = _events(600)
    spans = split_event_array(buf, 2_000)
    want = _serial(buf, spans)
    frozen = memoryview(bytes(buf))  # read-only: a write in place would raise
    got = decode_spans_parallel(MemoryText(frozen), spans, 3)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def _pid(i: int) -> tuple[int, int]:
    return i, os.getpid()


def test_forked_map_gives_values_in_item_order_from_child_processes() -> None:
    with ForkedMap(_pid, 50, 3) as pool:
        got = pool.wait()
    assert [i for i, _ in got] == list(range(50))
    assert os.getpid() not in {pid for _, pid in got}


def _slow_pid(i: int) -> tuple[int, int]:
    time.sleep(0.02)
    return i, os.getpid()


def test_this_process_taking_part_shares_the_items_once_each() -> None:
    with ForkedMap(_slow_pid, 60, 2) as pool:
        pool.take_part()
        got = pool.wait()
    assert [i for i, _ in got] == list(range(60))
    pids = {pid for _, pid in got}
    assert os.getpid() in pids and len(pids) > 1  # 1.2 s of items: every worker got some


def test_an_error_in_this_processs_items_is_raised_in_item_order() -> None:
    with ForkedMap(_fail_at_7_and_3, 10, 1) as pool, pytest.raises(ValueError, match="item 3"):
        pool.take_part()
        pool.wait()


def _fail_at_7_and_3(i: int) -> int:
    if i in (3, 7):
        raise ValueError(f"item {i}")
    return i


def test_forked_map_raises_the_first_failing_items_error() -> None:
    with ForkedMap(_fail_at_7_and_3, 10, 4) as pool, pytest.raises(ValueError, match="item 3"):
        pool.wait()


def test_process_map_uses_threads_where_processes_cannot_fork() -> None:
    with mock.patch.object(parallel, "can_fork", lambda: False):
        got = process_map(_pid, 20, 3)
    assert [i for i, _ in got] == list(range(20))
    assert {pid for _, pid in got} == {os.getpid()}
    forked = process_map(_slow_pid, 40, 3)
    assert [i for i, _ in forked] == list(range(40))
    assert len({pid for _, pid in forked}) > 1
    assert {pid for _, pid in process_map(_pid, 20, 1)} == {os.getpid()}


def _die_at_2(i: int) -> int:
    if i == 2:
        os._exit(9)  # killed mid-task, as by the system's out-of-memory killer
    return i


def test_a_worker_that_dies_is_a_clean_error_not_a_hang() -> None:
    with ForkedMap(_die_at_2, 6, 2) as pool, pytest.raises(WorkerDiedError, match="died"):
        pool.wait()

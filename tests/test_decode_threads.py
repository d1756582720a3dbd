"""The threaded decode (:func:`~traceviz.trace.parallel.decode_spans_threaded`), the loader's
path where the C scanner decodes: chunks equal a serial decode's, in span order, at any thread
count; the first failing span (in order) raises its error, msgspec's; ``meanwhile`` runs once;
progress counts decoded bytes and never passes the text's length."""

from __future__ import annotations

import msgspec
import pytest

from tests.test_decode_pool import _events, _same, _serial
from traceviz.trace import scanned
from traceviz.trace.chunk import decode_span
from traceviz.trace.decode import split_event_array
from traceviz.trace.parallel import decode_spans_threaded
from traceviz.trace.text import MemoryText


def test_threaded_chunks_equal_serial_ones_in_order() -> None:
    buf = _events(900)
    spans = split_event_array(buf, 3_000)
    assert len(spans) > 8
    want = _serial(buf, spans)
    for workers in (2, 3, 8):
        got = decode_spans_threaded(MemoryText(buf), spans, workers)
        assert len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_the_scanner_and_msgspec_give_the_same_chunks() -> None:
    if scanned.SCANNER is None:
        pytest.skip("the C scanner is not built")
    buf = _events(300)
    spans = split_event_array(buf, 3_000)
    got = decode_spans_threaded(MemoryText(buf), spans, 2)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scanned, "SCANNER", None)
        want = _serial(buf, spans)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_the_first_failing_span_in_order_raises_msgspecs_error() -> None:
    buf = _events(900)
    spans = split_event_array(buf, 3_000)
    bad = bytearray(buf)
    for i in (5, 2):
        bad[spans[i][0]] = ord("x")  # the span's first event is no longer JSON
    with pytest.raises(msgspec.DecodeError) as first:
        decode_spans_threaded(MemoryText(memoryview(bad)), spans, 3)
    with pytest.raises(msgspec.DecodeError) as alone:
        decode_span(memoryview(bytearray(bad)), *spans[2])
    assert str(first.value) == str(alone.value)


def test_meanwhile_runs_once_and_progress_stays_within_the_text() -> None:
    buf = _events(900)
    spans = split_event_array(buf, 3_000)
    seen: list[tuple[int, int]] = []
    ran: list[bool] = []
    decode_spans_threaded(MemoryText(buf), spans, 2, progress=lambda d, t: seen.append((d, t)),
                          meanwhile=lambda: ran.append(True))
    assert ran == [True]
    assert seen and all(0 < d <= t == len(buf) for d, t in seen)

"""Decode one chunk of events into columns: the C scanner where it takes the chunk, else msgspec.

Both give the same :class:`~traceviz.trace.decode.ColumnChunk`
(:mod:`traceviz.trace.scanned`); msgspec also decides every chunk the scanner declines, so
bad input fails with msgspec's error either way.
"""

from __future__ import annotations

from traceviz.freed_memory import reused_heap
from traceviz.trace.decode import ColumnChunk, columns_from_events, decode_events
from traceviz.trace.scanned import scanned_columns


def decode_chunk(buf: bytes | bytearray | memoryview) -> ColumnChunk:
    """Decode one JSON array of events (``b"[...]"``) into columns.

    msgspec's temporaries (the typed events, their lists and arrays of 0.1–1 MiB) are served
    from the heap and given back when the chunk is done
    (:func:`~traceviz.freed_memory.reused_heap`). The scanner's are a few large buffers, so its
    chunks run without: on threads, a reused heap left the chunks' columns among freed pages
    that the 10⁶-step run's forked analysis then paid for (peak 1,136 MiB against 1,036
    without; ``benchmarks/many_steps.py``, 2026-11-28, this 2-core VM)."""
    scanned = scanned_columns(buf)
    if scanned is not None:
        return scanned
    with reused_heap():
        return columns_from_events(decode_events(buf))


def decode_span(buf: memoryview, start: int, end: int) -> ColumnChunk:
    """Decode the events ``buf[start:end]`` (a span of
    :func:`~traceviz.trace.decode.split_event_array`) in place.

    The byte before ``start`` and the byte at ``end`` (the array's ``[``/``]``, or a comma or
    whitespace between events) are set to ``[`` and ``]`` for the decode and restored after,
    so no chunk is copied. ``buf`` must be writable.
    """
    before, after = buf[start - 1], buf[end]
    buf[start - 1], buf[end] = 0x5B, 0x5D
    try:
        return decode_chunk(buf[start - 1 : end + 1])
    finally:
        buf[start - 1], buf[end] = before, after

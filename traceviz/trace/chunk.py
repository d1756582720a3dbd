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
    """Decode one JSON array of events (``b"[...]"``) into columns. The chunk's temporaries
    (its events, their lists and arrays of 0.1–1 MiB) are served from the heap and given back
    when it is done (:func:`~traceviz.freed_memory.reused_heap`)."""
    with reused_heap():
        scanned = scanned_columns(buf)
        return scanned if scanned is not None else columns_from_events(decode_events(buf))


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

"""The JSON text of a trace's events, in memory or in the file, read by offset.

:class:`MemoryText` wraps bytes already read (a gzip trace inflated, a small trace).
:class:`FileText` reads a plain JSON file piece by piece (``os.pread``): a big trace's
decode workers each read their own chunks, so the process that forks them never holds the
whole text (nor copies it, nor pays to map it, share it and free it). Both give the same
windows, bracketed spans and decoded chunks; offsets are relative to the text's start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from traceviz.errors import TraceDecodeError
from traceviz.trace.chunk import decode_chunk, decode_span
from traceviz.trace.decode import (
    BOUNDARY,
    LEADING_WS,
    ColumnChunk,
    cut_spans,
    last_non_ws,
    split_event_array,
)

_OPEN = 0x5B  # "["
_CLOSE = 0x5D  # "]"
#: Bytes of a file read at a time to find where a span starts or ends.
WINDOW_BYTES = 64 * 1024


class SpanBuffer:
    """One decoding thread's memory for its bracketed spans, reused from span to span (grown
    when a span is longer than any before).

    A fresh buffer per span (16 MiB) is memory the kernel must map in and zero page by page
    each time: under the CLI's fixed mmap threshold (:mod:`traceviz.freed_memory`) the spans of
    a 304 MB trace were 74,000 page faults. A decoded chunk keeps no reference to the bytes it
    was decoded from (the scanner and msgspec copy what they keep), so the next span may
    overwrite them. Not shared between threads."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def view(self, size: int) -> memoryview:
        """``size`` bytes of the buffer (their content is the last span's)."""
        if len(self._buf) < size:
            self._buf = bytearray()  # the old one is freed before the new one is made
            self._buf = bytearray(size)
        return memoryview(self._buf)[:size]


def pread_into(fd: int, view: memoryview, offset: int) -> int:
    """Fill ``view`` with the bytes of ``fd`` from ``offset`` (``os.preadv`` until full or the
    end of the file); returns the bytes read."""
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done:]], offset + done)
        if n == 0:
            break
        done += n
    return done


@dataclass(frozen=True)
class MemoryText:
    """Text held in memory: ``buf`` (writable, for the in-place serial decode)."""

    buf: memoryview

    def __len__(self) -> int:
        return len(self.buf)

    def window(self, start: int, end: int) -> memoryview:
        """``text[start:end]``, without a copy."""
        return self.buf[start:end]

    def sub(self, start: int, end: int) -> MemoryText:
        return MemoryText(self.buf[start:end])

    def bracketed(self, start: int, end: int, into: SpanBuffer | None = None
                  ) -> bytearray | memoryview:
        """``b"[" + text[start:end] + b"]"``, a copy: for workers that share the text, where
        writing the brackets in place would race; written into ``into``'s memory when given
        (:class:`SpanBuffer`)."""
        out = bytearray(end - start + 2) if into is None else into.view(end - start + 2)
        out[0], out[-1] = _OPEN, _CLOSE
        out[1:-1] = self.buf[start:end]
        return out

    def decode(self, start: int, end: int) -> ColumnChunk:
        """The events ``text[start:end]``, decoded in place (:func:`decode_span`)."""
        return decode_span(self.buf, start, end)


@dataclass(frozen=True)
class FileText:
    """Bytes ``[offset, offset + size)`` of an open file, read on demand; ``fd`` stays open
    while the loader uses it (forked workers inherit it: ``pread`` has no shared position).
    A read that comes back short (the file shrank meanwhile) is an error."""

    path: Path
    fd: int
    offset: int
    size: int

    def __len__(self) -> int:
        return self.size

    def window(self, start: int, end: int) -> bytearray:
        """``text[start:end]`` (clipped to the text), read from the file."""
        start, end = max(0, start), min(self.size, end)
        out = bytearray(max(0, end - start))
        self._fill(memoryview(out), start)
        return out

    def sub(self, start: int, end: int) -> FileText:
        return FileText(self.path, self.fd, self.offset + start, end - start)

    def bracketed(self, start: int, end: int, into: SpanBuffer | None = None
                  ) -> bytearray | memoryview:
        """``b"[" + text[start:end] + b"]"``, read straight into place (into ``into``'s
        memory when given: :class:`SpanBuffer`)."""
        out = bytearray(end - start + 2) if into is None else into.view(end - start + 2)
        out[0], out[-1] = _OPEN, _CLOSE
        self._fill(memoryview(out)[1:-1], start)
        return out

    def decode(self, start: int, end: int) -> ColumnChunk:
        """The events ``text[start:end]``, decoded."""
        return decode_chunk(self.bracketed(start, end))

    def _fill(self, view: memoryview, start: int) -> None:
        if pread_into(self.fd, view, self.offset + start) < len(view):
            raise TraceDecodeError(f"{self.path}: the file became shorter while it was read "
                                   "(is it being rewritten?)")


Text = MemoryText | FileText


def split_text(text: Text, target_chunk_bytes: int) -> list[tuple[int, int]]:
    """:func:`~traceviz.trace.decode.split_event_array` of an event array's text; a file is
    read only near the array's ends and near each cut (windows of :data:`WINDOW_BYTES`,
    widened where they hold no boundary)."""
    if isinstance(text, MemoryText):
        return split_event_array(text.buf, target_chunk_bytes)
    size = len(text)
    head = text.window(0, WINDOW_BYTES)
    tail_at = max(0, size - WINDOW_BYTES)
    tail = text.window(tail_at, size)

    def find(start: int, end: int) -> tuple[int, int] | None:
        width = WINDOW_BYTES
        while True:
            stop = min(end, start + width)
            m = BOUNDARY.search(text.window(start, stop))
            if m is not None:
                return start + m.start(), start + m.end()
            if stop >= end:
                return None
            width *= 4

    return cut_spans(find, LEADING_WS.match(head).end() + 1, tail_at + last_non_ws(tail),
                     target_chunk_bytes)

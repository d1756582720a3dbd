"""Decoded columns handed from forked decode workers to the parent through shared memory.

One anonymous shared mapping, made before the workers fork, holds a region per span of the
event array: room for ``span bytes // MIN_EVENT_BYTES + 1`` rows of every numpy column of a
:class:`~traceviz.trace.decode.ColumnChunk`. A worker copies the columns it decoded into the
span's region and returns the chunk without them; the parent reads them back as views of the
mapping. So the columns (about 200 MB for a 1 GB trace) never go through a pipe, where the
parent's one result thread would unpickle them one after another. Untouched pages of the
mapping cost nothing; a span with more rows than its room (events under
:data:`MIN_EVENT_BYTES` of JSON each) is returned whole, as before.
"""

from __future__ import annotations

import mmap
from dataclasses import replace

import numpy as np

from traceviz.trace.decode import ColumnChunk

#: At most the JSON bytes of a kept event: the smallest, ``{"ph":"X","cat":"kernel"}`` and
#: a comma, is 26 bytes, so a span of ``B`` bytes holds at most ``B // MIN_EVENT_BYTES + 1``
#: rows.
MIN_EVENT_BYTES = 24
#: The numpy columns of a chunk, widest first (regions stay 8-byte aligned).
FIELDS: tuple[tuple[str, type], ...] = (
    ("pid", np.int64), ("tid", np.int64), ("ts_ns", np.int64), ("dur_ns", np.int64),
    ("correlation", np.int64), ("external_id", np.int64), ("name", np.int32),
    ("cat", np.int8),
)
_ROW_BYTES = sum(np.dtype(t).itemsize for _, t in FIELDS)


class SharedColumns:
    """The shared mapping and each span's region in it (``capacity`` rows at ``offset``)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        """Map room for the rows of ``spans``; raises ``OSError`` when the system refuses
        the mapping (the caller then passes columns through pipes)."""
        self.capacity = [(end - start) // MIN_EVENT_BYTES + 1 for start, end in spans]
        self.offset = []
        at = 0
        for cap in self.capacity:
            self.offset.append(at)
            at += -(-cap * _ROW_BYTES // 8) * 8
        self._map = mmap.mmap(-1, max(at, 1))  # anonymous, MAP_SHARED: forked workers see it

    def _columns(self, i: int, rows: int) -> dict[str, np.ndarray]:
        """Span ``i``'s first ``rows`` rows of every column, as views of the mapping."""
        out, at = {}, self.offset[i]
        for name, dtype in FIELDS:
            out[name] = np.frombuffer(self._map, dtype, rows, at)
            at += self.capacity[i] * np.dtype(dtype).itemsize
        return out

    def store(self, i: int, chunk: ColumnChunk) -> tuple[ColumnChunk, int] | None:
        """In a worker: copy span ``i``'s columns into its region; return the chunk with
        empty columns and its row count, or ``None`` when the rows do not fit."""
        rows = len(chunk.cat)
        if rows > self.capacity[i]:
            return None
        for name, view in self._columns(i, rows).items():
            view[:] = getattr(chunk, name)
        return replace(chunk, **{name: np.zeros(0, t) for name, t in FIELDS}), rows

    def load(self, i: int, chunk: ColumnChunk, rows: int) -> ColumnChunk:
        """In the parent: span ``i``'s chunk with its ``rows`` rows read back (views of the
        mapping, which lives as long as they do)."""
        return replace(chunk, **self._columns(i, rows))

"""Decode Kineto JSON into columns, chunk by chunk, without keeping a Python object per event.

The ``traceEvents`` array is cut into byte chunks at event boundaries; each chunk is decoded
with a typed :mod:`msgspec` schema that reads only the fields traceviz needs, turned into numpy
columns, and dropped. Only the columns (and one interned copy of each distinct name) outlive
the chunk.

Timestamps: Kineto writes ``ts``/``dur`` in microseconds as ``"{us}.{ns:03}"`` (or, before 2024,
integer epoch µs). They become integer nanoseconds here, exactly: the integer and fractional
microsecond parts are converted separately, so the float64 product ``ts * 1000`` never rounds
a nanosecond away (equivalent to ``round(ts * 1000)`` on the decimal value).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from traceviz.vocab import CATEGORY_BY_NAME, Category

#: Rows whose ``args.correlation`` / ``External id`` is absent carry this value.
MISSING_ID = -1

PH_X, PH_M, PH_OTHER = 1, 2, 0

_KEPT_X = frozenset(
    {
        Category.KERNEL,
        Category.GPU_MEMCPY,
        Category.GPU_MEMSET,
        Category.CUDA_RUNTIME,
        Category.CUDA_DRIVER,
        Category.CPU_OP,
        Category.USER_ANNOTATION,
        Category.TRACE_SPAN,
    }
)


class _Args(msgspec.Struct):
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name="External id")
    external_id_legacy: Any = msgspec.field(default=None, name="external id")
    name: Any = None
    labels: Any = None


class _Event(msgspec.Struct):
    ph: Any = None
    cat: Any = None
    name: Any = None
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: Any = None


class _EventTypedArgs(_Event):
    args: _Args | None = None


_CHUNK_DECODER = msgspec.json.Decoder(list[_EventTypedArgs])
_ARGS_DECODER = msgspec.convert


@dataclass(frozen=True)
class ColumnChunk:
    """Columns of the kept events of one chunk. Names are chunk-local codes into ``names``."""

    cat: np.ndarray  # int8 Category
    name: np.ndarray  # int32 code into ``names``
    names: list[str]
    pid: np.ndarray  # int64
    tid: np.ndarray  # int64
    ts_ns: np.ndarray  # int64
    dur_ns: np.ndarray  # int64
    correlation: np.ndarray  # int64, MISSING_ID when absent
    external_id: np.ndarray  # int64, MISSING_ID when absent
    metadata_rows: list[tuple[str, Any, Any, Any]]  # (name, pid, tid, args.name|labels) of M rows
    n_events: int
    category_counts: dict[str, int]
    string_ids: dict[int, str]  # synthetic numeric id -> original string pid/tid


_STREAM_RE = re.compile(r"(\d+)")


def string_id(value: str) -> int:
    """Map a string pid/tid to an int: digits are taken as the number ("stream 7" → 7),
    anything else to a stable negative id (CRC32), so chunks decoded apart agree."""
    m = _STREAM_RE.search(value)
    if m is not None and value.strip().lower().startswith(("stream", "thread")):
        return int(m.group(1))
    if value.isdigit():
        return int(value)
    return -1 - zlib.crc32(value.encode("utf-8", "replace"))


def us_to_ns(values: list[Any]) -> np.ndarray:
    """Convert Kineto microsecond values (int, float, numeric string, None) to int64 ns, exactly.

    ``None`` and unparseable values become 0.
    """
    try:
        f = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        f = np.array([_to_float(v) for v in values], dtype=np.float64)
    f = np.where(np.isfinite(f), f, 0.0)
    whole = np.floor(f)
    frac_ns = np.rint((f - whole) * 1000.0).astype(np.int64)
    return whole.astype(np.int64) * 1000 + frac_ns


def _to_float(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def _to_id(v: Any) -> int:
    if v is None or isinstance(v, bool):
        return MISSING_ID
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if np.isfinite(v) else MISSING_ID
    try:
        return int(str(v).strip())
    except ValueError:
        return MISSING_ID


def _ids(values: list[Any]) -> np.ndarray:
    try:
        arr = np.asarray(values)
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)
    except (TypeError, ValueError, OverflowError):
        pass
    return np.fromiter((_to_id(v) for v in values), dtype=np.int64, count=len(values))


def _pid_tid(values: list[Any], string_ids: dict[int, str]) -> np.ndarray:
    try:
        arr = np.asarray(values)
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)
    except (TypeError, ValueError, OverflowError):
        pass
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if isinstance(v, str):
            sid = string_id(v)
            string_ids.setdefault(sid, v)
            out[i] = sid
        else:
            out[i] = _to_id(v)
    return out


def _category(cat: Any) -> Category:
    if cat.__class__ is str:
        c = CATEGORY_BY_NAME.get(cat)
        if c is None:
            c = CATEGORY_BY_NAME.get(cat.lower(), Category.OTHER)
        return c
    return Category.OTHER


def decode_events(buf: bytes | memoryview) -> list[_EventTypedArgs]:
    """Decode a JSON array of events; tolerate odd ``args`` by decoding them loosely."""
    try:
        return _CHUNK_DECODER.decode(buf)
    except msgspec.ValidationError:
        loose = msgspec.json.decode(buf, type=list[_Event])
        return [_with_loose_args(e) for e in loose]


def _with_loose_args(e: _Event) -> _EventTypedArgs:
    a = e.args
    args = None
    if isinstance(a, dict):
        args = _Args(
            correlation=a.get("correlation"),
            external_id=a.get("External id"),
            external_id_legacy=a.get("external id"),
            name=a.get("name"),
            labels=a.get("labels"),
        )
    return _EventTypedArgs(e.ph, e.cat, e.name, e.pid, e.tid, e.ts, e.dur, args)


def columns_from_events(events: list[_EventTypedArgs]) -> ColumnChunk:
    """Keep timed events traceviz uses and metadata rows; turn them into columns."""
    category_counts: dict[str, int] = {}
    kept: list[_EventTypedArgs] = []
    cats: list[int] = []
    metadata_rows: list[tuple[str, Any, Any, Any]] = []
    for e in events:
        ph = e.ph
        if ph == "X":
            c = _category(e.cat)
            key = e.cat if e.cat.__class__ is str else "?"
            category_counts[key] = category_counts.get(key, 0) + 1
            if c in _KEPT_X:
                kept.append(e)
                cats.append(c)
        elif ph == "M":
            a = e.args
            val = None if a is None else (a.name if a.name is not None else a.labels)
            metadata_rows.append((str(e.name), e.pid, e.tid, val))
    string_ids: dict[int, str] = {}
    names = [e.name if e.name.__class__ is str else str(e.name) for e in kept]
    codes, uniques = _factorize(names)
    corr = [(a.correlation if (a := e.args) is not None else None) for e in kept]
    ext = [
        (
            (a.external_id if a.external_id is not None else a.external_id_legacy)
            if (a := e.args) is not None
            else None
        )
        for e in kept
    ]
    dur_ns = us_to_ns([e.dur for e in kept])
    np.maximum(dur_ns, 0, out=dur_ns)
    return ColumnChunk(
        cat=np.asarray(cats, dtype=np.int8),
        name=codes,
        names=uniques,
        pid=_pid_tid([e.pid for e in kept], string_ids),
        tid=_pid_tid([e.tid for e in kept], string_ids),
        ts_ns=us_to_ns([e.ts for e in kept]),
        dur_ns=dur_ns,
        correlation=_ids(corr),
        external_id=_ids(ext),
        metadata_rows=metadata_rows,
        n_events=len(events),
        category_counts=category_counts,
        string_ids=string_ids,
    )


def _factorize(names: list[str]) -> tuple[np.ndarray, list[str]]:
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(n, len(index)) for n in names), dtype=np.int32, count=len(names)
    )
    return codes, list(index)


def decode_chunk(buf: bytes | memoryview) -> ColumnChunk:
    """Decode one JSON array of events (``b"[...]"``) into columns."""
    return columns_from_events(decode_events(buf))


_BOUNDARY = re.compile(rb"\}\s*,\s*\{")


def split_event_array(buf: bytes | memoryview, target_chunk_bytes: int) -> list[tuple[int, int]]:
    """Cut the bytes of a JSON array ``[ {...}, {...} ]`` into ``(start, end)`` spans of whole
    events, each about ``target_chunk_bytes`` long.

    ``b"[" + buf[start:end] + b"]"`` is a valid array when a cut fell between events. A cut
    inside a string (a name containing ``}, {``) makes that chunk fail to parse; the caller then
    decodes the whole array at once instead.
    """
    n = len(buf)
    head = bytes(buf[:64])
    tail = bytes(buf[max(0, n - 64) :])
    body_start = head.index(b"[") + 1
    body_end = n - tail[::-1].index(b"]") - 1
    spans: list[tuple[int, int]] = []
    start = body_start
    while body_end - start > target_chunk_bytes * 3 // 2:
        m = _BOUNDARY.search(buf, start + target_chunk_bytes, body_end)
        if m is None:
            break
        spans.append((start, m.start() + 1))  # up to and including the closing brace
        start = m.end() - 1  # from the opening brace of the next event
    spans.append((start, body_end))
    return spans

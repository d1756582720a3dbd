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
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import msgspec
import numpy as np

from traceviz.int_sets import distinct
from traceviz.vocab import (
    CATEGORY_BY_NAME,
    CPU_CATEGORIES,
    GPU_ACTIVITY_CATEGORIES,
    OVERLAY_CATEGORY,
    RUNTIME_CATEGORIES,
    STEP_MARKER,
    Category,
)

#: Rows whose ``args.correlation`` / ``External id`` is absent carry this value.
MISSING_ID = -1

#: ``ts_ns`` / ``dur_ns`` of a value that is no time: NaN, ±Infinity, a non-numeric string, or
#: beyond ±MAX_TIME_US. Kept in the tables (never turned into 0); the analysis excludes and
#: counts such rows (``traceviz/analyze/health/validity.py``).
INVALID_NS = np.iinfo(np.int64).min
#: Largest ``|ts|`` / ``|dur|`` in µs taken as a time: ``ts + dur`` still fits in int64 ns
#: (4e15 µs as epoch time is the year 2096).
MAX_TIME_US = 4.0e15


#: Categories of the ``X`` events kept in the columns: GPU activities, runtime calls, CPU ops.
KEPT_X = np.array(
    sorted(GPU_ACTIVITY_CATEGORIES | RUNTIME_CATEGORIES | CPU_CATEGORIES), dtype=np.int8
)


class _Args(msgspec.Struct, gc=False):
    correlation: int = MISSING_ID
    external_id: int = msgspec.field(default=MISSING_ID, name="External id")
    external_id_legacy: int = msgspec.field(default=MISSING_ID, name="external id")
    name: str | None = None
    labels: str | None = None
    # Collective parameters (``record_param_comms`` CPU ops; NCCL kernels of torch >= 2.3).
    # Loosely typed: they are rare, and their types vary across torch versions.
    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    out_nelems: Any = msgspec.field(default=None, name="Out msg nelems")
    group_name: Any = msgspec.field(default=None, name="Process Group Name")
    group_size: Any = msgspec.field(default=None, name="Group size")
    seq: Any = msgspec.field(default=None, name="Seq")
    dtype: Any = None


#: One kept event that carries collective parameters: ``(kept row in the chunk, collective,
#: in_nelems, out_nelems, group_name, group_size, seq, dtype)``; missing numbers are -1,
#: missing strings "".
CommRow = tuple[int, str, int, int, str, int, int, str]


class _Event(msgspec.Struct, gc=False):
    """Typed view of an event: the fast path. Odd values fall back to :class:`_LooseEvent`."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    args: _Args | None = None
    id: int | str | None = None  # flow events (``ph`` ``s`` / ``f``): the flow's id


class _LooseEvent(msgspec.Struct, gc=False):
    ph: Any = None
    cat: Any = None
    name: Any = None
    pid: Any = None
    tid: Any = None
    ts: Any = msgspec.UNSET  # absent (UNSET) is 0; a present ``null`` is no time
    dur: Any = msgspec.UNSET
    args: Any = None
    id: Any = None


_CHUNK_DECODER = msgspec.json.Decoder(list[_Event])
#: ``float_hook``: a number beyond the float range (``1e400``) becomes ±inf (then an invalid
#: time, like ``Infinity``) instead of failing the whole chunk.
_LOOSE_DECODER = msgspec.json.Decoder(list[_LooseEvent], float_hook=float)


@dataclass(frozen=True, eq=False)
class BeginEnd:
    """The ``B`` / ``E`` events (``ph``) of a trace or of one chunk of it, in file order
    (paired by :mod:`traceviz.trace.begin_end`)."""

    sign: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # +1 B, -1 E
    pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    ts_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # INVALID_NS: no time
    #: Name code (into the chunk's ``names``) of a ``B`` event that is a ``ProfilerStep#N``
    #: ``user_annotation``; -1 for every other event.
    step_name: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))

    def __len__(self) -> int:
        return len(self.sign)

    def __eq__(self, other: object) -> bool:
        """Equal columns, values and dtypes (numpy arrays have no truth value to compare)."""
        if not isinstance(other, BeginEnd):
            return NotImplemented
        return all(np.array_equal(a := getattr(self, f.name), b := getattr(other, f.name))
                   and a.dtype == b.dtype for f in fields(self))


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
    trace_spans: list[tuple[int, int]]  # (ts_ns, dur_ns) of the profiler's "Trace" span events
    comm_rows: list[CommRow] = field(default_factory=list)  # kept events with collective args
    # Flow events (``ph`` ``s`` / ``f``), in file order: Category FLOW_START / FLOW_END, name
    # code into ``names``, ts (ns) and the flow's ``id`` (MISSING_ID when absent or unusable).
    # Not in the columns above: they travel back from a decode worker through its pipe.
    flow_cat: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    flow_name: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    flow_ts_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    flow_id: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    begin_end: BeginEnd = field(default_factory=BeginEnd)  # "B" / "E" events: few, piped


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


#: Microsecond magnitudes at or beyond this overflow int64 nanoseconds; treated as unparseable.
_MAX_US = 9.2e15


def us_to_ns(values: list[Any]) -> np.ndarray:
    """Convert Kineto microsecond values (int, float, numeric string) to int64 ns, exactly.

    ``None`` (a JSON ``null``), NaN, ±Infinity, non-numeric values and values beyond
    ``±MAX_TIME_US`` become :data:`INVALID_NS`. Negative values stay negative.
    """
    try:
        f = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        f = np.array([_to_float(v) for v in values], dtype=np.float64)
    valid = np.abs(f) <= MAX_TIME_US  # False for NaN and ±inf
    f = np.where(valid, f, 0.0)
    whole = np.floor(f)
    frac_ns = np.rint((f - whole) * 1000.0).astype(np.int64)
    return np.where(valid, whole.astype(np.int64) * 1000 + frac_ns, INVALID_NS)


def _to_float(v: Any) -> float:
    """A µs value as float: absent (``msgspec.UNSET``) → 0.0; anything that is no number
    (``null``, text, bool, a list) or too large for a float → NaN, which :func:`us_to_ns` marks
    :data:`INVALID_NS`."""
    if v is msgspec.UNSET:
        return 0.0
    if v is None:
        return float("nan")
    if isinstance(v, bool):
        return float("nan")
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _to_id(v: Any) -> int:
    """An id as int64; absent, unparseable or beyond 64 bits → ``MISSING_ID``."""
    if v is None or isinstance(v, bool):
        return MISSING_ID
    if isinstance(v, float):
        v = int(v) if np.isfinite(v) else MISSING_ID
    elif not isinstance(v, int):
        try:
            v = int(str(v).strip())
        except ValueError:
            return MISSING_ID
    return v if _INT64_MIN <= v <= _INT64_MAX else MISSING_ID


def _ids(values: list[int]) -> np.ndarray:
    """int64 column of decoded ids; ids beyond 64 bits (not linkable) become ``MISSING_ID``."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array([_to_id(v) for v in values], dtype=np.int64)


def _flow_id(v: Any) -> int:
    """A flow event's ``id``: an int, a decimal or ``0x`` hex string; any other string a stable
    negative id (CRC32); absent or unusable → ``MISSING_ID``."""
    if isinstance(v, str):
        try:
            return _to_id(int(v.strip(), 0))
        except ValueError:
            return -2 - zlib.crc32(v.encode("utf-8", "replace"))
    return _to_id(v)


def _flow_ids(values: list[Any]) -> np.ndarray:
    """int64 column of flow ids (:func:`_flow_id`); all ints: one numpy conversion."""
    try:
        if all(type(v) is int for v in values):
            return np.array(values, dtype=np.int64)
    except OverflowError:
        pass
    return np.array([_flow_id(v) for v in values], dtype=np.int64)


def pid_tid_column(values: list[Any], string_ids: dict[int, str]) -> np.ndarray:
    """An int64 pid/tid column: numbers as they are (numeric strings too, as numpy reads
    them); any other string a :func:`string_id`, recorded in ``string_ids`` (the first string
    of an id kept); an id beyond 64 bits ``MISSING_ID``."""
    try:
        return np.array(values, dtype=np.int64)
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


def category_code(cat: Any) -> int:
    """The :class:`~traceviz.vocab.Category` of a raw ``cat`` (case-insensitive; ``OTHER``
    for anything unknown or not a string)."""
    if not isinstance(cat, str):
        return Category.OTHER
    c = CATEGORY_BY_NAME.get(cat)
    return c if c is not None else CATEGORY_BY_NAME.get(cat.lower(), Category.OTHER)


def decode_events(buf: bytes | memoryview) -> list[Any]:
    """Decode a JSON array of events: typed fast path, loose fallback for odd value types."""
    try:
        return _CHUNK_DECODER.decode(buf)
    except msgspec.ValidationError:
        return [_normalise(e) for e in _LOOSE_DECODER.decode(buf)]


def _normalise(e: _LooseEvent) -> _Event:
    """Coerce one loosely decoded event into the typed shape (the slow, rare path)."""
    a = e.args
    args = None
    if isinstance(a, dict):
        args = _Args(
            correlation=_to_id(a.get("correlation")),
            external_id=_to_id(a.get("External id")),
            external_id_legacy=_to_id(a.get("external id")),
            name=a.get("name") if isinstance(a.get("name"), str) else None,
            labels=a.get("labels") if isinstance(a.get("labels"), str) else None,
            collective=a.get("Collective name"),
            in_nelems=a.get("In msg nelems"),
            out_nelems=a.get("Out msg nelems"),
            group_name=a.get("Process Group Name"),
            group_size=a.get("Group size"),
            seq=a.get("Seq"),
            dtype=a.get("dtype"),
        )
    pid = e.pid if isinstance(e.pid, (int, str)) and not isinstance(e.pid, bool) else 0
    tid = e.tid if isinstance(e.tid, (int, str)) and not isinstance(e.tid, bool) else 0
    return _Event(
        ph=e.ph if isinstance(e.ph, str) else "",
        cat=e.cat if isinstance(e.cat, str) else "",
        name=e.name if isinstance(e.name, str) else ("" if e.name is None else str(e.name)),
        pid=pid,
        tid=tid,
        ts=_to_float(e.ts),
        dur=_to_float(e.dur),
        args=args,
        id=e.id if isinstance(e.id, (int, str)) and not isinstance(e.id, bool) else None,
    )


def _factorize(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Codes (int32, in order of first appearance) and the distinct values: two passes of
    dict operations in C (``dict.fromkeys``, then ``map`` of the lookup), about twice as fast
    as ``pandas.factorize`` of the list (no Series to build), and no pandas in the workers."""
    uniques = list(dict.fromkeys(values))
    lookup = {v: i for i, v in enumerate(uniques)}
    return np.fromiter(map(lookup.__getitem__, values), np.int32, len(values)), uniques


def columns_from_events(events: list[_Event]) -> ColumnChunk:
    """Keep the timed events traceviz uses, the flow events (``ph`` ``s`` / ``f``: the
    ``flow_*`` columns), the ``B`` / ``E`` events (``begin_end``) and metadata rows; turn them
    into columns.

    Events of :data:`~traceviz.vocab.OVERLAY_CATEGORY` (``traceviz export``'s overlay) are
    dropped first: they count nowhere, not even in ``n_events``.

    Every step is a bulk pass (list comprehension or numpy), never per-event Python logic.
    """
    ph_codes, ph_values = _factorize([e.ph for e in events])
    cat_codes, cat_values = _factorize([e.cat for e in events])
    if OVERLAY_CATEGORY in cat_values:  # traceviz export's overlay: skipped as if absent
        own = cat_values.index(OVERLAY_CATEGORY)
        return columns_from_events([events[i] for i in np.flatnonzero(cat_codes != own)])
    cat_lut = np.array([category_code(c) for c in cat_values] or [0], dtype=np.int8)
    cat = cat_lut[cat_codes] if len(events) else np.zeros(0, np.int8)
    is_x = ph_codes == (ph_values.index("X") if "X" in ph_values else -1)
    per_cat = np.bincount(cat_codes[is_x], minlength=len(cat_values))
    category_counts = {cat_values[i]: int(c) for i, c in enumerate(per_cat) if c}

    kept_idx = np.flatnonzero(is_x & np.isin(cat, KEPT_X))
    kept = [events[i] for i in kept_idx.tolist()]
    flow_idx = np.flatnonzero(np.isin(ph_codes, [ph_values.index(p) for p in ("s", "f")
                                                 if p in ph_values]))
    flows = [events[i] for i in flow_idx.tolist()]
    span_idx = np.flatnonzero(is_x & (cat == Category.TRACE_SPAN)).tolist()
    trace_spans = [(int(us_to_ns([events[i].ts])[0]), int(us_to_ns([events[i].dur])[0]))
                   for i in span_idx]
    meta_idx = np.flatnonzero(ph_codes == (ph_values.index("M") if "M" in ph_values else -1))
    metadata_rows = [metadata_row(events[i]) for i in meta_idx.tolist()]

    be_idx = np.flatnonzero(np.isin(ph_codes, [ph_values.index(p) for p in ("B", "E")
                                               if p in ph_values]))
    be = [events[i] for i in be_idx.tolist()]
    begin = ph_codes[be_idx] == (ph_values.index("B") if "B" in ph_values else -1)
    step_rows = np.flatnonzero(begin & (cat[be_idx] == Category.USER_ANNOTATION))
    step_names = [be[i].name for i in step_rows.tolist()]

    string_ids: dict[int, str] = {}
    names = [e.name for e in kept]
    if flows or step_names:
        names += [e.name for e in flows] + step_names
    codes, uniques = _factorize(names)
    args = [e.args for e in kept]
    corr = [MISSING_ID if a is None else a.correlation for a in args]
    ext = _ids([MISSING_ID if a is None else a.external_id for a in args])
    ext_legacy = _ids([MISSING_ID if a is None else a.external_id_legacy for a in args])
    dur_ns = us_to_ns([e.dur for e in kept])
    comm_rows = [
        comm_row(i, a) for i, a in enumerate(args) if a is not None and a.collective is not None
    ]
    flow_start = ph_codes[flow_idx] == (ph_values.index("s") if "s" in ph_values else -1)
    return ColumnChunk(
        cat=cat[kept_idx],
        name=codes[: len(kept)],
        names=uniques,
        pid=pid_tid_column([e.pid for e in kept], string_ids),
        tid=pid_tid_column([e.tid for e in kept], string_ids),
        ts_ns=us_to_ns([e.ts for e in kept]),
        dur_ns=dur_ns,
        correlation=_ids(corr),
        external_id=np.where(ext != MISSING_ID, ext, ext_legacy),
        metadata_rows=metadata_rows,
        n_events=len(events),
        category_counts=category_counts,
        string_ids=string_ids,
        trace_spans=trace_spans,
        comm_rows=comm_rows,
        flow_cat=np.where(flow_start, Category.FLOW_START, Category.FLOW_END).astype(np.int8),
        flow_name=codes[len(kept) : len(kept) + len(flows)],
        flow_ts_ns=us_to_ns([e.ts for e in flows]),
        flow_id=_flow_ids([e.id for e in flows]),
        begin_end=begin_end_columns(be, begin, step_rows, codes[len(kept) + len(flows):],
                                    uniques, string_ids) if be else BeginEnd(),
    )


def begin_end_columns(be: list[_Event], begin: np.ndarray, step_rows: np.ndarray,
                      step_codes: np.ndarray, names: list[str], string_ids: dict[int, str]
                      ) -> BeginEnd:
    """The columns of the ``B``/``E`` events ``be``: ``begin`` marks the ``B`` ones;
    ``step_rows`` are the ``user_annotation`` ``B`` ones, whose names have ``step_codes``
    (into ``names``)."""
    step_name = np.full(len(be), -1, np.int32)
    if len(step_rows):
        candidates = distinct(step_codes)
        markers = candidates[[STEP_MARKER.match(names[c]) is not None
                              for c in candidates.tolist()]]
        step_name[step_rows] = np.where(np.isin(step_codes, markers), step_codes, -1)
    return BeginEnd(
        sign=np.where(begin, 1, -1).astype(np.int8),
        pid=pid_tid_column([e.pid for e in be], string_ids),
        tid=pid_tid_column([e.tid for e in be], string_ids),
        ts_ns=us_to_ns([e.ts for e in be]),
        step_name=step_name,
    )


def metadata_row(e: _Event) -> tuple[str, Any, Any, Any]:
    """A metadata (``M``) event's row: name, pid, tid and its ``args.name`` (else
    ``args.labels``)."""
    a = e.args
    return e.name, e.pid, e.tid, None if a is None else (a.name if a.name is not None
                                                        else a.labels)


def comm_row(row: int, a: _Args) -> CommRow:
    """The :data:`CommRow` of kept row ``row`` whose args ``a`` name a collective."""

    def num(v: Any) -> int:
        n = _to_id(v)
        return n if n >= 0 else -1

    def text(v: Any) -> str:
        return "" if v is None else str(v)

    return (row, text(a.collective), num(a.in_nelems), num(a.out_nelems), text(a.group_name),
            num(a.group_size), num(a.seq), text(a.dtype))


#: Between two events of an array: ``}``, a comma and ``{``, whitespace around the comma.
BOUNDARY = re.compile(rb"\}\s*,\s*\{")
LEADING_WS = re.compile(rb"\s*")


def last_non_ws(buf: bytes | memoryview) -> int:
    """Index of the last non-whitespace byte of ``buf`` (which has one)."""
    end, step = len(buf), 64
    while end > 0:
        piece = bytes(buf[max(0, end - step) : end])
        stripped = piece.rstrip()
        if stripped:
            return end - len(piece) + len(stripped) - 1
        end -= len(piece)
        step *= 2
    raise ValueError("no JSON in the buffer")


def split_event_array(buf: bytes | memoryview, target_chunk_bytes: int) -> list[tuple[int, int]]:
    """Cut the bytes of a JSON array ``[ {...}, {...} ]`` into ``(start, end)`` spans of whole
    events, each about ``target_chunk_bytes`` long.

    ``buf[start - 1]`` and ``buf[end]`` are ``[``/``]``, a comma or whitespace, so
    ``b"[" + buf[start:end] + b"]"`` is a valid array when a cut fell between events. A cut
    inside a string (a name containing ``}, {``) makes that chunk fail to parse; the caller then
    decodes the whole array at once instead.
    """
    body_start = LEADING_WS.match(buf).end() + 1  # just after the "["
    body_end = last_non_ws(buf)  # the "]"

    def find(start: int, end: int) -> tuple[int, int] | None:
        m = BOUNDARY.search(buf, start, end)
        return None if m is None else (m.start(), m.end())

    return cut_spans(find, body_start, body_end, target_chunk_bytes)


def cut_spans(find: Callable[[int, int], tuple[int, int] | None], body_start: int,
              body_end: int, target_chunk_bytes: int) -> list[tuple[int, int]]:
    """The spans of :func:`split_event_array` for the array body ``[body_start, body_end)``:
    ``find(a, b)`` gives (start, end) of the first ``}, {`` boundary lying in ``[a, b)``."""
    spans: list[tuple[int, int]] = []
    start = body_start
    while body_end - start > target_chunk_bytes * 3 // 2:
        got = find(start + target_chunk_bytes, body_end)
        if got is None:
            break
        spans.append((start, got[0] + 1))  # up to and including the closing brace
        start = got[1] - 1  # from the opening brace of the next event
    spans.append((start, body_end))
    return spans

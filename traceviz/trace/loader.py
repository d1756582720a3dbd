"""``load(path) -> Trace``: bytes → top-level split → chunked event decode → tables."""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from traceviz.errors import NotATraceError, TraceDecodeError
from traceviz.lazy import pandas as pd
from traceviz.trace import scanned
from traceviz.trace.begin_end import join as join_begin_end
from traceviz.trace.begin_end import pair_steps
from traceviz.trace.chunk import decode_chunk
from traceviz.trace.decode import (
    BOUNDARY,
    LEADING_WS,
    MISSING_ID,
    BeginEnd,
    ColumnChunk,
    string_id,
)
from traceviz.trace.limits import format_size, max_memory_bytes
from traceviz.trace.parallel import (
    can_fork,
    check_workers,
    decode_spans_parallel,
    decode_spans_threaded,
    decode_workers,
    thread_map,
    worker_count,
)
from traceviz.trace.source import GZIP_MAGIC, read_trace_bytes, too_large
from traceviz.trace.tables import (
    DeviceInfo,
    Trace,
    TraceMeta,
    UnpairedSteps,
    comms_from_chunks,
)
from traceviz.trace.text import FileText, MemoryText, Text, split_text
from traceviz.trace.top_level import (
    duplicate_key,
    duplicate_message,
    offset_in,
    refuse_duplicate_keys,
)
from traceviz.vocab import (
    CPU_CATEGORIES,
    GPU_ACTIVITY_CATEGORIES,
    RUNTIME_CATEGORIES,
    Category,
    is_sync_call,
    launch_kind,
)

#: Bytes of event JSON decoded at a time (bounds the transient per-event objects).
CHUNK_BYTES = 16 * 1024 * 1024
#: Traces at least this large are read by threads and decoded by worker processes
#: (:mod:`traceviz.trace.parallel`).
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
#: A trace decoded by several workers is cut into at least this many chunks per worker.
CHUNKS_PER_WORKER = 8
#: At most this many threads read a plain JSON file.
READ_THREADS_MAX = 64

Progress = Callable[[int, int], None]


#: Repairing invalid JSON holds the text as ``str`` plus one Python object per event: about
#: this many times the JSON's size, checked against the memory limit before it starts.
REPAIR_MEMORY_FACTOR = 12


def load(path: str | Path, progress: Progress | None = None,
         max_memory_bytes_: int | None = None, *, workers: int | None = None,
         meanwhile: Callable[[], object] | None = None) -> Trace:
    """Load a Kineto/Chrome trace (``.json`` or gzip, object or legacy array form).

    ``progress(done_bytes, total_bytes)`` is called as event chunks are decoded.
    ``max_memory_bytes_`` caps the JSON text held (default: :func:`limits.max_memory_bytes`,
    80 % of available memory or the CLI's ``--max-memory``); a larger trace is refused with
    :class:`~traceviz.errors.TraceTooLargeError` before decoding.
    ``workers``: processes decoding the events of a trace of at least
    :data:`PARALLEL_MIN_BYTES` (``None``: every usable core, capped by memory;
    :func:`traceviz.trace.parallel.decode_workers`), and threads building its tables.
    ``meanwhile()`` is called at most once, here, while worker processes decode the events
    (after pandas, which the tables need, is imported): imports the caller needs next cost no
    wall time there. It is not called when the events are decoded in this process.
    Raises :class:`~traceviz.errors.TracevizError` subclasses on bad input.
    """
    check_workers(workers)
    limit = max_memory_bytes(max_memory_bytes_)
    try:
        with _plain_file(Path(path), limit[0], workers) as file:
            parts = (None if file is None
                     else _split_and_decode_fast(file, str(path), progress, workers, meanwhile))
        if parts is not None and file is not None:  # decoded by the workers from the file
            on_disk = json_bytes = len(file)
            gzipped = False
        else:
            data, gzipped, on_disk = read_trace_bytes(
                path, *limit, threads=decode_workers(workers, READ_THREADS_MAX),
                threads_from_bytes=PARALLEL_MIN_BYTES)
            json_bytes = len(data)
            # Tried on the file already: not again on its bytes.
            parts = None if file is not None else _split_and_decode_fast(
                MemoryText(memoryview(data)), str(path), progress, workers, meanwhile)
            if parts is None:
                top, events_buf, form, notes = _split_top_level(data, str(path), limit)
                parts = top, form, notes, _decode_all(events_buf, str(path), progress, notes,
                                                      workers, meanwhile)
                del events_buf
            del data  # the JSON text is freed before the tables are built (peak memory)
    except RecursionError:
        raise TraceDecodeError(f"{path}: JSON nested too deeply to decode") from None
    top, form, notes, chunks = parts
    threads = worker_count(workers) if json_bytes >= PARALLEL_MIN_BYTES else 1
    return _build_trace(str(path), on_disk, json_bytes, gzipped, form, top, chunks, notes,
                        threads)


@contextmanager
def _plain_file(path: Path, limit: int, workers: int | None) -> Iterator[FileText | None]:
    """The open file as :class:`FileText` when its decode workers can read it themselves: plain
    JSON of at least :data:`PARALLEL_MIN_BYTES` (and no more than ``limit``), several decode
    workers, and fork; else ``None`` (also when it cannot be opened: the caller's read then
    says why)."""
    try:  # a FIFO or a device would block or never end: only a regular file is opened here
        regular = stat.S_ISREG(os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY) if regular else None
    except OSError:
        fd = None
    if fd is None:
        yield None
        return
    try:
        st = os.fstat(fd)
        fits = stat.S_ISREG(st.st_mode) and PARALLEL_MIN_BYTES <= st.st_size <= limit
        yield (FileText(path, fd, 0, st.st_size)
               if fits and decode_workers(workers, -(-st.st_size // CHUNK_BYTES)) > 1
               and os.pread(fd, 2, 0) != GZIP_MAGIC and can_fork() else None)
    finally:
        os.close(fd)


# --- top level -------------------------------------------------------------------------------

_TOP_DECODER = msgspec.json.Decoder(dict[str, msgspec.Raw])
#: A UTF-8 byte-order mark, which some editors and exporters write before the JSON.
UTF8_BOM = b"\xef\xbb\xbf"
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
#: Where an array of objects can end: ``}`` (or ``[``: empty) ``]``, then ``,`` or ``}``.
_ARRAY_END = re.compile(rb"[}\[]\s*(\])\s*[,}]")
#: The fast split looks for the ``traceEvents`` array in this many bytes at each end.
SKELETON_BYTES = 1024 * 1024
#: ... and tries at most this many possible array ends, last first.
SKELETON_TRIES = 16


def _split_and_decode_fast(text: Text, path: str, progress: Progress | None,
                           workers: int | None, meanwhile: Callable[[], object] | None = None
                           ) -> tuple[dict[str, Any], str, list[str], list[ColumnChunk]] | None:
    """Split a big object-form trace without a serial pass over its events (reading only its
    ends: the events are decoded chunk by chunk, in parallel); ``None`` when this does not
    apply or fails (the caller then takes the general path, which gives the exact error).

    Guess the array: ``H`` = the text up to the first ``"traceEvents": [`` (in the first
    :data:`SKELETON_BYTES` after any leading whitespace), ``T`` = the text after one of the
    last ``]`` bytes that can end an array of objects. The guess is right when ``H + [] + T``
    decodes as an object whose (last) ``traceEvents`` value is that ``[]``, and the bytes
    between decode, chunk by chunk, as events: then the whole text is that object with that
    array — valid JSON has one parse — so the result equals the general path's, whose
    whole-text decode of the skeleton is the serial pass this saves.
    """
    size = len(text)
    if size < PARALLEL_MIN_BYTES:
        return None
    first = bytes(text.window(0, 2 * SKELETON_BYTES))
    start = LEADING_WS.match(first).end()
    if start >= SKELETON_BYTES or first[start : start + 1] != b"{":
        return None
    m = _EVENTS_KEY.search(first, start, start + SKELETON_BYTES)
    if m is None:
        return None
    head = first[: m.end() - 1]
    # The last ends: array ends in the final SKELETON_BYTES, probes up to as far before them.
    tail_at = max(len(head), size - 2 * SKELETON_BYTES)
    tail = bytes(text.window(tail_at, size))
    floor = max(len(head), size - SKELETON_BYTES)
    ends = [tail_at + e.start(1) for e in _ARRAY_END.finditer(tail, floor - tail_at)]
    for end in ends[: -SKELETON_TRIES - 1 : -1]:
        skeleton = head + b"[]" + tail[end + 1 - tail_at :]
        try:
            raw_top = _TOP_DECODER.decode(skeleton)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue
        events = raw_top.get("traceEvents")
        if (events is None or offset_in(skeleton, events) != len(head) or len(events) != 2
                or not _last_events_decode(tail, len(head) - tail_at, end - tail_at)):
            continue
        if duplicate_key(skeleton, raw_top) is not None:
            return None  # the general path names the key
        del raw_top["traceEvents"]
        notes: list[str] = []
        try:
            chunks = _decode_chunks(text.sub(len(head), end + 1), progress, notes, workers,
                                    meanwhile)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return None
        return _top_values(raw_top, notes), "object", notes, chunks
    return None


def _last_events_decode(data: bytes, start: int, end: int) -> bool:
    """Whether the events in the final :data:`SKELETON_BYTES` before ``end`` (from the first
    ``}, {`` there; the whole array, from ``start``, when it is shorter) decode: a cheap probe
    that rejects a wrong array end — one that takes later top-level members in — before the
    full decode."""
    window = max(start + 1, end - SKELETON_BYTES)
    if window > start + 1:
        first = BOUNDARY.search(data, window, end)
        if first is None:
            return True  # one event longer than the window: no cheap probe
        window = first.end() - 1
    try:
        decode_chunk(b"[" + data[window:end] + b"]")
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return True


def _top_values(raw_top: dict[str, msgspec.Raw], notes: list[str]) -> dict[str, Any]:
    """Decode the top-level values other than ``traceEvents``; an invalid one (or one holding
    a number out of range, such as ``1e400``) is noted and ignored."""
    top: dict[str, Any] = {}
    for key, raw in raw_top.items():
        try:
            top[key] = msgspec.json.decode(raw)
        except msgspec.ValidationError:
            notes.append(f"top-level key {key!r} holds a number out of range; "
                         "ignored")
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            notes.append(f"top-level key {key!r} is not valid JSON; ignored")
    return top


def _split_top_level(
    data: bytearray, path: str, limit: tuple[int, str]
) -> tuple[dict[str, Any], memoryview, str, list[str]]:
    """Return the decoded top-level metadata, a writable view of ``traceEvents`` in ``data``,
    and the form."""
    notes: list[str] = []
    if data[:3] == UTF8_BOM:  # blanked in place: JSON whitespace, no copy of the text
        data[:3] = b"   "
        notes.append("UTF-8 byte-order mark ignored")
    start = LEADING_WS.match(data).end()  # not data.lstrip(): that copies the whole text
    first = bytes(data[start : start + 1])
    if not first:
        raise TraceDecodeError(f"{path}: empty file")
    if first == b"[":
        try:
            msgspec.json.decode(data, type=msgspec.Raw)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            data = _repair(data, path, exc, notes, limit)
        notes.append("legacy top-level array form (no metadata)")
        return {}, memoryview(data), "array", notes
    if first != b"{":
        _refuse_scalar(data, path, first)
    try:
        raw_top = _TOP_DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        data = _repair(data, path, exc, notes, limit)
        try:
            raw_top = _TOP_DECODER.decode(data)
        except msgspec.ValidationError:
            raise NotATraceError(f"{path}: top-level JSON is not an object") from None
    except msgspec.ValidationError:
        raise NotATraceError(f"{path}: top-level JSON is not an object") from None
    refuse_duplicate_keys(data, raw_top, path)
    events_raw = raw_top.pop("traceEvents", None)
    if events_raw is None:
        raise NotATraceError(
            f"{path}: JSON object without 'traceEvents': not a Chrome/Kineto trace"
        )
    top = _top_values(raw_top, notes)
    events_buf = _view_into(data, events_raw)
    if events_buf[:1] != b"[":
        raise NotATraceError(f"{path}: 'traceEvents' is not an array")
    return top, events_buf, "object", notes


#: What a JSON document that is neither an object nor an array is, by its first byte.
_SCALAR_KINDS = {b'"': "a string", b"t": "a boolean", b"f": "a boolean", b"n": "null",
                 **{bytes([c]): "a number" for c in b"-0123456789"}}


def _refuse_scalar(data: bytearray, path: str, first: bytes) -> None:
    """Raise for a text that starts with neither ``{`` nor ``[``: valid JSON (a string,
    number, boolean or null) is not a trace (:class:`NotATraceError`); anything else is not
    JSON (:class:`TraceDecodeError`)."""
    kind = _SCALAR_KINDS.get(first)
    if kind is not None:
        try:
            msgspec.json.decode(data, type=msgspec.Raw)
        except (msgspec.DecodeError, UnicodeDecodeError):
            kind = None
    if kind is None:
        raise TraceDecodeError(f"{path}: not JSON (starts with {first!r})")
    raise NotATraceError(f"{path}: the JSON document is {kind}, not an object with "
                         "'traceEvents': not a Chrome/Kineto trace")


def _view_into(data: bytearray, raw: msgspec.Raw) -> memoryview:
    """A writable view of ``data`` covering ``raw`` (msgspec's zero-copy slice of it)."""
    offset = offset_in(data, raw)
    if offset >= 0:
        return memoryview(data)[offset : offset + len(raw)]
    return memoryview(bytearray(raw))  # pragma: no cover - msgspec copied the value


def _repair(data: bytearray, path: str, exc: Exception, notes: list[str],
            limit: tuple[int, str]) -> bytearray:
    """Second chance for JSON that Kineto wrote invalid: control characters in names
    (``strict=False``) and bare ``N/A`` / ``inf`` / ``nan`` tokens; invalid UTF-8 becomes
    U+FFFD. Truncation is final. Needs ~``REPAIR_MEMORY_FACTOR`` × the JSON's size."""
    msg = str(exc)
    if "truncated" in msg:
        raise TraceDecodeError(f"{path}: truncated JSON (the file ends mid-trace)") from None
    need = REPAIR_MEMORY_FACTOR * len(data)
    if need > limit[0]:
        raise too_large(Path(path), f"is invalid JSON ({msg}); repairing it needs about "
                        f"{format_size(need)}", *limit)
    text = str(data, "utf-8", "replace")
    text = _BARE_TOKENS.sub(r'\1"\2"', text)
    text = _LONE_SURROGATE.sub("\ufffd", text)
    duplicated: list[str | None] = [None]  # of the object decoded last: the top-level one
    try:
        obj = json.loads(text, strict=False, object_pairs_hook=partial(_object, duplicated),
                         parse_float=_float_or_text)
    except json.JSONDecodeError as exc2:
        raise TraceDecodeError(
            f"{path}: not valid JSON ({exc2.msg} at line {exc2.lineno})"
        ) from None
    except RecursionError:
        raise TraceDecodeError(f"{path}: not valid JSON (nested too deeply)") from None
    if isinstance(obj, dict) and duplicated[0] is not None:
        raise NotATraceError(duplicate_message(path, duplicated[0]))
    notes.append("invalid JSON repaired (control characters, invalid UTF-8 or bare "
                 "N/A/inf tokens)")
    return bytearray(msgspec.json.encode(obj))


def _object(duplicated: list[str | None], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s object hook: the object as a dict; ``duplicated[0]`` becomes a key it
    gives twice, else ``None``."""
    out = dict(pairs)
    duplicated[0] = None
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                duplicated[0] = key
                break
            seen.add(key)
    return out


def _float_or_text(text: str) -> float | str:
    """``json.loads``'s float parser: a number beyond the float range (``1e400``) stays
    text, which the decoder marks as no time, as it does ``Infinity`` (as a float, ``inf``
    would be re-encoded as ``null``: an absent value, 0)."""
    value = float(text)
    return value if math.isfinite(value) else text


#: A ``\\uD800``–``\\uDFFF`` escape that is not half of a surrogate pair (not encodable).
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_BARE_TOKENS = re.compile(r"(:\s*)(N/A|-?inf|-?Infinity|nan|NaN)(?=\s*[,}\]])")


# --- events ----------------------------------------------------------------------------------


def _decode_all(buf: memoryview, path: str, progress: Progress | None,
                notes: list[str], workers: int | None = None,
                meanwhile: Callable[[], object] | None = None) -> list[ColumnChunk]:
    """Decode ``buf`` (the ``traceEvents`` array) chunk by chunk; bad input → TracevizError."""
    try:
        return _decode_chunks(MemoryText(buf), progress, notes, workers, meanwhile)
    except msgspec.ValidationError as exc:
        raise NotATraceError(f"{path}: traceEvents entries are not event objects ({exc})"
                             ) from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise TraceDecodeError(f"{path}: events are not valid JSON ({exc})") from None
    except RecursionError:
        raise TraceDecodeError(f"{path}: events are nested too deeply") from None


def _chunk_bytes(total: int, workers: int) -> int:
    """Chunk size for ``workers``: at most :data:`CHUNK_BYTES`, and ``total`` cut into a
    multiple of ``workers`` chunks, at least :data:`CHUNKS_PER_WORKER` each. All workers
    decode at once, each holding one chunk's transient objects (≈ 3× the chunk): smaller
    chunks keep the peak low at many workers (and the shares even)."""
    if workers <= 1:
        return CHUNK_BYTES
    rounds = max(CHUNKS_PER_WORKER, -(-total // (workers * CHUNK_BYTES)))
    return max(1, -(-total // (workers * rounds)))


def _decode_chunks(text: Text, progress: Progress | None, notes: list[str],
                   workers: int | None, meanwhile: Callable[[], object] | None = None
                   ) -> list[ColumnChunk]:
    total = len(text)
    n = decode_workers(workers, -(-total // CHUNK_BYTES)) if total >= PARALLEL_MIN_BYTES else 1
    spans = split_text(text, _chunk_bytes(total, n))
    n = min(n, len(spans))
    # The C scanner decodes without the GIL: threads; msgspec holds it: forked processes.
    parallel = decode_spans_threaded if scanned.SCANNER is not None else (
        decode_spans_parallel if can_fork() else None)
    if n > 1 and parallel is not None:
        try:
            return parallel(text, spans, n, progress, partial(_while_decoding, meanwhile))
        except msgspec.DecodeError as exc:
            if isinstance(exc, msgspec.ValidationError) or "truncated" not in str(exc):
                raise
            # a cut fell inside a string: decode serially, merging spans where needed
    out = []
    i = 0
    while i < len(spans):
        start, end = spans[i]
        while True:
            try:
                out.append(text.decode(start, end))
                break
            except msgspec.DecodeError as exc:
                # A cut inside a string (a name containing "}, {") leaves the chunk's last
                # string unterminated: take the next span in too and try again.
                if (isinstance(exc, msgspec.ValidationError) or "truncated" not in str(exc)
                        or i + 1 == len(spans)):
                    raise
                i += 1
                end = spans[i][1]
                if not any(n.startswith("chunk cut") for n in notes):
                    notes.append("chunk cut inside a string (a name contains '}, {'); "
                                 "chunks merged there")
        if progress is not None:
            progress(end, total)
        i += 1
    return out


def _while_decoding(meanwhile: Callable[[], object] | None) -> None:
    """This process's work while its workers decode: import pandas (for the tables), then
    the caller's ``meanwhile``."""
    importlib.import_module("pandas")
    if meanwhile is not None:
        meanwhile()


# --- tables ----------------------------------------------------------------------------------


def _concat(chunks: list[ColumnChunk], threads: int, notes: list[str]
            ) -> tuple[dict[str, np.ndarray], list[str], dict[str, np.ndarray],
                       UnpairedSteps | None]:
    """The chunks' columns joined (one column per thread), names renumbered into one list,
    and the ``ProfilerStep`` spans given as ``B``/``E`` events appended as ``user_annotation``
    rows (:func:`_step_rows`); the chunks' flow columns joined (``cat``, ``name``, ``ts_ns``,
    ``id``); and the step ``B``/``E`` events that did not pair."""
    global_index: dict[str, int] = {}
    name_parts, flow_name_parts, begin_end = [], [], []
    for c in chunks:
        lut = np.fromiter(
            (global_index.setdefault(n, len(global_index)) for n in c.names),
            dtype=np.int32,
            count=len(c.names),
        )
        name_parts.append(lut[c.name] if len(c.name) else c.name)
        flow_name_parts.append(lut[c.flow_name] if len(c.flow_name) else c.flow_name)
        begin_end.append((c.begin_end, lut))
    names = list(global_index)
    steps, unpaired = _step_rows(join_begin_end(begin_end), names, notes)
    keys = ("cat", "pid", "tid", "ts_ns", "dur_ns", "correlation", "external_id")
    joined = thread_map(lambda k: np.concatenate(
        [getattr(c, k) for c in chunks] + ([steps[k]] if steps else [])), keys, threads)
    cols = dict(zip(keys, joined, strict=True))
    name_parts += [steps["name"]] if steps else []
    cols["name"] = np.concatenate(name_parts) if name_parts else np.zeros(0, np.int32)
    flows = {k: np.concatenate([getattr(c, f"flow_{k}") for c in chunks])
             if chunks else np.zeros(0, np.int64) for k in ("cat", "ts_ns", "id")}
    flows["name"] = (np.concatenate(flow_name_parts) if flow_name_parts
                     else np.zeros(0, np.int32))
    return cols, names, flows, unpaired


def _step_rows(events: BeginEnd, names: list[str], notes: list[str]
               ) -> tuple[dict[str, np.ndarray] | None, UnpairedSteps | None]:
    """The ``ProfilerStep`` spans among the ``B``/``E`` ``events``
    (:func:`~traceviz.trace.begin_end.pair_steps`) as rows of the event columns
    (``user_annotation``, no ids; ``None``: none), and those that did not pair; notes how
    many paired and how many other ``B``/``E`` events are not read."""
    spans = pair_steps(events)
    if spans is None:
        return None, None
    rows = None
    n = len(spans.name)
    if n:
        notes.append(f"{n} ProfilerStep span{'s' if n != 1 else ''} given as 'B'/'E' event "
                     "pairs: read as steps")
        missing = np.full(n, MISSING_ID, np.int64)
        rows = {"cat": np.full(n, Category.USER_ANNOTATION, np.int8), "name": spans.name,
                "pid": spans.pid, "tid": spans.tid, "ts_ns": spans.ts_ns,
                "dur_ns": spans.dur_ns, "correlation": missing, "external_id": missing}
    if spans.other_events:
        notes.append(f"{spans.other_events} 'B'/'E' event{'s' if spans.other_events != 1 else ''}"
                     " other than ProfilerStep spans not read (traceviz reads timed events as "
                     "'ph': 'X')")
    if spans.first_unpaired is None:
        return rows, None
    at, ts = spans.first_unpaired
    begin = bool(events.sign[at] > 0)
    return rows, UnpairedSteps(spans.unpaired_begins, spans.unpaired_ends,
                               "B" if begin else "E",
                               names[events.step_name[at]] if begin else "", ts)


def _names_dtype(name_list: list[str]) -> pd.CategoricalDtype:
    """The one dtype of the tables' ``name`` columns (its categories are checked once, here).

    pandas checks that the categories are distinct with a hash table over them, which it then
    keeps on them for lookups by name (``get_loc``): 16 bytes a name and more — 33 MiB for the
    10⁶ distinct step names of ``benchmarks/many_steps.py``, held through the analysis's peak.
    Nothing looks a name up that way (the analysis works on the codes), so the table is
    dropped once the check is done; a lookup would build it again."""
    dtype = pd.CategoricalDtype(pd.Index(name_list, dtype=object))
    getattr(dtype.categories, "_cache", {}).pop("_engine", None)
    return dtype


def _flow_table(flows: dict[str, np.ndarray], names: pd.CategoricalDtype) -> pd.DataFrame:
    """The ``flows`` table: the flow columns sorted by ``ts_ns`` (stable: file order within
    one time)."""
    order = np.argsort(flows["ts_ns"], kind="stable")
    return pd.DataFrame({
        "cat": flows["cat"][order].astype(np.int8, copy=False),
        "name": pd.Categorical.from_codes(flows["name"][order], dtype=names),
        "ts_ns": flows["ts_ns"][order],
        "id": flows["id"][order],
    })


def _table(cols: dict[str, np.ndarray], mask: np.ndarray, names: pd.CategoricalDtype,
           keys: Iterable[str]) -> pd.DataFrame:
    """The rows of ``mask`` sorted by ``ts_ns`` (stable), columns ``keys`` (``end_ns = ts_ns +
    dur_ns``). The int64 columns are gathered straight into one 2-D block that the DataFrame
    keeps as is (building it from separate columns would copy them all once more)."""
    idx = np.flatnonzero(mask)
    order = idx[np.argsort(cols["ts_ns"][idx], kind="stable")]
    ints = [k for k in keys if k not in ("cat", "name")]
    block = np.empty((len(ints), len(order)), np.int64)
    for i, k in enumerate(ints):
        if k == "end_ns":
            np.add(block[ints.index("ts_ns")], block[ints.index("dur_ns")], out=block[i])
        else:
            np.take(cols[k].astype(np.int64, copy=False), order, out=block[i], mode="clip")
    df = pd.DataFrame(block.T, columns=ints, copy=False)
    for at, k in enumerate(keys):
        if k == "cat":
            df.insert(at, k, cols[k][order])
        elif k == "name":
            df.insert(at, k, pd.Categorical.from_codes(cols[k][order], dtype=names))
    return df


def _build_trace(
    path: str,
    on_disk: int,
    json_bytes: int,
    gzipped: bool,
    form: str,
    top: dict[str, Any],
    chunks: list[ColumnChunk],
    notes: list[str],
    threads: int = 1,
) -> Trace:
    """The trace's tables from the decoded chunks (``threads``: build the columns and the
    tables on that many threads)."""
    n_events = sum(c.n_events for c in chunks)
    counts: dict[str, int] = {}
    string_ids: dict[int, str] = {}
    meta_rows: list[tuple[str, Any, Any, Any]] = []
    for c in chunks:
        for k, v in c.category_counts.items():
            counts[k] = counts.get(k, 0) + v
        string_ids.update(c.string_ids)
        meta_rows.extend(c.metadata_rows)
    cols, name_list, flow_cols, unpaired = _concat(chunks, threads, notes)
    if not len(cols["cat"]):
        raise NotATraceError(f"{path}: no timed events: " + (
            f"none of the {n_events} entries of 'traceEvents' is a 'ph': 'X' event of a "
            "known category" if n_events else "'traceEvents' is empty"))
    names = _names_dtype(name_list)
    cat = cols["cat"]
    gpu, runtime, cpu = thread_map(
        lambda spec: _table(cols, np.isin(cat, sorted(spec[0])), names, spec[1]), [
            (GPU_ACTIVITY_CATEGORIES, ("cat", "name", "pid", "tid", "ts_ns", "dur_ns",
                                       "end_ns", "correlation", "external_id")),
            (RUNTIME_CATEGORIES, ("name", "pid", "tid", "ts_ns", "dur_ns", "end_ns",
                                  "correlation", "external_id")),
            (CPU_CATEGORIES, ("cat", "name", "pid", "tid", "ts_ns", "dur_ns", "end_ns",
                              "external_id")),
        ], threads)
    flows = _flow_table(flow_cols, names)
    del flow_cols
    gpu = gpu.rename(columns={"pid": "device", "tid": "stream"})
    kind_by_name = np.fromiter(
        (launch_kind(n) for n in name_list), dtype=np.int8, count=len(name_list)
    )
    sync_by_name = np.fromiter(
        (is_sync_call(n) for n in name_list), dtype=bool, count=len(name_list)
    )
    rt_codes = runtime["name"].cat.codes.to_numpy()
    runtime["kind"] = kind_by_name[rt_codes] if len(rt_codes) else np.zeros(0, np.int8)
    runtime["is_sync"] = sync_by_name[rt_codes] if len(rt_codes) else np.zeros(0, bool)

    spans = [sp for c in chunks for sp in c.trace_spans]
    trace_span = (spans[0][0], spans[0][0] + spans[0][1]) if spans else None

    process_names, thread_names = _process_thread_names(meta_rows, string_ids)
    base = top.get("baseTimeNanoseconds")
    base_ns = (int(base) if isinstance(base, (int, float)) and not isinstance(base, bool)
               and abs(base) < 2**63 else None)  # also rejects NaN and ±inf
    if base_ns is None:
        notes.append("no baseTimeNanoseconds: timestamps are absolute epoch microseconds")
    meta = TraceMeta(
        path=path,
        size_bytes=on_disk,
        json_bytes=json_bytes,
        gzipped=gzipped,
        form=form,
        events=n_events,
        base_time_ns=base_ns,
        timestamps="relative" if base_ns is not None else "absolute",
        schema_version=top.get("schemaVersion")
        if isinstance(top.get("schemaVersion"), int)
        else None,
        devices=_devices(top.get("deviceProperties")),
        distributed=top.get("distributedInfo")
        if isinstance(top.get("distributedInfo"), dict)
        else None,
        metadata={
            k: v
            for k, v in top.items()
            if k
            not in ("deviceProperties", "distributedInfo", "baseTimeNanoseconds", "schemaVersion")
        },
        category_counts=counts,
        process_names=process_names,
        thread_names=thread_names,
        string_ids=string_ids,
        trace_span_ns=trace_span,
        notes=tuple(notes),
        unpaired_steps=unpaired,
    )
    return Trace(meta=meta, gpu=gpu, runtime=runtime, cpu=cpu,
                 comms=comms_from_chunks(chunks, cols), flows=flows)


def _devices(props: Any) -> tuple[DeviceInfo, ...]:
    """``deviceProperties`` entries; a field of the wrong type is left out (``id``: the
    entry's position)."""
    if not isinstance(props, list):
        return ()
    out = []
    for p in props:
        if not isinstance(p, dict):
            continue
        major, minor = p.get("computeMajor"), p.get("computeMinor")
        out.append(
            DeviceInfo(
                id=_int_or(p.get("id"), len(out)),
                name=str(p.get("name", "?")),
                sms=_int_or(p.get("numSms"), None),
                total_memory_bytes=_int_or(p.get("totalGlobalMem"), None),
                compute_capability=f"{major}.{minor}"
                if _int_or(major, None) is not None and _int_or(minor, None) is not None
                else None,
            )
        )
    return tuple(out)


def _int_or(v: Any, default: int | None) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _as_id(v: Any, string_ids: dict[int, str]) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        sid = string_id(v)
        string_ids.setdefault(sid, v)
        return sid
    return None


def _process_thread_names(
    rows: list[tuple[str, Any, Any, Any]], string_ids: dict[int, str]
) -> tuple[dict[int, str], dict[tuple[int, int], str]]:
    """Deduplicated ``process_name`` / ``process_labels`` / ``thread_name`` metadata rows."""
    procs: dict[int, str] = {}
    labels: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    for kind, pid, tid, value in rows:
        p = _as_id(pid, string_ids)
        if p is None or not isinstance(value, str):
            continue
        if kind == "process_name":
            procs.setdefault(p, value)
        elif kind == "process_labels":
            labels.setdefault(p, value)
        elif kind == "thread_name":
            t = _as_id(tid, string_ids)
            if t is not None:
                threads.setdefault((p, t), value.strip())
    for p, label in labels.items():
        procs[p] = f"{procs[p]} ({label})" if p in procs else label
    return procs, threads

"""Columns of an event chunk from the C scanner (``traceviz.trace._scan``), equal to msgspec's.

The scanner reads the ``X`` and flow events of a chunk straight into C arrays
(``traceviz/trace/_scan.c`` documents what it returns and when it declines). This module turns
its output into the :class:`~traceviz.trace.decode.ColumnChunk` that
:func:`~traceviz.trace.decode.columns_from_events` builds from msgspec's typed events — the
same columns, codes, name order and dictionaries, value for value
(``tests/test_scanner_equivalence.py``) — decoding only the rare other events (metadata,
``B``/``E``, collective args) with msgspec. Where the scanner declines, or the chunk holds
:data:`~traceviz.vocab.OVERLAY_CATEGORY` events, :func:`scanned_columns` returns ``None`` and
the caller takes the msgspec path, which also gives the exact error for bad input.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import msgspec
import numpy as np

from traceviz.int_sets import distinct_with
from traceviz.trace.decode import (
    KEPT_X,
    BeginEnd,
    ColumnChunk,
    begin_end_columns,
    category_code,
    comm_row,
    decode_events,
    metadata_row,
    pid_tid_column,
)
from traceviz.vocab import OVERLAY_CATEGORY, Category

#: Set to ``1`` to decode with msgspec alone (the scanner's reference; benchmarks' "before").
NO_SCANNER_ENV = "TRACEVIZ_NO_SCANNER"


def _off() -> bool:
    return os.environ.get(NO_SCANNER_ENV, "") not in ("", "0")


def load_scanner() -> ModuleType | None:
    """The compiled scanner, or ``None``: not built here (no C compiler at install time), or
    turned off with ``TRACEVIZ_NO_SCANNER=1``."""
    if _off():
        return None
    try:
        from traceviz.trace import _scan
    except ImportError:
        return None
    return _scan


SCANNER = load_scanner()


def decoder() -> str:
    """Which decoder reads traces in this process, in words (``traceviz --version``)."""
    if SCANNER is not None:
        return "C scanner (msgspec for what it leaves)"
    why = (f"turned off by {NO_SCANNER_ENV}" if _off()
           else "not built: no C compiler when traceviz was installed")
    return f"msgspec alone ({why}; same results, slower)"


def _text(raw: bytes, escaped: bool) -> str:
    """A JSON string's contents (validated UTF-8 by the scanner) as ``str``."""
    return msgspec.json.decode(b'"' + raw + b'"') if escaped else raw.decode("utf-8")


def _first_seen(codes: np.ndarray) -> np.ndarray:
    """The distinct values of ``codes`` in order of first appearance."""
    uniq, first = distinct_with(codes, index=True)
    return uniq[np.argsort(first, kind="stable")]


def _renumber(codes: np.ndarray, raw: list[bytes], escaped: bytes,
              lookup: dict[str, int]) -> np.ndarray:
    """``codes`` (into ``raw``) as codes into ``lookup``'s strings, which gain the new ones in
    order of first appearance (as :func:`~traceviz.trace.decode._factorize` numbers them)."""
    if not len(codes):
        return np.zeros(0, np.int32)
    lut = np.zeros(len(raw), np.int32)
    for c in _first_seen(codes).tolist():
        lut[c] = lookup.setdefault(_text(raw[c], bool(escaped[c])), len(lookup))
    return lut[codes]


def _ids_of(values: np.ndarray, str_codes: np.ndarray, strings: list[bytes],
            string_ids: dict[int, str]) -> np.ndarray:
    """A pid/tid column (``str_codes`` ≥ 0: the value is ``strings[code]``), as the msgspec
    path's :func:`~traceviz.trace.decode._pid_tid` makes it from the same values — through
    it, where any value is a string (rare: string ids came with older profilers)."""
    if not (str_codes >= 0).any():
        return values
    text = [s.decode("utf-8") for s in strings]
    return pid_tid_column([text[c] if c >= 0 else v
                           for v, c in zip(values.tolist(), str_codes.tolist(), strict=True)],
                          string_ids)


def scanned_columns(buf: bytes | bytearray | memoryview) -> ColumnChunk | None:
    """The columns of the JSON event array ``buf`` by the C scanner; ``None`` where there is
    no scanner, it declines, or the chunk holds overlay events (the caller then decodes with
    msgspec)."""
    if SCANNER is None:
        return None
    got = SCANNER.scan(buf)
    if got is None:
        return None
    (n_events, n_x, raw_cols, cats_raw, names_raw, names_esc, flow_raw, flow_esc, strings,
     rare_raw, comm_raw) = got
    cat_values = [c.decode("utf-8") for c in cats_raw]
    if OVERLAY_CATEGORY in cat_values:
        return None
    cols: dict[str, np.ndarray] = {
        k: np.frombuffer(v, np.int32 if k in ("cat", "name", "pid_str", "tid_str", "flow_start",
                                              "flow_name") else np.int64)
        for k, v in raw_cols.items()}
    cat_lut = np.array([category_code(c) for c in cat_values] or [0], dtype=np.int8)
    cat = cat_lut[cols["cat"]] if n_x else np.zeros(0, np.int8)
    per_cat = np.bincount(cols["cat"], minlength=len(cat_values))
    category_counts = {cat_values[i]: int(c) for i, c in enumerate(per_cat.tolist()) if c}
    kept_idx = np.flatnonzero(np.isin(cat, KEPT_X))
    spans_at = np.flatnonzero(cat == Category.TRACE_SPAN).tolist()
    trace_spans = [(int(cols["ts_ns"][i]), int(cols["dur_ns"][i])) for i in spans_at]

    try:
        rare = _rare_events(buf, np.frombuffer(rare_raw, np.int64))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None  # the msgspec path gives the error
    metadata_rows = []
    be: list[Any] = []
    for e in rare:
        if e.ph == "M":
            metadata_rows.append(metadata_row(e))
        elif e.ph in ("B", "E"):
            be.append(e)
    begin = np.array([e.ph == "B" for e in be], dtype=bool)
    step_rows = np.flatnonzero(begin & np.array(
        [category_code(e.cat) == Category.USER_ANNOTATION for e in be], dtype=bool))

    lookup: dict[str, int] = {}
    name = _renumber(cols["name"][kept_idx], names_raw, names_esc, lookup)
    flow_name = _renumber(cols["flow_name"], flow_raw, flow_esc, lookup)
    step_codes = np.fromiter((lookup.setdefault(be[i].name, len(lookup))
                              for i in step_rows.tolist()), np.int32, len(step_rows))
    uniques = list(lookup)

    string_ids: dict[int, str] = {}
    pid = _ids_of(cols["pid"][kept_idx], cols["pid_str"][kept_idx], strings, string_ids)
    tid = _ids_of(cols["tid"][kept_idx], cols["tid_str"][kept_idx], strings, string_ids)
    comm = np.frombuffer(comm_raw, np.int64).reshape(-1, 3)
    comm_rows = []
    for x_row, start, end in comm.tolist():
        at = int(np.searchsorted(kept_idx, x_row))
        if at < len(kept_idx) and kept_idx[at] == x_row:
            event = decode_events(b"[" + bytes(buf[start:end]) + b"]")[0]
            comm_rows.append(comm_row(at, event.args))
    flow_start = cols["flow_start"] == 1
    return ColumnChunk(
        cat=cat[kept_idx],
        name=name,
        names=uniques,
        pid=pid,
        tid=tid,
        ts_ns=cols["ts_ns"][kept_idx],
        dur_ns=cols["dur_ns"][kept_idx],
        correlation=cols["correlation"][kept_idx],
        external_id=cols["external_id"][kept_idx],
        metadata_rows=metadata_rows,
        n_events=n_events,
        category_counts=category_counts,
        string_ids=string_ids,
        trace_spans=trace_spans,
        comm_rows=comm_rows,
        flow_cat=np.where(flow_start, Category.FLOW_START, Category.FLOW_END).astype(np.int8),
        flow_name=flow_name,
        flow_ts_ns=cols["flow_ts_ns"].copy(),
        flow_id=cols["flow_id"].copy(),
        begin_end=begin_end_columns(be, begin, step_rows, step_codes, uniques, string_ids)
        if be else BeginEnd(),
    )


def _rare_events(buf: bytes | bytearray | memoryview, spans: np.ndarray) -> list[Any]:
    """The events at ``spans`` (``start, end`` pairs) decoded by msgspec, in order."""
    if not len(spans):
        return []
    pairs = spans.reshape(-1, 2).tolist()
    view = memoryview(buf)
    return decode_events(b"[" + b",".join(view[s:e] for s, e in pairs) + b"]")

"""The C scanner (``traceviz/trace/_scan.c`` + :mod:`traceviz.trace.scanned`) gives msgspec's
columns exactly, or declines.

The reference is the msgspec path (``columns_from_events(decode_events(buf))``). For every
input: where the scanner returns columns they equal the reference's field by field (values,
dtypes, the order of names and of every dictionary); where msgspec raises, the scanner
declines (``None``), so the error stays msgspec's. Inputs: generated Kineto traces (valid
and hostile), generated event arrays of odd JSON (escapes, non-ASCII, numbers in every form,
wrong types, duplicate keys, nesting), byte-level mutations of valid arrays, time values at
the edges of the nanosecond conversion, and every real trace in the repository and in
``../shared/cases/hta``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import hostile, kineto_traces
from traceviz.trace import scanned
from traceviz.trace.decode import BeginEnd, ColumnChunk, columns_from_events, decode_events

#: Where a C compiler is (CI's machines), the install builds the scanner: then these tests run
#: and a missing scanner fails them. Skipped only where it cannot be built or is turned off.
_OFF = os.environ.get(scanned.NO_SCANNER_ENV, "") not in ("", "0")
_NO_CC = shutil.which("cc") is None and shutil.which("gcc") is None
pytestmark = pytest.mark.skipif(scanned.SCANNER is None and (_OFF or _NO_CC),
                                reason="no C compiler to build the scanner, or it is turned off")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "cases" / "hta"

_SETTINGS = settings(derandomize=True, deadline=None, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def reference(buf: bytes) -> ColumnChunk | Exception:
    """The msgspec path's columns, or the error it raises."""
    try:
        return columns_from_events(decode_events(buf))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError, OverflowError) as exc:
        return exc


def assert_same(got: ColumnChunk, want: ColumnChunk) -> None:
    for f in fields(ColumnChunk):
        a, b = getattr(got, f.name), getattr(want, f.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, f.name
            assert np.array_equal(a, b), f.name
        elif isinstance(b, BeginEnd):
            assert a == b, f.name
        elif isinstance(b, dict):
            assert list(a.items()) == list(b.items()), f.name
        else:
            assert a == b, f.name


def check(buf: bytes) -> bool:
    """Scanner against reference on ``buf``; whether the scanner took it."""
    assert scanned.SCANNER is not None, "the C scanner was not built (see setup.py)"
    want = reference(buf)
    got = scanned.scanned_columns(buf)
    if isinstance(want, Exception):
        assert got is None, f"scanner took what msgspec rejects ({want})"
        return False
    if got is not None:
        assert_same(got, want)
    return got is not None


def events_array(document: bytes) -> bytes:
    """The raw ``traceEvents`` array of a trace document."""
    return bytes(msgspec.json.decode(document, type=dict[str, msgspec.Raw])["traceEvents"])


# --- generated traces --------------------------------------------------------------------


@_SETTINGS
@given(st.one_of(kineto_traces(), hostile()))
def test_generated_traces_scan_to_the_msgspec_columns(gen: Any) -> None:
    check(json.dumps(gen.builder.document()["traceEvents"], indent=1).encode())


def test_a_plain_kineto_array_is_taken_not_declined() -> None:
    buf = json.dumps([
        {"ph": "X", "cat": "kernel", "name": "k\u00e9\\\"", "pid": 0, "tid": 7,
         "ts": 1790857026000000.125, "dur": 1.5, "args": {"correlation": 5, "External id": 9}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 10.001, "dur": 2, "args": {"correlation": 5, "external id": 3}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": "host", "tid": "thread 4",
         "ts": 9, "dur": 4, "args": {"External id": 3, "Collective name": "allreduce",
                                     "In msg nelems": 4, "Group size": 2}},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 0, "tid": 7, "ts": 12,
         "bp": "e"},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"ph": "B", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1,
         "ts": 1},
        {"ph": "E", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 30},
        {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "ts": 0, "dur": 99},
        {"ph": "i", "s": "t", "name": "marker", "ts": 3},
    ], ensure_ascii=False).encode()
    assert check(buf)


# --- odd JSON ------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
_NUMBER_TEXT = st.sampled_from([
    "0", "-0", "7", "-12", "1e3", "1E-3", "2.5", "-0.0005", "0.0005", "0.0015", "123.4565",
    "4e15", "4000000000000000", "4000000000000000.5", "-4e15", "4.000000000000001e15",
    "1790857026000000.123", "4717313440575.101", "9007199254740993", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "1e400", "-1e400", "1e-400", "0.1e1", "12345678901234567890.5",
    "1.7976931348623157e308", "3.0", "99999999999999999999999999",
])
_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), _TEXT, _NUMBER_TEXT.map(msgspec.Raw)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=6,
)
_KEYS = st.sampled_from(["ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "args", "s",
                         "bp", "p\\u0068", "x"])
_ARG_KEYS = st.sampled_from(["correlation", "External id", "external id", "name", "labels",
                             "Collective name", "In msg nelems", "Group size", "Seq", "dtype",
                             "other"])
_PH = st.sampled_from(["X", "X", "X", "s", "f", "M", "B", "E", "i", "x", "\\u0058", ""])
_CAT = st.sampled_from(["kernel", "cuda_runtime", "cpu_op", "user_annotation", "ac2g",
                        "gpu_memcpy", "Trace", "traceviz_overlay", "KERNEL", "", "cät"])


@st.composite
def odd_event(draw: st.DrawFn) -> bytes:
    """One event object as JSON text: mostly Kineto's keys, with values of any JSON type."""
    members: list[tuple[str, bytes]] = []
    if draw(st.booleans()):
        members.append(("ph", b'"' + draw(_PH).encode() + b'"'))
    if draw(st.booleans()):
        members.append(("cat", json.dumps(draw(_CAT)).encode()))
    for _ in range(draw(st.integers(0, 7))):
        key = draw(_KEYS)
        if key == "args" and draw(st.booleans()):
            args = {draw(_ARG_KEYS): draw(_VALUE) for _ in range(draw(st.integers(0, 4)))}
            members.append((key, msgspec.json.encode(args)))
        elif key in ("ts", "dur", "pid", "tid", "id") and draw(st.booleans()):
            members.append((key, draw(_NUMBER_TEXT).encode()))
        else:
            members.append((key, msgspec.json.encode(draw(_VALUE))))
    body = b",".join(b'"' + k.encode() + b'":' + v for k, v in members)
    return b"{" + body + b"}"


_INT_TEXT = st.one_of(st.integers(-(2**63), 2**63 - 1).map(str),
                      st.sampled_from(["0", "-0", "-1", "9223372036854775807"]))
_TIME_TEXT = st.one_of(_NUMBER_TEXT.filter(lambda t: "400" not in t), st.floats(
    allow_nan=False, allow_infinity=False).map(repr), st.decimals(
    -(10**16), 10**16, places=3, allow_nan=False, allow_infinity=False).map(str))
_STR_JSON = _TEXT.map(lambda t: json.dumps(t, ensure_ascii=False))
#: Strings with no escape (the scanner leaves an escaped pid/tid to msgspec).
_PLAIN_JSON = st.sampled_from(["stream 7", "thread 12", "host", "7", "ré", ""]).map(
    lambda t: json.dumps(t, ensure_ascii=False))


@st.composite
def typed_event(draw: st.DrawFn) -> bytes:
    """An event whose values all have the types msgspec's typed schema takes (the scanner's
    own ground): names with escapes and non-ASCII text, times in every number form, string
    and integer pids, ids, collective args, unknown keys holding any JSON."""
    members = [("ph", json.dumps(draw(st.sampled_from(["X", "X", "s", "f", "M", "i"]))))]
    if draw(st.booleans()):
        members.append(("cat", json.dumps(draw(_CAT), ensure_ascii=False)))
    for key in draw(st.lists(st.sampled_from(["name", "pid", "tid", "ts", "dur", "id", "args",
                                              "extra"]), unique=True)):
        if key == "name":
            members.append((key, draw(_STR_JSON)))
        elif key in ("pid", "tid"):
            members.append((key, draw(st.one_of(_INT_TEXT, _PLAIN_JSON))))
        elif key in ("ts", "dur"):
            members.append((key, draw(_TIME_TEXT)))
        elif key == "id":
            members.append((key, draw(st.one_of(_INT_TEXT, st.just("null")))))
        elif key == "args":
            args = {k: draw(_INT_TEXT) for k in draw(st.lists(st.sampled_from(
                ["correlation", "External id", "external id"]), unique=True))}
            if draw(st.booleans()):
                args["Collective name"] = draw(st.sampled_from(['"allreduce"', "null", "3"]))
                args["In msg nelems"] = draw(_INT_TEXT)
            if draw(st.booleans()):
                args["name"] = draw(_STR_JSON)
            members.append((key, "{" + ",".join(f'"{k}":{v}' for k, v in args.items()) + "}"))
        else:
            members.append((key, msgspec.json.encode(draw(_VALUE)).decode()))
    return ("{" + ", ".join(f'"{k}": {v}' for k, v in members) + "}").encode()


@_SETTINGS
@given(st.lists(typed_event(), max_size=10))
def test_typed_events_are_taken_and_scan_to_the_msgspec_columns(events: list[bytes]) -> None:
    buf = b"[" + b",\n".join(events) + b"]"
    assert check(buf) or b'"traceviz_overlay"' in buf


@_SETTINGS
@given(st.lists(odd_event(), max_size=8), st.sampled_from([b",", b" ,\n  "]))
def test_odd_events_scan_to_the_msgspec_columns_or_decline(events: list[bytes], sep: bytes
                                                           ) -> None:
    check(b"[" + sep.join(events) + b"]")


@_SETTINGS
@given(st.lists(odd_event(), min_size=1, max_size=4), st.data())
def test_a_mutated_byte_never_makes_the_scanner_take_what_msgspec_rejects(
        events: list[bytes], data: st.DataObject) -> None:
    buf = bytearray(b"[" + b",".join(events) + b"]")
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(buf) - 1))
        op = data.draw(st.sampled_from(["set", "delete", "insert"]))
        byte = data.draw(st.sampled_from(
            [*b'{}[],:"\\ \n0-.eEtfnu', 0x00, 0x1F, 0x7F, 0x80, 0xC0, 0xE0, 0xED, 0xF5, 0xFF]))
        if op == "set":
            buf[at] = byte
        elif op == "delete":
            del buf[at]
        else:
            buf.insert(at, byte)
    check(bytes(buf))


@pytest.mark.parametrize("text", [
    '[{"ph":"X","cat":"kernel","ts":1,"ts":2}]',  # a known key twice
    '[{"ph":"X","cat":"kernel","args":{"correlation":1,"correlation":2}}]',
    '[{"ph":"X","cat":"kernel","name":"a\\ud800"}]',  # a lone surrogate escape
    '[{"ph":"X","cat":"kernel","ts":"12.5"}]',  # a time as text
    '[{"ph":"X","cat":"kernel","pid":1.0}]',  # a float pid
    '[{"ph":"X","cat":"kernel","args":{"correlation":9223372036854775808}}]',
    '[{"ph":"X","cat":"kernel","ts":1e400}]',
    '[{"ph":"s","cat":"ac2g","id":"0x1f","ts":1}]',  # a string flow id
    '[{"p\\u0068":"X","cat":"kernel"}]',  # an escaped key
    '[{"ph":"X","cat":"traceviz_overlay"}]',
    "[" + "[" * 70 + "]" * 70 + "]",
])
def test_what_the_scanner_leaves_to_msgspec(text: str) -> None:
    buf = text.encode()
    assert scanned.scanned_columns(buf) is None
    check(buf)


@pytest.mark.parametrize("value", [
    "0.0005", "0.0015", "0.0025", "1.0005", "-0.0005", "-1.2345", "4e15", "-4e15",
    "4000000000000000.0", "4000000000000000.5", "1790857026000000.123", "4717313440575.101",
    "9007199254740993", "123456789.123456789", "0.1", "0.7", "1e-7", "2.5e-4", "-0",
])
def test_times_at_the_edges_of_the_nanosecond_conversion(value: str) -> None:
    buf = (f'[{{"ph":"X","cat":"kernel","name":"k","ts":{value},"dur":{value}}}]').encode()
    assert check(buf)


# --- real traces ---------------------------------------------------------------------------


def _real_traces() -> list[Path]:
    found = sorted(REPO.glob("reports/*/*.json.gz")) + sorted(REPO.glob("tests/data/**/*.json*"))
    if SHARED.is_dir():
        found += sorted(SHARED.glob("*.json.gz"))
    return found


@pytest.mark.parametrize("path", _real_traces()[:: max(1, len(_real_traces()) // 24)],
                         ids=lambda p: str(p.relative_to(REPO.parent)))
def test_real_traces_scan_to_the_msgspec_columns(path: Path) -> None:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        buf = events_array(data)
    except (msgspec.DecodeError, KeyError, TypeError):
        pytest.skip("not a Kineto trace document")
    assert check(buf), "the scanner declined a real trace"


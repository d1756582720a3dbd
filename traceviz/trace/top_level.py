"""The members of a trace's top-level JSON object, and the refusal of a key given twice.

The loader and ``traceviz export`` split the top-level object with msgspec into
``{key: Raw}``: each value a zero-copy slice of the text, never decoded (``traceEvents`` may be
GBs). Like every JSON reader that builds a mapping, msgspec keeps the *last* copy of a key given
twice and silently drops the others — a second ``"traceEvents"`` would hide every event of the
first. So a duplicate top-level key is refused (:class:`~traceviz.errors.NotATraceError`,
naming the key).

How, without a second pass over the text: the kept values are slices of it, so between two
consecutive kept values (and before the first and after the last) there must be exactly one
``, "key":`` (``{`` for the first, ``}`` after the last), whitespace aside. A dropped member
leaves its key and value in such a gap, which then fails to match. Only the gaps are read:
a few bytes per key, whatever the size of the values.
"""

from __future__ import annotations

import re

import msgspec
import numpy as np

from traceviz.errors import NotATraceError

_KEY = rb'"(?:[^"\\]|\\.)*"'
_FIRST_GAP = re.compile(rb"\s*\{\s*" + _KEY + rb"\s*:\s*")
_GAP = re.compile(rb"\s*,\s*" + _KEY + rb"\s*:\s*")
_LAST_GAP = re.compile(rb"\s*\}\s*")
_EMPTY = re.compile(rb"\s*\{\s*\}\s*")
#: The first key of a gap: the key of a dropped member when the gap does not match.
_GAP_KEY = re.compile(rb"\s*[{,]\s*(" + _KEY + rb")")


def offset_in(buf: bytes | bytearray | memoryview, raw: msgspec.Raw) -> int:
    """Where msgspec's zero-copy ``raw`` starts in ``buf`` (-1: it is a copy)."""
    inner = np.frombuffer(raw, dtype=np.uint8)
    if not len(inner):
        return -1
    offset = inner.ctypes.data - np.frombuffer(buf, dtype=np.uint8).ctypes.data
    return offset if 0 <= offset <= len(buf) - len(inner) else -1


def duplicate_key(buf: bytes | bytearray | memoryview,
                  members: dict[str, msgspec.Raw]) -> str | None:
    """A key the JSON object ``buf`` (valid JSON, all of it) gives more than once, where
    ``members`` is msgspec's ``dict[str, Raw]`` decode of ``buf``; ``None`` when every key is
    given once (also when msgspec copied a value, which it does not for a bytes-like text)."""
    if not members:
        return None if _EMPTY.fullmatch(buf) else _first_key(buf, 0)
    spans = sorted((offset_in(buf, raw), len(raw)) for raw in members.values())
    if spans[0][0] < 0:  # pragma: no cover - msgspec copied a value: no offsets to check
        return None
    at = 0
    for k, (start, length) in enumerate(spans):
        if (_GAP if k else _FIRST_GAP).fullmatch(buf, at, start) is None:
            return _first_key(buf, at)
        at = start + length
    return None if _LAST_GAP.fullmatch(buf, at) else _first_key(buf, at)


def _first_key(buf: bytes | bytearray | memoryview, at: int) -> str:
    """The key of the member that starts at ``at`` (after ``{`` or ``,``), decoded."""
    m = _GAP_KEY.match(buf, at)
    if m is None:  # pragma: no cover - a gap of valid JSON starts with "{" or ","
        return "?"
    return str(msgspec.json.decode(m.group(1)))


def refuse_duplicate_keys(buf: bytes | bytearray | memoryview,
                          members: dict[str, msgspec.Raw], path: object) -> None:
    """Raise :class:`~traceviz.errors.NotATraceError` naming a key ``buf`` gives twice
    (:func:`duplicate_key`)."""
    key = duplicate_key(buf, members)
    if key is not None:
        raise NotATraceError(duplicate_message(path, key))


def duplicate_message(path: object, key: str) -> str:
    """The one line that refuses a trace giving the top-level ``key`` more than once."""
    return (f"{path}: the top-level key {key!r} is given more than once; a JSON reader keeps "
            "one copy and drops the others, so traceviz refuses the trace rather than guess "
            "(keep one copy)")

"""A JSON document that is a scalar (``null``, a number, a string, a boolean) is valid JSON
that is not a trace (:class:`NotATraceError`), not "not JSON" (issue 37, item 13); text that
is no JSON at all still is :class:`TraceDecodeError`."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import traceviz
from traceviz.errors import NotATraceError, TraceDecodeError


@pytest.mark.parametrize(("text", "kind"), [
    (b"null", "null"), (b"123", "a number"), (b" -1.5e3\n", "a number"), (b'"x"', "a string"),
    (b"true", "a boolean"), (b"false", "a boolean"), (b"\xef\xbb\xbf 0", "a number"),
])
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_scalar_document_is_valid_json_that_is_not_a_trace(tmp_path: Path, text: bytes,
                                                             kind: str, gzipped: bool) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(gzip.compress(text) if gzipped else text)
    with pytest.raises(NotATraceError, match=f"the JSON document is {kind}, not an object"):
        traceviz.load(p)


@pytest.mark.parametrize("text", [b"nul", b"123abc", b'"unterminated', b"tru", b"NaN",
                                  b"hello", b"- 1"])
def test_text_that_only_starts_like_a_scalar_is_not_json(tmp_path: Path, text: bytes) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(text)
    with pytest.raises(TraceDecodeError, match="not JSON"):
        traceviz.load(p)

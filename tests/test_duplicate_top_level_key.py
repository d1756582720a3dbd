"""A top-level key given twice (a second ``"traceEvents"`` above all) is refused, naming the
key: a JSON reader keeps one copy and silently drops the other, which hid every event of the
first array (issue 37, item 5). The same on the general path, the repair path, the big-trace
split, and in ``export``, which must never write a trace with events gone."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

import traceviz
import traceviz.trace.loader as loader
from tests.kineto import TraceBuilder
from traceviz.errors import NotATraceError


def _builder() -> TraceBuilder:
    b = TraceBuilder()
    for i in range(3):
        b.step(i, i * 100_000, 90_000)
        b.kernel(launch_ts=i * 100_000 + 1_000, ts=i * 100_000 + 10_000, dur=5_000)
    return b


def _with_second(b: TraceBuilder, key: str, value: str, after: bool = True) -> str:
    """The trace's JSON with ``"key": value`` added as a second copy, after (or before) the
    other members."""
    text = json.dumps(b.document(), indent=1)
    member = f'"{key}": {value}'
    return (text[:-1] + f",\n{member}\n}}") if after else ("{" + member + ",\n" + text[1:])


@pytest.mark.parametrize(("key", "value", "after"), [
    ("traceEvents", "[]", True),  # the report said "0 events, CPU-only", exit 0
    ("traceEvents", "[]", False),
    ("trace\\u0045vents", "[]", True),  # the same key, escaped
    ("baseTimeNanoseconds", "0", True),
    ("deviceProperties", "[]", False),
])
def test_a_key_given_twice_is_refused_naming_it(tmp_path: Path, key: str, value: str,
                                                after: bool) -> None:
    p = tmp_path / "dup.json"
    p.write_text(_with_second(_builder(), key, value, after))
    name = json.loads(f'"{key}"')
    with pytest.raises(NotATraceError, match=f"top-level key '{name}' is given more than once"):
        traceviz.load(p)


def test_a_key_given_twice_in_json_that_needs_repair_is_refused(tmp_path: Path) -> None:
    text = _with_second(_builder(), "traceEvents", "[]").replace('"schemaVersion": 1',
                                                                 '"schemaVersion": NaN')
    p = tmp_path / "dup.json"
    p.write_text(text)
    with pytest.raises(NotATraceError, match="'traceEvents' is given more than once"):
        traceviz.load(p)


def test_keys_repeated_inside_values_and_strings_are_not_top_level_duplicates(
        tmp_path: Path) -> None:
    b = _builder()
    b.top["note"] = '", "traceEvents": [], "x": "'
    b.top["nested"] = {"traceEvents": 1, "deeper": {"traceEvents": 2}}
    t = traceviz.load(b.write(tmp_path / "t.json"))
    assert t.meta.metadata["nested"]["deeper"] == {"traceEvents": 2} and len(t.gpu) == 3


@pytest.fixture
def big_path() -> Iterator[None]:
    """Every trace counts as big: split from its ends and decoded by workers."""
    with mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0), \
            mock.patch.object(loader, "CHUNK_BYTES", 300):
        yield


@pytest.mark.parametrize(("key", "value", "after"), [
    ("traceEvents", "[]", True), ("traceEvents", "[]", False),
    ("traceEvents", '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]', True),
    ("schemaVersion", "2", True),
])
def test_the_big_trace_split_refuses_a_key_given_twice_too(tmp_path: Path, big_path: None,
                                                           key: str, value: str,
                                                           after: bool) -> None:
    p = tmp_path / "dup.json"
    p.write_text(_with_second(_builder(), key, value, after))
    with pytest.raises(NotATraceError, match=f"'{key}' is given more than once"):
        traceviz.load(p, workers=3)


def test_export_never_writes_a_trace_whose_events_a_duplicate_key_would_drop(
        tmp_path: Path) -> None:
    from traceviz.export.perfetto import write_overlay

    b = _builder()
    good = b.write(tmp_path / "t.json")
    a = traceviz.analyze(good)
    dup = tmp_path / "dup.json"  # e.g. the file was rewritten between analysis and export
    dup.write_text(_with_second(b, "traceEvents", "[]"))
    out = tmp_path / "o.json"
    with pytest.raises(NotATraceError, match="'traceEvents' is given more than once"):
        write_overlay(dup, out, a.trace, a.result)
    assert not out.exists()


@pytest.mark.parametrize("command", ["report", "export"])
def test_the_cli_says_so_in_one_line_and_exits_1(tmp_path: Path, command: str) -> None:
    p = tmp_path / "dup.json"
    p.write_text(_with_second(_builder(), "traceEvents", "[]"))
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, "-m", "traceviz", command, str(p), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == "" and not out.exists()
    (line,) = r.stderr.strip().splitlines()
    assert "'traceEvents' is given more than once" in line

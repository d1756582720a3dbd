"""A number beyond the float range (a ``dur`` of ``1e400``) is named like ``Infinity``: the
event is excluded and counted by ``invalid_duration`` / ``invalid_timestamp``, and the rest of
the trace is analysed, instead of the whole trace being refused as "entries are not event
objects" (issue 37, item 13). The same in JSON that needs repair, where the number once
became ``null`` (an absent value: 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder


def _text(field: str, number: str, repair: bool = False) -> str:
    b = TraceBuilder()
    for i in range(3):
        b.step(i, i * 100_000, 90_000)
        b.kernel(launch_ts=i * 100_000 + 1_000, ts=i * 100_000 + 10_000, dur=5_000)
    doc = b.document()
    next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")[field] = "@@N@@"
    if repair:
        doc["schemaVersion"] = "@@NAN@@"
    return json.dumps(doc).replace('"@@N@@"', number).replace('"@@NAN@@"', "NaN")


@pytest.mark.parametrize(("field", "code"), [("dur", "invalid_duration"),
                                             ("ts", "invalid_timestamp")])
@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5E+999"])
@pytest.mark.parametrize("repair", [False, True])
def test_a_number_beyond_the_float_range_is_an_invalid_time_named_in_health(
        tmp_path: Path, field: str, code: str, number: str, repair: bool) -> None:
    p = tmp_path / "t.json"
    p.write_text(_text(field, number, repair))
    a = traceviz.analyze(p).result
    health = {h.code: h for h in a.health}
    assert health[code].count == 1 and health[code].strict
    assert health[code].first_event.name == "k"
    assert (a.totals.excluded_events, a.totals.kernels, a.totals.steps) == (1, 2, 3)


def test_a_null_duration_is_an_invalid_time_not_zero(tmp_path: Path) -> None:
    """``"dur": null`` on kernels is named (``invalid_duration``), not read as 0 µs of GPU
    work; an absent ``dur`` stays 0 (instant events have none)."""
    b = TraceBuilder()
    for n in (1, 2, 3):
        s = n * 100_000
        b.step(n, s, 100_000)
        b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=20_000, name="k")
    path = b.write(tmp_path / "t.json")
    doc = json.loads(path.read_text())
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            e["dur"] = None
    path.write_text(json.dumps(doc))
    health = {w.code: w for w in traceviz.analyze(path).result.health}
    assert health["invalid_duration"].count == 3

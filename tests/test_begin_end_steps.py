"""``ProfilerStep#N`` spans given as ``B``/``E`` events are paired (per thread, stack order)
into steps exactly like ``X`` ones; unpaired ones are named by the strict health code
``unpaired_step_events``, and other ``B``/``E`` events in a note (issue 37, item 7: a trace with
5 such steps was one step called ``trace``, with no word)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import traceviz
import traceviz.trace.loader as loader
from tests.kineto import CPU_PID, CPU_TID, TraceBuilder, us
from traceviz.api import Analysis
from traceviz.trace.begin_end import pair_steps
from traceviz.trace.decode import INVALID_NS, BeginEnd

STEP_NS = 100_000


def _begin(b: TraceBuilder, name: str, ts: int, cat: str = "user_annotation",
           tid: int = CPU_TID) -> None:
    b.events.append({"ph": "B", "cat": cat, "name": name, "pid": CPU_PID, "tid": tid,
                     "ts": us(ts)})


def _end(b: TraceBuilder, ts: int, tid: int = CPU_TID) -> None:
    b.events.append({"ph": "E", "pid": CPU_PID, "tid": tid, "ts": us(ts)})


def _steps(form: str, n: int = 5) -> TraceBuilder:
    """``n`` steps of two kernels each, their windows as ``X`` events or ``B``/``E`` pairs
    (with a nested ``B``/``E`` op inside each)."""
    b = TraceBuilder()
    for i in range(n):
        t = i * STEP_NS
        if form == "X":
            b.step(i, t, 90_000)
        else:
            _begin(b, f"ProfilerStep#{i}", t)
            _begin(b, "aten::linear", t + 500, cat="cpu_op")
        b.kernel(t + 1_000, t + 10_000, 5_000, name="gemm")
        b.kernel(t + 3_000, t + 20_000, 5_000, name="relu")
        if form == "BE":
            _end(b, t + 4_000)
            _end(b, t + 90_000)
    return b


def test_five_begin_end_steps_are_five_steps_like_x_ones(tmp_path: Path) -> None:
    be = traceviz.analyze(_steps("BE").write(tmp_path / "be.json"))
    x = traceviz.analyze(_steps("X").write(tmp_path / "x.json"))
    assert be.result.totals.steps == 5
    assert list(be.result.steps.names()) == [f"ProfilerStep#{i}" for i in range(5)]
    assert be.to_dict()["steps"] == x.to_dict()["steps"]
    assert be.to_dict()["totals"] == x.to_dict()["totals"]
    notes = [h.message for h in be.result.health if h.code == "format"]
    assert "5 ProfilerStep spans given as 'B'/'E' event pairs: read as steps" in notes
    assert any(n.startswith("10 'B'/'E' events other than ProfilerStep spans") for n in notes)
    assert not [h for h in be.result.health if h.strict]


def test_steps_split_across_decode_workers_pair_the_same(tmp_path: Path) -> None:
    p = _steps("BE", n=40).write(tmp_path / "be.json")
    whole = traceviz.analyze(p).to_dict()
    with mock.patch.object(loader, "CHUNK_BYTES", 300), \
            mock.patch.object(loader, "PARALLEL_MIN_BYTES", 0):
        t = traceviz.load(p, workers=3)
        chunked = Analysis(t, traceviz.analyze(t)).to_dict()
    assert chunked["steps"] == whole["steps"] and len(whole["steps"]) == 40


def test_unpaired_step_events_are_a_strict_health_warning(tmp_path: Path) -> None:
    b = _steps("BE", n=3)
    _end(b, 300_000)  # closes nothing: every span of the thread closed at 290 µs
    _begin(b, "ProfilerStep#9", 400_000)  # never closed
    a = traceviz.analyze(b.write(tmp_path / "t.json")).result
    (h,) = [h for h in a.health if h.code == "unpaired_step_events"]
    assert (h.count, h.strict) == (2, True)
    assert "1 'B' that no 'E' closes, 1 'E' with no open 'B'" in h.message
    assert "first: 'E' at ts=300.000 µs" in h.message
    assert a.totals.steps == 3


def test_an_e_closes_the_innermost_open_span_whatever_its_name(tmp_path: Path) -> None:
    b = TraceBuilder()
    _begin(b, "ProfilerStep#1", 0)
    _begin(b, "outer", 1_000, cat="cpu_op")
    b.kernel(2_000, 10_000, 1_000)
    _end(b, 5_000)  # closes "outer"
    b.kernel(20_000, 30_000, 1_000)
    _end(b, 50_000)  # closes the step
    b.kernel(60_000, 70_000, 1_000)  # after the step: unattributed
    t = traceviz.load(b.write(tmp_path / "t.json"))
    step = t.cpu[t.cpu["name"] == "ProfilerStep#1"]
    assert (step["ts_ns"].tolist(), step["dur_ns"].tolist()) == ([0], [50_000])
    a = traceviz.analyze(t)
    assert a.totals.steps == 1 and a.totals.unattributed == 1


def test_begin_end_steps_alone_make_a_trace(tmp_path: Path) -> None:
    b = TraceBuilder()
    for i in range(3):
        _begin(b, f"ProfilerStep#{i}", i * STEP_NS)
        _end(b, i * STEP_NS + 10_000 * (i + 1))
    a = traceviz.analyze(b.write(tmp_path / "t.json")).result
    assert a.cpu_only and a.totals.steps == 3


def test_an_end_with_no_valid_time_pairs_with_nothing(tmp_path: Path) -> None:
    b = _steps("BE", n=2)
    doc = b.document()
    last_end = [e for e in doc["traceEvents"] if e.get("ph") == "E"][-1]
    last_end["ts"] = "not a time"  # where it closes is unknown: its step stays open
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    a = traceviz.analyze(p).result
    (h,) = [h for h in a.health if h.code == "unpaired_step_events"]
    assert h.count == 2 and "first: 'E' at ts=invalid" in h.message
    assert list(a.steps.names()) == ["ProfilerStep#0"]


# --- pairing, against a plain stack ----------------------------------------------------------

Event = tuple[int, int, int, int]  # (sign, tid, ts, step name code or -1)


def _stack_pairs(events: list[Event]) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """Reference: per thread holding a step "B", events by ts (file order on ties) through a
    stack, those with no valid ts unpaired; (sorted (tid, ts, dur, name) of step pairs,
    unpaired step B, unpaired E)."""
    step_tids = {t for s, t, _, n in events if s > 0 and n >= 0}
    pairs, open_steps, lone_ends = [], 0, 0
    for tid in step_tids:
        untimed = [e for e in events if e[1] == tid and e[2] == INVALID_NS]
        open_steps += sum(1 for e in untimed if e[0] > 0 and e[3] >= 0)
        lone_ends += sum(1 for e in untimed if e[0] < 0)
        stack: list[Event] = []
        for ev in sorted((e for e in events if e[1] == tid and e[2] != INVALID_NS),
                         key=lambda e: e[2]):
            if ev[0] > 0:
                stack.append(ev)
            elif stack:
                begin = stack.pop()
                if begin[3] >= 0:
                    pairs.append((tid, begin[2], ev[2] - begin[2], begin[3]))
            else:
                lone_ends += 1
        open_steps += sum(1 for e in stack if e[3] >= 0)
    return sorted(pairs), open_steps, lone_ends


_EVENT = st.tuples(st.sampled_from([1, -1]), st.integers(0, 2),
                   st.integers(0, 8) | st.just(INVALID_NS), st.sampled_from([-1, -1, 3, 4]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_EVENT, max_size=40))
def test_pairing_equals_a_stack_per_thread(raw: list[Event]) -> None:
    events = [(s, t, ts, n if s > 0 else -1) for s, t, ts, n in raw]
    cols: list[Any] = [np.array([e[k] for e in events], dtype) for k, dtype in
                       ((0, np.int8), (1, np.int64), (2, np.int64), (3, np.int32))]
    got = pair_steps(BeginEnd(cols[0], np.zeros(len(events), np.int64), cols[1], cols[2],
                              cols[3]))
    if not events:
        assert got is None
        return
    assert got is not None
    pairs = sorted(zip(got.tid.tolist(), got.ts_ns.tolist(), got.dur_ns.tolist(),
                       got.name.tolist(), strict=True))
    assert (pairs, got.unpaired_begins, got.unpaired_ends) == _stack_pairs(events)
    assert got.other_events == (len(events) - 2 * len(pairs) - got.unpaired_begins
                                - got.unpaired_ends)

"""Ambiguity: traces in which *which event owns which* is not determined by the trace itself.

Definitions and the rule the metrics then follow: ``docs/metrics.md``, "Trace health",
"Ambiguity". Four checks, each a health code with its count and the first offending event
(earliest in time; ties: the table's order, which is the file's order), all ``strict``:

``multi_activity_launch``
    A call of an API that starts exactly one GPU activity (a kernel launch, a memcpy, a memset:
    :func:`traceviz.vocab.launches_one_activity`) whose correlation id several activities
    carry. Counted: the activities beyond the first of each such call. A graph launch
    (``cudaGraphLaunch``) owns every node of its replay and is never flagged.
``launch_on_several_devices``
    A launch call whose activities lie on more than one device (graph launches and the
    ``*MultiDevice`` cooperative launches excepted). Counted: the calls.
``flow_end_before_start``
    A flow's end (``ph`` ``f``) earlier than its start (``ph`` ``s``). Flows are keyed by
    ``(name, id)``; a key's start is its earliest ``s``. Counted: the ``f`` events earlier
    than the start of their key (keys with no ``s`` are not judged).
``nested_steps``
    A ``ProfilerStep#N`` window lying inside another one (``outer.start <= inner.start`` and
    ``inner.end <= outer.end``). Counted: the inner windows.

``shared_correlation`` (several runtime calls carrying one correlation id) is the fifth
ambiguity; it is checked with the ordering contradictions in
:mod:`traceviz.analyze.health.validity`.

Every check is a handful of sorts and comparisons over whole columns.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from traceviz.analyze.health.validity import describe, event_ref, step_markers
from traceviz.analyze.model import EventRef, HealthWarning
from traceviz.analyze.trace.links import Links
from traceviz.int_sets import distinct
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace
from traceviz.trace.decode import INVALID_NS, MISSING_ID
from traceviz.vocab import (
    MULTI_DEVICE_LAUNCH,
    Category,
    LaunchKind,
    base_api_name,
    launches_one_activity,
)

#: The ambiguity codes (all ``strict``: ``--strict`` exits 1 on any of them).
AMBIGUITY_CODES = (
    "multi_activity_launch",
    "launch_on_several_devices",
    "flow_end_before_start",
    "nested_steps",
)


def _warning(code: str, count: int, ref: EventRef, what: str, effect: str,
             noun: tuple[str, str], tail: str = "") -> HealthWarning:
    """``"<what>: <count> <noun>, <effect>; first: <event><tail>"`` (as the data-validity
    ones)."""
    message = f"{what}: {count} {noun[count != 1]}, {effect}; first: {describe(ref)}{tail}"
    return HealthWarning(code, message, count, ref, strict=True)


def _by_name(df: pd.DataFrame, fn: Callable[[str], bool]) -> np.ndarray:
    """``fn(name)`` of each row's name, evaluated once per distinct name (bool)."""
    names = df["name"].cat.categories
    lut = np.fromiter((bool(fn(str(n))) for n in names), bool, len(names))
    codes = df["name"].cat.codes.to_numpy()
    return lut[codes] if len(names) else np.zeros(len(df), bool)


def ambiguity_warnings(trace: Trace, links: Links) -> tuple[HealthWarning, ...]:
    """The ambiguity warnings of ``trace`` (already screened: excluded events are gone)."""
    out = [*_multi_activity(trace, links), *_several_devices(trace, links),
           *_backward_flows(trace), *_nested_steps(trace)]
    return tuple(out)


def _multi_activity(trace: Trace, links: Links) -> list[HealthWarning]:
    rt = trace.runtime
    one = _by_name(rt, launches_one_activity)
    over = one & (links.activity_count > 1)
    if not over.any():
        return []
    lr = links.launch_row
    rows = np.flatnonzero(lr >= 0)
    rows = rows[over[lr[rows]]]  # activities of the flagged calls, in time order
    order = rows[np.argsort(lr[rows], kind="stable")]  # by call, then time
    grouped = lr[order]
    extra = order[1:][grouped[1:] == grouped[:-1]]  # all but the first of each call
    first = int(extra.min())  # gpu rows are in time order
    call = event_ref(trace, "runtime", int(lr[first]))
    return [_warning(
        "multi_activity_launch", len(extra), event_ref(trace, "gpu", first),
        "GPU activity carrying the correlation id of a launch call that starts one activity "
        "(kernel launch, memcpy, memset), which an earlier activity carries too",
        "all attributed to that call and its step", ("activity", "activities"),
        f" (its call: {describe(call)})")]


def _several_devices(trace: Trace, links: Links) -> list[HealthWarning]:
    gpu, rt = trace.gpu, trace.runtime
    lr = links.launch_row
    rows = np.flatnonzero(lr >= 0)
    if len(rows) < 2:
        return []
    calls, dev = lr[rows], gpu["device"].to_numpy()[rows]
    order = np.lexsort((dev, calls))
    calls, dev = calls[order], dev[order]
    split = calls[1:][(calls[1:] == calls[:-1]) & (dev[1:] != dev[:-1])]
    if not len(split):
        return []
    flagged = distinct(split)
    graph = rt["kind"].to_numpy()[flagged] == LaunchKind.GRAPH
    multi = _by_name(rt, lambda n: base_api_name(n) in MULTI_DEVICE_LAUNCH)[flagged]
    flagged = flagged[~graph & ~multi]
    if not len(flagged):
        return []
    return [_warning(
        "launch_on_several_devices", len(flagged), event_ref(trace, "runtime", int(flagged[0])),
        "launch call whose GPU activities lie on several devices (one call runs on one device)",
        "its activities all attributed to it and its step (busy time: the union over devices)",
        ("call", "calls"))]


def _backward_flows(trace: Trace) -> list[HealthWarning]:
    fl = trace.flows
    if not len(fl):
        return []
    cat, ts, fid = fl["cat"].to_numpy(), fl["ts_ns"].to_numpy(), fl["id"].to_numpy()
    rows = np.flatnonzero((fid != MISSING_ID) & (ts != INVALID_NS))  # in time order
    is_end = cat[rows] == Category.FLOW_END
    if is_end.all() or not is_end.any():
        return []
    name = fl["name"].cat.codes.to_numpy()[rows]
    # By key (name, id), then starts before ends; the sort is stable, so each key's first row
    # is its earliest start when it has one.
    order = np.lexsort((is_end, fid[rows], name))
    rows, name, key_id, is_end = rows[order], name[order], fid[rows][order], is_end[order]
    new = np.ones(len(rows), bool)
    new[1:] = (name[1:] != name[:-1]) | (key_id[1:] != key_id[:-1])
    heads = np.flatnonzero(new)
    # A key's start: the time of its first row if that is a start; keys with no start begin
    # at the earliest time, so none of their ends is judged.
    start = np.where(is_end[heads], np.iinfo(np.int64).min, ts[rows[heads]])
    key_start = np.repeat(start, np.diff(np.append(heads, len(rows))))
    back = rows[is_end & (ts[rows] < key_start)]
    if not len(back):
        return []
    row = int(back.min())
    ref = EventRef("flow", str(fl["name"].iat[row]), int(ts[row]), None)
    return [_warning(
        "flow_end_before_start", len(back), ref,
        "flow end (ph 'f') earlier than its start (ph 's', same name and id)",
        "flows are not used by the metrics (launches are linked by correlation)",
        ("flow end", "flow ends"))]


def _nested_steps(trace: Trace) -> list[HealthWarning]:
    cpu = trace.cpu
    rows = np.flatnonzero(step_markers(cpu))
    if len(rows) < 2:
        return []
    win = cpu.iloc[rows][["name", "ts_ns", "end_ns"]]
    keep = ~win.duplicated().to_numpy()  # duplicates removed, as find_steps does
    rows = rows[keep]
    start, end = win["ts_ns"].to_numpy()[keep], win["end_ns"].to_numpy()[keep]
    order = np.lexsort((-end, start))  # by start; of equal starts, the longest first
    e = end[order]
    inner = np.zeros(len(order), bool)
    inner[1:] = e[1:] <= np.maximum.accumulate(e)[:-1]
    nested = rows[order[inner]]
    if not len(nested):
        return []
    return [_warning(
        "nested_steps", len(nested), event_ref(trace, "cpu", int(nested.min())),
        "ProfilerStep window inside another one",
        "a launch call belongs to the window starting last at or before it (of equal starts, "
        "the one ending last) if it has not ended; else to no step", ("window", "windows"))]

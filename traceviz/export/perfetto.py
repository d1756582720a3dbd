"""The Perfetto / chrome://tracing overlay: the original trace plus traceviz's analysis as tracks.

:func:`write_overlay` writes the trace's top-level object unchanged — its ``traceEvents`` array
copied as raw bytes, never decoded into Python objects — and appends overlay events to that
array, in a process named ``traceviz`` whose pid collides with no pid (or GPU device id) of the
trace:

* ``steps``: one slice per step with GPU work, over its GPU period (first to last attributed
  activity, plus the tail up to the next step), named after the step; args: ``busy_pct``
  (100 × GPU busy / period), ``cpu_bound_share``, the period and its six parts in µs,
  kernels, launches;
* ``CUDA graph replays``: one slice per graph launch that replayed activities, from its first
  node's start to its last node's end; args: nodes, kernels, busy / in-graph gap / launch →
  first node µs, correlation, step;
* ``idle gaps: GPU d stream s``: one track per (device, stream) of the activities that end
  gaps, one slice per idle gap named by its class (``host_wait``, ``sync_wait``,
  ``graph_internal``, ``other_idle``, ``queued``: a gap split at its launch's return is two
  slices); args: ``length_us``, ``step``, ``ending_activity``,
  ``tail``.

Slices of one track that would overlap (steps whose GPU work overlaps) go to extra lanes,
``<track> (overlap k)``, so every slice nests properly. Every overlay event, metadata
included, has category :data:`~traceviz.vocab.OVERLAY_CATEGORY`, which the loader skips: the
exported file analyzes exactly like the original. Timestamps are written as exact
microseconds with three decimals (``ns / 1000``), the trace's own time base.

Memory: the decompressed trace bytes once (like the loader), plus one short string per overlay
event while it is written.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgspec
import numpy as np

from traceviz.analyze.model import Analysis
from traceviz.errors import TraceDecodeError
from traceviz.int_sets import distinct
from traceviz.output_guard import refuse_input_as_output
from traceviz.publish import check_output, is_stdout, publishing
from traceviz.trace import Trace
from traceviz.trace.source import read_trace_bytes
from traceviz.trace.top_level import refuse_duplicate_keys
from traceviz.vocab import GAP_CLASS_NAMES, OVERLAY_CATEGORY

#: Name of the overlay process.
PROCESS_NAME = "traceviz"
#: First pid tried for the overlay ("trcv" in ASCII); the next free one is used on collision.
PID_BASE = 0x74726376
#: Suffix of the default output file, next to the trace.
SUFFIX = ".traceviz.json.gz"
#: Overlay events written per ``write`` call.
BATCH = 4096


@dataclass(frozen=True)
class ExportResult:
    """What :func:`write_overlay` wrote."""

    path: Path
    pid: int
    step_slices: int
    gap_slices: int
    replay_slices: int
    tracks: tuple[str, ...]
    bytes_written: int  # uncompressed JSON bytes


def default_output(trace: Path, folder: Path | None = None) -> Path:
    """Where ``traceviz export`` writes without ``-o``: the working directory (``folder``
    when given), not beside the trace, which often lies in a read-only or shared folder:
    ``run/eager.pt.trace.json.gz`` → ``eager.pt.trace.traceviz.json.gz``."""
    stem = trace.name.removesuffix(".gz").removesuffix(".json")
    return (folder or Path()) / (stem + SUFFIX)


def overlay_pid(trace: Trace) -> int:
    """The first pid from :data:`PID_BASE` up that no event or process name of ``trace``
    uses (GPU activities' pid is their device id)."""
    used: set[int] = set(trace.meta.process_names)
    for table, col in ((trace.gpu, "device"), (trace.runtime, "pid"), (trace.cpu, "pid")):
        if len(table):
            used.update(distinct(table[col].to_numpy()).tolist())
    pid = PID_BASE
    while pid in used:
        pid += 1
    return pid


def us(ns: int) -> str:
    """Integer nanoseconds as an exact JSON number of microseconds (``1500`` → ``1.500``)."""
    q, r = divmod(abs(int(ns)), 1000)
    return f"{'-' if ns < 0 else ''}{q}.{r:03d}"


class _Lanes:
    """Tracks (thread ids) of the overlay process; overlapping slices get extra lanes."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self._lanes: dict[str, list[tuple[int, int]]] = {}  # track -> [(tid, end_ns)]

    def open(self, track: str) -> None:
        """Create ``track``'s first lane now, so tracks get ids in display order."""
        if track not in self._lanes:
            tid = len(self.names) + 1
            self.names[tid] = track
            self._lanes[track] = [(tid, -(2**62))]

    def tid(self, track: str, start_ns: int, end_ns: int) -> int:
        """The first lane of ``track`` free at ``start_ns`` (slices are given in start order)."""
        self.open(track)
        lanes = self._lanes[track]
        for k, (tid, busy_until) in enumerate(lanes):
            if busy_until <= start_ns:
                lanes[k] = (tid, end_ns)
                return tid
        tid = len(self.names) + 1
        self.names[tid] = f"{track} (overlap {len(lanes)})"
        lanes.append((tid, end_ns))
        return tid


def _slice(pid: int, tid: int, name: str, start_ns: int, dur_ns: int, args: dict[str, Any]) -> str:
    return (f'{{"ph":"X","cat":"{OVERLAY_CATEGORY}","pid":{pid},"tid":{tid},'
            f'"name":{json.dumps(name)},"ts":{us(start_ns)},"dur":{us(dur_ns)},'
            f'"args":{json.dumps(args, separators=(",", ":"))}}}')


def _meta(pid: int, tid: int, name: str, args: dict[str, Any]) -> str:
    return (f'{{"ph":"M","cat":"{OVERLAY_CATEGORY}","pid":{pid},"tid":{tid},'
            f'"name":"{name}","args":{json.dumps(args, separators=(",", ":"))}}}')


def _share(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


@dataclass
class _Counts:
    steps: int = 0
    gaps: int = 0
    replays: int = 0


def overlay_events(trace: Trace, a: Analysis, pid: int, counts: _Counts,
                   lanes: _Lanes) -> Iterator[str]:
    """The overlay's slices (JSON objects as strings), then its name metadata."""
    g = a.gaps
    gap_order = np.argsort(g.start_ns, kind="stable")
    device = trace.gpu["device"].to_numpy()
    pairs = np.stack([device[g.activity], g.stream], axis=1).astype(np.int64)
    streams, gap_track = np.unique(pairs.reshape(-1, 2), axis=0, return_inverse=True)
    gap_track = gap_track.reshape(-1)
    track_names = [f"idle gaps: GPU {int(d)} stream {int(s)}" for d, s in streams]
    lanes.open("steps")
    if a.graph_replays:
        lanes.open("CUDA graph replays")
    for track in track_names:  # sorted by (device, stream)
        lanes.open(track)

    steps = a.steps
    with_gpu = np.flatnonzero(steps.has_gpu())
    by_start = with_gpu[np.argsort(steps.column("gpu_start_ns")[with_gpu], kind="stable")]
    for s in steps.take(by_start):
        start = int(s.gpu_start_ns or 0)
        args = {
            "busy_pct": round(100 * s.gpu_busy_ns / s.period_ns, 3) if s.period_ns else None,
            "cpu_bound_share": _share(s.cpu_bound_share),
            "period_us": s.period_ns / 1000, "gpu_busy_us": s.gpu_busy_ns / 1000,
            "host_wait_us": s.host_wait_ns / 1000, "sync_wait_us": s.sync_wait_ns / 1000,
            "queued_us": s.queued_ns / 1000, "graph_internal_us": s.graph_internal_ns / 1000,
            "other_idle_us": s.other_idle_ns / 1000,
            "kernels": s.kernels, "launches": s.launches,
        }
        counts.steps += 1
        yield _slice(pid, lanes.tid("steps", start, start + s.period_ns), s.name, start,
                     s.period_ns, args)

    for r in sorted(a.graph_replays, key=lambda r: r.first_start_ns):
        args = {"nodes": r.nodes, "kernels": r.kernels, "busy_us": r.busy_ns / 1000,
                "internal_gap_us": r.internal_gap_ns / 1000,
                "launch_to_first_us": r.launch_to_first_ns / 1000,
                "correlation": r.correlation, "step": r.step}
        counts.replays += 1
        yield _slice(pid, lanes.tid("CUDA graph replays", r.first_start_ns, r.last_end_ns),
                     f"graph replay ({r.nodes} nodes)", r.first_start_ns, r.span_ns, args)

    names = trace.gpu["name"]
    codes, categories = names.cat.codes.to_numpy(), names.cat.categories
    step_names = steps.names()
    for i in gap_order.tolist():
        start, end = int(g.start_ns[i]), int(g.end_ns[i])
        cls = GAP_CLASS_NAMES[int(g.cls[i])]
        args = {"length_us": (end - start) / 1000, "step": step_names[int(g.step[i])],
                "ending_activity": str(categories[codes[int(g.activity[i])]]),
                "tail": bool(g.tail[i])}
        counts.gaps += 1
        track = track_names[gap_track[i]]
        yield _slice(pid, lanes.tid(track, start, end), cls, start, end - start, args)

    yield _meta(pid, 0, "process_name", {"name": PROCESS_NAME})
    yield _meta(pid, 0, "process_labels", {"labels": "traceviz analysis overlay"})
    yield _meta(pid, 0, "process_sort_index", {"sort_index": -1})
    for tid, track in lanes.names.items():
        yield _meta(pid, tid, "thread_name", {"name": track})
        yield _meta(pid, tid, "thread_sort_index", {"sort_index": tid})


def empty_overlay_reason(a: Analysis) -> str:
    """Why :func:`overlay_events` yields no slice for ``a``, in words: each slice marks GPU work
    (a step's GPU period, an idle gap between activities, a graph replay)."""
    if a.cpu_only:
        return (f"a CPU-only trace ({len(a.steps)} steps, no GPU activity or launch) has no "
                "GPU work to mark; its steps show as ProfilerStep spans on the CPU tracks")
    if not len(a.steps):
        return "the trace has no ProfilerStep, so no step to mark or to place a gap in"
    return "no step has GPU work, so there is no GPU period, idle gap or graph replay to mark"


def _events_span(data: bytes, path: Path) -> tuple[list[tuple[bytes, msgspec.Raw]] | None,
                                                   memoryview]:
    """Split the trace JSON into its top-level members and the raw ``traceEvents`` array
    (``None`` members: the legacy form, a bare array)."""
    try:
        if data.lstrip()[:1] == b"[":
            return None, memoryview(data)
        top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except msgspec.DecodeError as exc:
        raise TraceDecodeError(f"{path}: cannot export a trace that is not valid JSON "
                               f"({exc})") from None
    refuse_duplicate_keys(data, top, path)  # a dropped copy would be written without its events
    events = top.get("traceEvents")
    if events is None:
        raise TraceDecodeError(f"{path}: no traceEvents array to add the overlay to")
    members = [(msgspec.json.encode(k), v) for k, v in top.items()]
    return members, memoryview(events)


def _write_array(fh: IO[bytes], events: memoryview, overlay: Iterator[str]) -> int:
    """Write ``events`` (a JSON array's bytes) with ``overlay`` appended; return bytes
    written."""
    tail = bytes(events[-64:])
    close = len(events) - len(tail) + len(tail.rstrip()) - 1  # index of the closing "]"
    if close < 0 or events[close : close + 1] != b"]":
        raise TraceDecodeError("traceEvents is not a JSON array")
    empty = bytes(events[:64]).lstrip()[1:].lstrip().startswith(b"]")
    written = fh.write(events[:close])
    sep = b"" if empty else b","
    batch: list[str] = []
    for ev in overlay:
        batch.append(ev)
        if len(batch) >= BATCH:
            written += fh.write(sep + ",\n".join(batch).encode())
            sep, batch = b",\n", []
    if batch:
        written += fh.write(sep + ",\n".join(batch).encode())
    return written + fh.write(b"]")


def _write_document(fh: IO[bytes], members: list[tuple[bytes, msgspec.Raw]] | None,
                    events: memoryview, overlay: Iterator[str]) -> int:
    """The trace's top-level value with the overlay appended to its events; bytes written."""
    if members is None:
        return _write_array(fh, events, overlay)
    written = fh.write(b"{")
    for k, (key, value) in enumerate(members):
        written += fh.write((b"," if k else b"") + key + b":")
        written += _write_array(fh, events, overlay) if key == b'"traceEvents"' else fh.write(value)
    return written + fh.write(b"}\n")


def _sink(raw: IO[bytes], gzip: bool) -> Any:
    if not gzip:
        return nullcontext(raw)
    from isal import igzip

    return igzip.IGzipFile(fileobj=raw, mode="wb", compresslevel=1)


def write_overlay(trace_path: Path, out: Path, trace: Trace, a: Analysis, *,
                  force: bool = False) -> ExportResult:
    """Write ``trace_path``'s events plus the overlay of ``a`` (its analysis) to ``out``,
    atomically and without replacing what ``--force`` may not (:mod:`traceviz.publish`);
    gzip-compressed when ``out`` ends in ``.gz``; ``-`` writes uncompressed JSON to standard
    output."""
    refuse_input_as_output(out, [trace_path])
    check_output(out, force=force)
    data, _, _ = read_trace_bytes(trace_path)
    members, events = _events_span(data, trace_path)
    pid = overlay_pid(trace)
    counts, lanes = _Counts(), _Lanes()
    overlay = overlay_events(trace, a, pid, counts, lanes)
    if is_stdout(out):
        written = _write_document(sys.stdout.buffer, members, events, overlay)
        sys.stdout.buffer.flush()
    else:
        with publishing(out, force=force) as raw, _sink(raw, out.name.endswith(".gz")) as fh:
            written = _write_document(fh, members, events, overlay)
    return ExportResult(out, pid, counts.steps, counts.gaps, counts.replays,
                        tuple(lanes.names.values()), written)

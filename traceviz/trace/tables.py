"""The loaded trace: metadata plus three columnar tables (pandas, integer-ns times).

Tables (each sorted by ``ts_ns``; ``end_ns = ts_ns + dur_ns``; ``name`` is a categorical whose
categories are shared by all three tables):

``gpu``      GPU activities (``ph == "X"``, cat kernel / gpu_memcpy / gpu_memset):
             ``cat, name, device, stream, ts_ns, dur_ns, end_ns, correlation, external_id``
``runtime``  CUDA runtime / driver calls (cat cuda_runtime / cuda_driver):
             ``name, pid, tid, ts_ns, dur_ns, end_ns, correlation, external_id, kind, is_sync``
             (``kind`` is a :class:`~traceviz.vocab.LaunchKind` by name)
``cpu``      CPU ops, user annotations and Python frames (cat cpu_op / user_annotation /
             python_function, the last only when the trace was recorded with stacks), and the
             ``ProfilerStep#N`` spans given as ``B``/``E`` pairs, as user annotations
             (:mod:`traceviz.trace.begin_end`; ``external_id`` -1):
             ``cat, name, pid, tid, ts_ns, dur_ns, end_ns, external_id``

``comms``    events carrying collective parameters (``record_param_comms`` CPU ops, and NCCL
             kernels of torch >= 2.3): ``cat, pid, tid, ts_ns, end_ns, correlation, external_id,
             collective, in_nelems, out_nelems, group_name, group_size, seq, dtype``
             (missing numbers ``-1``, missing strings ``""``). Few rows: one per collective call.
``flows``    flow events (``ph`` ``s`` / ``f``, any ``cat``: ``ac2g`` launch → GPU activity,
             ``fwdbwd`` forward → backward op): ``cat`` (:class:`~traceviz.vocab.Category`
             ``FLOW_START`` / ``FLOW_END``), ``name``, ``ts_ns``, ``id`` (the flow's ``id``;
             ``-1`` when absent). Not used by the metrics (launches are linked by
             ``args.correlation``); only checked (``traceviz/analyze/health/ambiguity.py``).

Missing ``correlation`` / ``external_id`` are ``-1``. ``ts_ns`` / ``dur_ns`` are the file's
values, never repaired: a negative ``dur_ns`` stays negative (``end_ns < ts_ns``), and NaN,
Infinity, non-numeric or out-of-range values are ``decode.INVALID_NS`` (int64 minimum; such a
row's ``end_ns`` is meaningless). The analysis excludes and counts those rows
(``traceviz/analyze/health/validity.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from traceviz.lazy import pandas as pd

COMM_ARG_COLUMNS = (
    "collective", "in_nelems", "out_nelems", "group_name", "group_size", "seq", "dtype"
)
COMM_COLUMNS = ("cat", "pid", "tid", "ts_ns", "end_ns", "correlation", "external_id",
                *COMM_ARG_COLUMNS)


def comm_table(rows: list[int], args: list[tuple[Any, ...]], cols: dict[str, np.ndarray]
               ) -> pd.DataFrame:
    """The ``comms`` table: ``rows`` index the loader's concatenated event columns ``cols``;
    ``args`` are the matching collective parameters (in :data:`COMM_ARG_COLUMNS` order)."""
    idx = np.asarray(rows, dtype=np.int64)
    data: dict[str, Any] = {
        k: cols[k][idx] for k in ("cat", "pid", "tid", "ts_ns", "correlation", "external_id")
    }
    data["end_ns"] = cols["ts_ns"][idx] + cols["dur_ns"][idx]
    for j, k in enumerate(COMM_ARG_COLUMNS):
        values = [a[j] for a in args]
        data[k] = np.array(values, dtype=object if k in ("collective", "group_name", "dtype")
                           else np.int64)
    df = pd.DataFrame({k: data[k] for k in COMM_COLUMNS})
    return df.sort_values("ts_ns", kind="stable").reset_index(drop=True)


def comms_from_chunks(chunks: Sequence[Any], cols: dict[str, np.ndarray]) -> pd.DataFrame:
    """The ``comms`` table of decoded chunks (each with ``cat`` and ``comm_rows``, see
    :class:`~traceviz.trace.decode.ColumnChunk`) whose kept events were concatenated, in
    order, into ``cols``."""
    offsets = np.cumsum([0] + [len(c.cat) for c in chunks])
    rows = [(int(o) + r[0], r[1:]) for c, o in zip(chunks, offsets, strict=False)
            for r in c.comm_rows]
    return comm_table([r for r, _ in rows], [a for _, a in rows], cols)


FLOW_COLUMNS = ("cat", "name", "ts_ns", "id")


def empty_flow_table() -> pd.DataFrame:
    """A ``flows`` table with no rows."""
    return pd.DataFrame({"cat": np.zeros(0, np.int8),
                         "name": pd.Categorical.from_codes(np.zeros(0, np.int32), categories=[]),
                         "ts_ns": np.zeros(0, np.int64), "id": np.zeros(0, np.int64)})


def empty_comm_table() -> pd.DataFrame:
    """A ``comms`` table with no rows."""
    return comm_table([], [], {k: np.zeros(0, np.int64) for k in
                               ("cat", "pid", "tid", "ts_ns", "dur_ns", "correlation",
                                "external_id")})


@dataclass(frozen=True)
class DeviceInfo:
    """One entry of the trace's ``deviceProperties``."""

    id: int
    name: str
    sms: int | None = None
    total_memory_bytes: int | None = None
    compute_capability: str | None = None


@dataclass(frozen=True)
class UnpairedSteps:
    """``ProfilerStep#N`` spans given as ``B``/``E`` events that did not pair
    (:mod:`traceviz.trace.begin_end`): no step window comes of them."""

    begins: int  # step "B" events that no "E" closes
    ends: int  # "E" events, on a thread with a step "B", that close no "B"
    first_phase: str  # "B" or "E": the earliest of them (by ts) ...
    first_name: str  # ... its name ("" for an "E", whose name is not read) ...
    first_ts_ns: int  # ... and its ts (decode.INVALID_NS: no valid time)


@dataclass(frozen=True)
class TraceMeta:
    """What the file says about itself, and how it was read."""

    path: str
    size_bytes: int  # on disk
    json_bytes: int  # uncompressed
    gzipped: bool
    form: str  # "object" (Kineto) or "array" (legacy top-level list)
    events: int  # all entries of traceEvents
    base_time_ns: int | None  # baseTimeNanoseconds: absolute time of ts == 0
    timestamps: str  # "relative" (to base_time_ns) or "absolute" (epoch µs, pre-2024)
    schema_version: int | None
    devices: tuple[DeviceInfo, ...]
    distributed: dict[str, Any] | None
    metadata: dict[str, Any]  # other top-level keys (trace_id, versions, traceviz stamps, ...)
    category_counts: dict[str, int]  # ``ph == "X"`` events per raw ``cat``
    process_names: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    string_ids: dict[int, str] = field(default_factory=dict)  # string pid/tid -> synthetic id
    trace_span_ns: tuple[int, int] | None = None  # the profiler's own "Trace" span, if present
    notes: tuple[str, ...] = ()  # format quirks seen while loading
    unpaired_steps: UnpairedSteps | None = None  # B/E ProfilerStep events that did not pair

    @property
    def rank(self) -> int | None:
        """``distributedInfo.rank`` when the trace has one."""
        if self.distributed and isinstance(self.distributed.get("rank"), int):
            return int(self.distributed["rank"])
        return None


@dataclass(frozen=True)
class Trace:
    """A loaded trace: :class:`TraceMeta` and the ``gpu`` / ``runtime`` / ``cpu`` / ``comms``
    / ``flows`` tables."""

    meta: TraceMeta
    gpu: pd.DataFrame
    runtime: pd.DataFrame
    cpu: pd.DataFrame
    comms: pd.DataFrame = field(default_factory=empty_comm_table)
    flows: pd.DataFrame = field(default_factory=empty_flow_table, repr=False)

    @property
    def names(self) -> pd.Index:
        """All distinct event names (the shared categories of the ``name`` columns)."""
        return self.gpu["name"].cat.categories

"""The loaded trace: metadata plus three columnar tables (pandas, integer-ns times).

Tables (each sorted by ``ts_ns``; ``end_ns = ts_ns + dur_ns``; ``name`` is a categorical whose
categories are shared by all three tables):

``gpu``      GPU activities (``ph == "X"``, cat kernel / gpu_memcpy / gpu_memset):
             ``cat, name, device, stream, ts_ns, dur_ns, end_ns, correlation, external_id``
``runtime``  CUDA runtime / driver calls (cat cuda_runtime / cuda_driver):
             ``name, pid, tid, ts_ns, dur_ns, end_ns, correlation, external_id, kind, is_sync``
             (``kind`` is a :class:`~traceviz.vocab.LaunchKind` by name)
``cpu``      CPU ops and user annotations (cat cpu_op / user_annotation):
             ``cat, name, pid, tid, ts_ns, dur_ns, end_ns, external_id``

Missing ``correlation`` / ``external_id`` are ``-1``. ``ts_ns`` / ``dur_ns`` are the file's
values, never repaired: a negative ``dur_ns`` stays negative (``end_ns < ts_ns``), and NaN,
Infinity, non-numeric or out-of-range values are ``decode.INVALID_NS`` (int64 minimum; such a
row's ``end_ns`` is meaningless). The analysis excludes and counts those rows
(``traceviz/analyze/validity.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class DeviceInfo:
    """One entry of the trace's ``deviceProperties``."""

    id: int
    name: str
    sms: int | None = None
    total_memory_bytes: int | None = None
    compute_capability: str | None = None


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

    @property
    def rank(self) -> int | None:
        """``distributedInfo.rank`` when the trace has one."""
        if self.distributed and isinstance(self.distributed.get("rank"), int):
            return int(self.distributed["rank"])
        return None


@dataclass(frozen=True)
class Trace:
    """A loaded trace: :class:`TraceMeta` and the ``gpu`` / ``runtime`` / ``cpu`` tables."""

    meta: TraceMeta
    gpu: pd.DataFrame
    runtime: pd.DataFrame
    cpu: pd.DataFrame

    @property
    def names(self) -> pd.Index:
        """All distinct event names (the shared categories of the ``name`` columns)."""
        return self.gpu["name"].cat.categories

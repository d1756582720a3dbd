"""Launched, not yet started: the ``queued`` part of idle gaps, and the launch-latency warning.

Definitions (``docs/metrics.md``, "Idle gaps" and "Informational"):

* A gap ``[start, end)`` that is not ``graph_internal`` and whose ending activity has a launch
  call that **returned** at ``ret`` (call start + duration) with ``end − ret ≥``
  :data:`QUEUED_MIN_NS` is split at ``cut = max(start, ret)``: ``[start, cut)`` keeps the class
  the gap had (``host_wait``, ``sync_wait`` or ``other_idle``; nothing when ``cut == start``),
  ``[cut, end)`` is ``queued``: the host had handed the work over and the GPU did not start it
  (a dependency on another stream or event, a collective, a full launch queue). Gaps ended by
  an activity with no launch call, or whose launch returned less than :data:`QUEUED_MIN_NS`
  before the gap end (normal launch latency), are left as they are.
* **Launch-to-start latency** of a launch call: the start of its earliest GPU activity minus
  the call's start (``graph_replays[].launch_to_first_us`` for a graph launch). When its median
  over the trace's launch calls is at least :data:`LAUNCH_LATENCY_WARN_NS`, the informational
  warning ``launch_latency_high`` names the median and the worst call.

All times are integer nanoseconds.
"""

from __future__ import annotations

import numpy as np

from traceviz.analyze.model import EventRef, HealthWarning
from traceviz.analyze.trace.links import Links
from traceviz.int_sets import distinct
from traceviz.trace import Trace
from traceviz.vocab import GapClass

#: A launch call that returned at least this long before its activity started hands the rest
#: of the gap to ``queued``. Launch-to-start on an idle GPU is ~2–20 µs: in the committed H100
#: runs (``reports/``) every host/sync gap's activity starts at most 5.3 µs after its launch
#: returned (median 1.5–2.3 µs), so 50 µs, 10× that, never cuts ordinary launch latency into a
#: sliver of ``queued``, and is small beside the waits it is for (ms on the HTA A100 trace).
QUEUED_MIN_NS = 50_000

#: ``launch_latency_high`` fires when the median launch-to-start latency is at least this:
#: 50× the ~10–20 µs of an idle GPU, above the 0.34 ms median of the most GPU-bound
#: single-GPU committed run (``reports/gemm_mlp`` eager: the CPU a few kernels ahead), far
#: below the 162 ms of the HTA A100 CUDA-graph trace.
LAUNCH_LATENCY_WARN_NS = 1_000_000


def split_queued(
    launch_return_ns: np.ndarray,
    has_launch: np.ndarray,
    columns: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Split every gap with a queued part (module doc) into its two rows.

    ``columns``: per gap ``start`` and ``end`` (ns), ``cls`` (int8 :class:`GapClass`) and any
    other per-gap columns (step, ending activity, tail flag), copied onto the queued row.
    ``launch_return_ns`` / ``has_launch``: per gap, the end of the ending activity's launch call
    and whether it has one. Returns the columns with the queued rows appended (unsorted)."""
    start, end, cls = columns["start"], columns["end"], columns["cls"]
    queued = has_launch & (cls != GapClass.GRAPH_INTERNAL) & (end - launch_return_ns
                                                               >= QUEUED_MIN_NS)
    cut = np.maximum(start, launch_return_ns)
    whole = queued & (cut == start)
    part = np.flatnonzero(queued & (cut > start))
    out = {k: v.copy() for k, v in columns.items()}
    out["cls"][whole] = GapClass.QUEUED
    out["end"][part] = cut[part]
    for k, v in columns.items():
        extra = v[part]
        if k == "start":
            extra = cut[part]
        elif k == "cls":
            extra = np.full(len(part), GapClass.QUEUED, v.dtype)
        out[k] = np.concatenate([out[k], extra])
    return out


def launch_latency_warning(trace: Trace, links: Links) -> HealthWarning | None:
    """``launch_latency_high`` (module doc), or ``None`` when the median is below the
    threshold or no activity has a launch call."""
    gpu, rt = trace.gpu, trace.runtime
    rows = np.flatnonzero(links.launch_row >= 0)
    if len(rows) == 0:
        return None
    call = links.launch_row[rows]
    first = np.full(len(rt), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first, call, gpu["ts_ns"].to_numpy()[rows])
    calls = distinct(call)
    call_ts = rt["ts_ns"].to_numpy()[calls]
    latency = first[calls] - call_ts
    srt = np.sort(latency, kind="stable")
    median = int(srt[(len(srt) - 1) // 2])  # lower median: an actual latency
    if median < LAUNCH_LATENCY_WARN_NS:
        return None
    worst = int(np.argmax(latency))
    offending = np.flatnonzero(latency >= LAUNCH_LATENCY_WARN_NS)
    earliest = int(calls[offending[np.argmin(call_ts[offending])]])
    worst_call = int(calls[worst])
    mine = rows[call == worst_call]
    activity = int(mine[np.argmin(gpu["ts_ns"].to_numpy()[mine])])
    return HealthWarning(
        "launch_latency_high",
        f"GPU work starts long after its launch call: median launch-to-start latency "
        f"{median / 1e6:,.3f} ms over {len(calls)} launch calls (an idle GPU takes ~0.01 ms), "
        f"worst {int(latency[worst]) / 1e6:,.3f} ms ({rt['name'].iat[worst_call]} at "
        f"ts={call_ts[worst] / 1000:.3f} µs → {gpu['name'].iat[activity]} at "
        f"ts={gpu['ts_ns'].iat[activity] / 1000:.3f} µs); the GPU ran behind the host (a full "
        "launch queue, waits on other streams, events or collectives, or a CPU/GPU clock "
        "offset): idle time after a launch returned counts as `queued`, not host wait",
        len(offending),
        EventRef("runtime", str(rt["name"].iat[earliest]), int(rt["ts_ns"].iat[earliest]),
                 int(rt["dur_ns"].iat[earliest])),
    )

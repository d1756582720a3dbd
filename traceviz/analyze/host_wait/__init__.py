"""Host-wait attribution: which CPU code was running while the GPU waited for the host.

Definitions (``docs/metrics.md``, "Host-wait sources"): each ``host_wait`` / ``sync_wait`` gap
``[gap start, gap end)`` is split at ``min(launch start, gap end)``, where *launch* is the
launch call of the activity ending the gap, on that call's thread:

* the **waiting window** ``[gap start, min(launch start, gap end))``: at each instant the source
  is the chain of CPU events open on the launch thread (``user_annotation``, ``cpu_op``,
  ``python_function``, runtime/driver calls) below the step marker: ``ProfilerStep#N`` and
  every *step ancestor* (an event enclosing a step marker of its thread, such as the harness's
  Python frames around the profiled loop) are excluded; no open event → ``(python / untraced)``;
* the **launch tail** ``[min(launch start, gap end), gap end)``: the launch call had started but
  the activity had not; attributed to the chain open at the launch call's start (normally the
  launch call itself, under its callers).

So every nanosecond of every gap goes to exactly one innermost event (the **self** view) and
to that event and each distinct ancestor name (the **inclusive** view): per gap, per step and
over the trace, self sums to ``host_wait + sync_wait`` exactly, in integer ns.

Vectorised per block of a thread's events (a thread's events cut where none of them is open,
:mod:`.blocks`; one block per thread on one analysis thread): events are nested once
(:mod:`.nesting`: depth = events opened before minus events closed by the start, parent = the
previous event one level up), the block's timeline is cut into elementary intervals with a
constant innermost event, and the windows are intersected with those intervals by
``searchsorted``. Each block also labels its events (:mod:`.labels`), interns its call paths
(:mod:`.trees`), sums its pieces per path and per (step, path) and its inclusive view per
(step, label) (:mod:`.block_attribution`, :mod:`.inclusive`), so the merge (:mod:`.merge`)
works on call paths and labels, never on pieces. Blocks run in forked worker processes, or on
threads where processes cannot fork (:class:`~.plan.HostWaitPlan`); Python loops run over
blocks and distinct labels only, so time and memory are O((events + gaps) log n) at any nesting
depth (no chain is ever expanded per gap).

The stages, in order: :mod:`.events` (the candidate CPU events per thread), :mod:`.blocks`
(cutting them into blocks), :mod:`.block_attribution` (one block's sums), :mod:`.merge`, with
:mod:`.plan` the entry point; :mod:`.result` holds the result types, :mod:`.informative` and
:mod:`.shift` what is read off a result (alone, and against a baseline's). This package
re-exports the public names of its modules.
"""

from traceviz.analyze.host_wait.blocks import (
    BLOCKS_PER_THREAD,
    MAX_BLOCK_EVENTS,
    MIN_BLOCK_EVENTS,
)
from traceviz.analyze.host_wait.grouping import DENSE_SLACK
from traceviz.analyze.host_wait.informative import (
    MIN_PHRASE_SHARE,
    PROFILER_STEP_FRAME,
    informative_sources,
    profiler_step_ns,
)
from traceviz.analyze.host_wait.labels import IN_REGION, INPUT_COPIES, UNTRACED, display_name
from traceviz.analyze.host_wait.plan import HostWaitPlan, plan_host_wait
from traceviz.analyze.host_wait.result import (
    HostWaitSources,
    SourceRow,
    SourceTable,
    nesting_health,
    top_rows,
)
from traceviz.analyze.host_wait.shift import (
    PHRASE_SOURCES,
    TOP_CHANGES,
    HostWaitShift,
    SourceChange,
    host_wait_shift,
)

__all__ = [
    "BLOCKS_PER_THREAD",
    "DENSE_SLACK",
    "INPUT_COPIES",
    "IN_REGION",
    "MAX_BLOCK_EVENTS",
    "MIN_BLOCK_EVENTS",
    "MIN_PHRASE_SHARE",
    "PHRASE_SOURCES",
    "PROFILER_STEP_FRAME",
    "TOP_CHANGES",
    "UNTRACED",
    "HostWaitPlan",
    "HostWaitShift",
    "HostWaitSources",
    "SourceChange",
    "SourceRow",
    "SourceTable",
    "display_name",
    "host_wait_shift",
    "informative_sources",
    "nesting_health",
    "plan_host_wait",
    "profiler_step_ns",
    "top_rows",
]

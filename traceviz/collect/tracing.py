"""The profiled run of one mode: steady-state steps only, exported as a gzipped Kineto trace.

``torch.profiler.schedule(wait, warmup, active)`` keeps compilation and capture out of the trace;
the exported file holds ``ProfilerStep#<wait+warmup> .. #<wait+warmup+active-1>``. The warm-up
steps start CUPTI before the recorded ones. The lean trace, which the metrics and verdicts read,
is its process's first profiler session (CUPTI before CUDA 13.1u1 mislabels graph-launch
correlations in later sessions); a mode's own process may then record its stacked trace, read
for the host-wait sources only, in a second session. The trace is stamped with
``add_metadata_json("traceviz", ...)`` while the profiler records. The profiler exports to a
temporary name in the run directory (:mod:`traceviz.atomic`); the file is read back (complete
gzip stream, valid JSON) and only then renamed to its final name, so a child killed or failing
mid-export leaves no half-written trace. A CUDA run whose trace holds no GPU activity
fails with a hint.
"""

from __future__ import annotations

import gzip
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from traceviz.atomic import atomic_path

WAIT_STEPS = 1
WARMUP_STEPS = 2
ACTIVE_STEPS = 5
#: Unprofiled windows of ``ACTIVE_STEPS`` steps timed just before the profiler starts; the
#: median of their step times is the denominator of the trace's inflation
#: (:class:`ProfiledWindow`).
ADJACENT_WINDOWS = 5
#: What the manifest's ``step_ms`` and ``adjacent_unprofiled_ms`` are. Records without this key
#: (before 2026-11-25) hold the mean of the profiled window and the median of the unprofiled
#: windows' means.
INFLATION_STATISTIC = "median step"

#: Categories that count as GPU activity in a trace.
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})

EMPTY_TRACE_HINT = (
    "the trace holds no GPU activity although the mode ran on CUDA: CUPTI recorded no kernels "
    "(CUDA-graph replays come out empty when CUPTI starts late, e.g. without the schedule's "
    "warm-up steps or after an earlier profiler session in the same process); see the "
    "profiler's warnings in this mode's log"
)


@dataclass(frozen=True)
class ProfiledWindow:
    """The profiled steps' wall times and the unprofiled step times measured next to them.

    ``step_intervals_ms``: the wall time of each of the ``ACTIVE_STEPS`` profiled steps (ms),
    each from the end of the step before (the profiler's step boundary included) to its own
    end. ``adjacent_intervals_ms``: the wall time of each step of ``ADJACENT_WINDOWS`` windows
    of ``ACTIVE_STEPS`` unprofiled steps run just before the profiler starts, in the same
    process and timed the same way (ms). Their medians are ``step_ms`` and
    ``adjacent_unprofiled_ms``, and their ratio the trace's *inflation*: both sides share the
    process's state and the machine's clocks at that moment, so two traces recorded at different
    moments (the lean and the stacked one) are compared on what the profiler costs alone; the
    medians keep one slow step (a profiler buffer flush, a clock change) from deciding it.
    """

    step_intervals_ms: tuple[float, ...]
    adjacent_intervals_ms: tuple[float, ...]

    @property
    def step_ms(self) -> float:
        """Median profiled step time (ms; the mean of the two middle ones for an even count)."""
        return statistics.median(self.step_intervals_ms)

    @property
    def adjacent_unprofiled_ms(self) -> float:
        """Median unprofiled step time next to the profiled window (ms; as :attr:`step_ms`)."""
        return statistics.median(self.adjacent_intervals_ms)

    @property
    def inflation(self) -> float | None:
        """``step_ms / adjacent_unprofiled_ms`` (``None`` when the latter is 0)."""
        if self.adjacent_unprofiled_ms <= 0:
            return None
        return self.step_ms / self.adjacent_unprofiled_ms


@dataclass(frozen=True)
class TraceCheck:
    """What the exported trace holds: ProfilerStep count and GPU activity events."""

    steps: int
    gpu_activities: int

    def profiled(self, trace_name: str, window: ProfiledWindow) -> dict:
        """The manifest's ``profiled`` record: this check, the profiled step time (ms), the
        unprofiled step time measured next to it (ms), their ratio (the inflation), the
        statistic they are (:data:`INFLATION_STATISTIC`) and the step times they come from."""
        return {
            "trace": trace_name,
            "steps": self.steps,
            "gpu_activities": self.gpu_activities,
            "step_ms": window.step_ms,
            "adjacent_unprofiled_ms": window.adjacent_unprofiled_ms,
            "inflation": window.inflation,
            "statistic": INFLATION_STATISTIC,
            "step_intervals_ms": list(window.step_intervals_ms),
            "adjacent_intervals_ms": list(window.adjacent_intervals_ms),
        }


#: Checks already made, by file identity (device, inode, size, mtime in ns): a rename keeps
#: all four, so the check made before a trace is renamed into place is not read again after.
_CHECKED: dict[tuple[int, int, int, int], TraceCheck] = {}


def _identity(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_trace(path: Path) -> TraceCheck:
    """Count ``ProfilerStep#`` annotations and GPU activity events in a gzipped trace.

    Raises ``OSError`` / ``EOFError`` / ``ValueError`` for a truncated or corrupt file.
    """
    key = _identity(path)
    if key in _CHECKED:
        return _CHECKED[key]
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        events = json.load(fh).get("traceEvents", [])
    steps = 0
    gpu = 0
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat = str(ev.get("cat", "")).lower()
        if cat in GPU_CATEGORIES:
            gpu += 1
        elif cat == "user_annotation" and str(ev.get("name", "")).startswith("ProfilerStep#"):
            steps += 1
    _CHECKED[key] = TraceCheck(steps=steps, gpu_activities=gpu)
    return _CHECKED[key]


def _step_intervals_ms(call: Callable[[], Any], steps: int, cuda: bool) -> list[float]:
    """Wall time (ms) of each of ``steps`` back-to-back calls: CUDA events between the calls (no
    synchronisation inside the window) on CUDA, ``perf_counter`` otherwise."""
    import torch

    if cuda:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        events[0].record()
        for event in events[1:]:
            call()
            event.record()
        events[-1].synchronize()
        return [a.elapsed_time(b) for a, b in pairwise(events)]
    stamps = [time.perf_counter_ns()]
    for _ in range(steps):
        call()
        stamps.append(time.perf_counter_ns())
    return [(b - a) / 1e6 for a, b in pairwise(stamps)]


def adjacent_intervals_ms(call: Callable[[], Any], *, cuda: bool) -> list[float]:
    """The step times (ms) of ``ADJACENT_WINDOWS`` windows of ``ACTIVE_STEPS`` unprofiled steps,
    each window timed as the profiled one is."""
    return [ms for _ in range(ADJACENT_WINDOWS)
            for ms in _step_intervals_ms(call, ACTIVE_STEPS, cuda)]


def profile_steps(
    call: Callable[[], Any],
    trace_path: Path,
    *,
    cuda: bool,
    metadata: dict[str, Any],
    with_stack: bool = False,
) -> ProfiledWindow:
    """Trace ``ACTIVE_STEPS`` steady-state steps of ``call`` to ``trace_path`` (gzip).

    The trace appears at ``trace_path`` only complete and checked (:func:`check_trace`).

    Returns each profiled step's wall time (a CUDA event after each step on CUDA, so no
    synchronisation lands inside a traced step) with the unprofiled step times measured just
    before the profiler starts (:func:`adjacent_intervals_ms`), in ms.
    ``with_stack`` records Python stacks (``python_function`` events), which name the code the
    host ran while the GPU waited.
    """
    import torch
    from torch.profiler import ProfilerAction, ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    trace_path.parent.mkdir(parents=True, exist_ok=True)
    adjacent = adjacent_intervals_ms(call, cuda=cuda)
    first_active = WAIT_STEPS + WARMUP_STEPS
    total = first_active + ACTIVE_STEPS
    events = ([torch.cuda.Event(enable_timing=True) for _ in range(ACTIVE_STEPS + 1)]
              if cuda else [])
    stamps: list[int] = []
    stamped = False
    with atomic_path(trace_path) as partial:
        with profile(
            activities=activities,
            schedule=schedule(wait=WAIT_STEPS, warmup=WARMUP_STEPS, active=ACTIVE_STEPS, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(str(partial)),
            record_shapes=False,
            with_stack=with_stack,
        ) as prof:
            for i in range(total):
                if i == first_active:
                    if cuda:
                        events[0].record()
                    else:
                        stamps.append(time.perf_counter_ns())
                if not stamped and prof.current_action in (
                    ProfilerAction.RECORD,
                    ProfilerAction.RECORD_AND_SAVE,
                ):
                    prof.add_metadata_json("traceviz", json.dumps(metadata))
                    stamped = True
                call()
                if i >= first_active:
                    if cuda:
                        events[i - first_active + 1].record()
                    else:
                        stamps.append(time.perf_counter_ns())
                prof.step()
        check_trace(partial)  # complete and readable before it takes its final name
    if cuda:
        events[-1].synchronize()
        steps = [a.elapsed_time(b) for a, b in pairwise(events)]
    else:
        steps = [(b - a) / 1e6 for a, b in pairwise(stamps)]
    return ProfiledWindow(step_intervals_ms=tuple(steps), adjacent_intervals_ms=tuple(adjacent))

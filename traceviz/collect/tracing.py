"""The profiled run of one mode: steady-state steps only, exported as a gzipped Kineto trace.

``torch.profiler.schedule(wait, warmup, active)`` keeps compilation and capture out of the trace;
the exported file holds ``ProfilerStep#<wait+warmup> .. #<wait+warmup+active-1>``. The warm-up
steps start CUPTI before the recorded ones, and each child runs exactly one profiler session
(CUPTI before CUDA 13.1u1 mislabels graph-launch correlations in later sessions). The trace is
stamped with ``add_metadata_json("traceviz", ...)`` while the profiler records. The profiler
exports to a temporary name in the run directory (:mod:`traceviz.atomic`); the file is read back
(complete gzip stream, valid JSON) and only then renamed to its final name, so a child killed or
failing mid-export leaves no half-written trace. A CUDA run whose trace holds no GPU activity
fails with a hint.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceviz.atomic import atomic_path

WAIT_STEPS = 1
WARMUP_STEPS = 2
ACTIVE_STEPS = 5
#: Unprofiled windows of ``ACTIVE_STEPS`` steps timed just before the profiler starts; their
#: median is the denominator of the trace's inflation (:class:`ProfiledWindow`).
ADJACENT_WINDOWS = 5

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
    """The profiled window's step time and the unprofiled step time measured next to it.

    ``step_ms``: mean wall time per step of the ``ACTIVE_STEPS`` profiled steps (ms).
    ``adjacent_unprofiled_ms``: median, over ``ADJACENT_WINDOWS`` windows of ``ACTIVE_STEPS``
    steps run just before the profiler starts, in the same process and timed the same way, of
    the wall time per step (ms). Their ratio is the trace's *inflation*: both sides share the
    process's state and the machine's clocks at that moment, so two traces recorded in different
    processes (the lean and the stacked one) are compared on what the profiler costs alone.
    """

    step_ms: float
    adjacent_unprofiled_ms: float

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
        unprofiled step time measured next to it (ms) and their ratio, the inflation."""
        return {
            "trace": trace_name,
            "steps": self.steps,
            "gpu_activities": self.gpu_activities,
            "step_ms": window.step_ms,
            "adjacent_unprofiled_ms": window.adjacent_unprofiled_ms,
            "inflation": window.inflation,
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


def _window_ms(call: Callable[[], Any], steps: int, cuda: bool) -> float:
    """Wall time per step (ms) of ``steps`` back-to-back calls: CUDA events around the window
    (no synchronisation inside it) on CUDA, ``perf_counter`` otherwise."""
    import torch

    if cuda:
        begin_ev = torch.cuda.Event(enable_timing=True)
        end_ev = torch.cuda.Event(enable_timing=True)
        begin_ev.record()
        for _ in range(steps):
            call()
        end_ev.record()
        end_ev.synchronize()
        return begin_ev.elapsed_time(end_ev) / steps
    begin_ns = time.perf_counter_ns()
    for _ in range(steps):
        call()
    return (time.perf_counter_ns() - begin_ns) / 1e6 / steps


def adjacent_unprofiled_ms(call: Callable[[], Any], *, cuda: bool) -> float:
    """Median over ``ADJACENT_WINDOWS`` windows of ``ACTIVE_STEPS`` unprofiled steps of the wall
    time per step (ms), each window timed as the profiled one is."""
    windows = sorted(_window_ms(call, ACTIVE_STEPS, cuda) for _ in range(ADJACENT_WINDOWS))
    return windows[len(windows) // 2]


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

    Returns the profiled window's mean wall time per step (CUDA events around the active window
    on CUDA, so no synchronisation lands inside a traced step) with the unprofiled step time
    measured just before the profiler starts (:func:`adjacent_unprofiled_ms`), in ms.
    ``with_stack`` records Python stacks (``python_function`` events), which name the code the
    host ran while the GPU waited.
    """
    import torch
    from torch.profiler import ProfilerAction, ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    trace_path.parent.mkdir(parents=True, exist_ok=True)
    adjacent_ms = adjacent_unprofiled_ms(call, cuda=cuda)
    first_active = WAIT_STEPS + WARMUP_STEPS
    total = first_active + ACTIVE_STEPS
    if cuda:
        begin_ev = torch.cuda.Event(enable_timing=True)
        end_ev = torch.cuda.Event(enable_timing=True)
    stamped = False
    begin_ns = end_ns = 0
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
                        begin_ev.record()
                    begin_ns = time.perf_counter_ns()
                if not stamped and prof.current_action in (
                    ProfilerAction.RECORD,
                    ProfilerAction.RECORD_AND_SAVE,
                ):
                    prof.add_metadata_json("traceviz", json.dumps(metadata))
                    stamped = True
                call()
                if i == total - 1:
                    if cuda:
                        end_ev.record()
                    end_ns = time.perf_counter_ns()
                prof.step()
        check_trace(partial)  # complete and readable before it takes its final name
    if cuda:
        end_ev.synchronize()
        step_ms = begin_ev.elapsed_time(end_ev) / ACTIVE_STEPS
    else:
        step_ms = (end_ns - begin_ns) / 1e6 / ACTIVE_STEPS
    return ProfiledWindow(step_ms=step_ms, adjacent_unprofiled_ms=adjacent_ms)

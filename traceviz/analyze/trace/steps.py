"""Step windows (``ProfilerStep#N`` CPU annotations) and attribution of work to steps.

A GPU activity belongs to the step whose CPU window ``[ts, ts + dur]`` contains the *start of
its launch call*. A call starting exactly where one window ends and the next begins belongs to
the later step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceviz.trace import Trace
from traceviz.vocab import STEP_MARKER, WHOLE_TRACE_STEP, Category

_INT64_MAX = int(np.iinfo(np.int64).max)


@dataclass(frozen=True)
class StepWindows:
    """CPU windows of the steps, in time order."""

    names: tuple[str, ...]
    numbers: np.ndarray  # int64 N of "ProfilerStep#N"; -1: none (no marker, or N beyond int64)
    start_ns: np.ndarray
    end_ns: np.ndarray
    synthetic: bool  # True: no markers, one step spanning every event
    overlapping: int  # windows that start before the previous one ended

    def __len__(self) -> int:
        return len(self.names)

    def locate(self, t_ns: np.ndarray) -> np.ndarray:
        """Index of the window containing each time (-1 when none does)."""
        if len(self.names) == 0 or len(t_ns) == 0:
            return np.full(len(t_ns), -1, np.int32)
        idx = np.searchsorted(self.start_ns, t_ns, side="right") - 1
        idx_c = np.maximum(idx, 0)
        inside = (idx >= 0) & (t_ns <= self.end_ns[idx_c])
        return np.where(inside, idx, -1).astype(np.int32)


def step_numbers(names: tuple[str, ...]) -> np.ndarray:
    """int64 per name: N of ``ProfilerStep#N``; -1 where the name is no marker or N does not
    fit int64 (a step all the same, without a number)."""
    out = np.full(len(names), -1, np.int64)
    for i, name in enumerate(names):
        m = STEP_MARKER.match(name)
        digits = m.group(1).lstrip("0") or "0" if m is not None else ""
        if digits and len(digits) <= 19 and int(digits) <= _INT64_MAX:
            out[i] = int(digits)
    return out


def find_steps(trace: Trace) -> StepWindows:
    """``ProfilerStep#N`` user annotations (duplicates removed), or one synthetic step."""
    cpu = trace.cpu
    cats = cpu["name"].cat.categories
    step_codes = [i for i, n in enumerate(cats) if STEP_MARKER.match(n)]
    mask = (cpu["cat"].to_numpy() == Category.USER_ANNOTATION) & np.isin(
        cpu["name"].cat.codes.to_numpy(), step_codes
    )
    rows = cpu.loc[mask, ["name", "ts_ns", "end_ns"]].drop_duplicates()
    if len(rows) == 0:
        ops = cpu.loc[cpu["cat"].to_numpy() != Category.PYTHON_FUNCTION]  # frames: not spanned
        starts = [t["ts_ns"].min() for t in (trace.gpu, trace.runtime, ops) if len(t)]
        ends = [t["end_ns"].max() for t in (trace.gpu, trace.runtime, ops) if len(t)]
        if not starts:
            z = np.zeros(0, np.int64)
            return StepWindows((), z, z, z, True, 0)
        return StepWindows(
            (WHOLE_TRACE_STEP,),
            np.full(1, -1, np.int64),
            np.array([min(starts)], np.int64),
            np.array([max(ends)], np.int64),
            True,
            0,
        )
    rows = rows.sort_values(["ts_ns", "end_ns"], kind="stable")
    names = tuple(str(n) for n in rows["name"])
    numbers = step_numbers(names)
    start = rows["ts_ns"].to_numpy(np.int64)
    end = rows["end_ns"].to_numpy(np.int64)
    overlapping = int(np.count_nonzero(start[1:] < end[:-1]))
    return StepWindows(names, numbers, start, end, False, overlapping)

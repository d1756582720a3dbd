"""One mode's profiled step, run phase by phase in one process: what both mode children share.

:mod:`traceviz.collect.child` runs a mode in a process of its own and
:mod:`traceviz.collect.rank_child` runs it on one rank of ``profile --nproc``. Each loads its
workload, builds its own step (the workload's step function in the mode, or a training step of a
``DistributedDataParallel`` model) and checks it against its own reference; :class:`StepRun`
holds the rest, in this order:

- the **phases** announced to the parent (``@@traceviz-phase <name>`` lines on stdout,
  :func:`phase`), the one running kept for a failure's reason (:meth:`StepRun.fail`);
- the **first call** (``first_call_s``: seconds from the start of the mode's one-off work,
  compile or capture included, to the end of its first step, the device synchronized);
- the **checking** steps (``check_steps`` calls in all, the first call included);
- the **timing** (:func:`traceviz.collect.timing.measure`) and, on CUDA, the peak memory
  allocated (``peak_mem_bytes``);
- the **paired timing** against the eager step built beside it (:mod:`traceviz.collect.paired`),
  for every mode but eager while ``timing_budget_s`` > 0;
- the **lean trace** (:func:`traceviz.collect.tracing.profile_steps`, no Python stacks) and the
  mode's outcome (:func:`record_outcome`).

A mode's own process may then record the stacked trace (:data:`STACK_PHASE`); a rank does not.

The ranks of one distributed mode run these phases together (:attr:`StepRun.lockstep`): their
timed repeats and paired blocks are of one size, the largest any rank wants, with a barrier
before each, and a barrier comes before and after the trace.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from traceviz.atomic import write_text_atomic
from traceviz.collect.mode_names import COMPILE_MODES, first_call_phase

if TYPE_CHECKING:
    from traceviz.collect.paired import Lockstep
    from traceviz.collect.timing import StepClock
    from traceviz.collect.tracing import ProfiledWindow

PHASE_PREFIX = "@@traceviz-phase "
#: The phase a mode's child records its stacked trace in, after all it measures
#: (:meth:`traceviz.collect.child.ModeRun.trace_stacked`).
STACK_PHASE = "stacks"
#: The mode every other mode is timed against, in the same process (paired timing).
BASELINE_MODE = "eager"
#: Mode statuses whose step ran to the end.
RAN = ("ok", "mismatch")

T = TypeVar("T")


def phase(name: str) -> None:
    """Tell the parent which phase the child is in."""
    print(PHASE_PREFIX + name, flush=True)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a child's record (indented JSON, ``str`` for what JSON cannot hold), atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, default=str))


def _one_line(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def failure_text(exc: BaseException) -> str:
    """The error, led by its first cause when it was raised while handling another one.

    A failed CUDA-graph capture, for one, raises the real error ("operation not permitted when
    stream is capturing") and then a second one while ending the capture; the first is the news.
    """
    chain = [exc]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(nxt)
    if len(chain) == 1:
        return _one_line(exc)
    return f"{_one_line(chain[-1])} (then: {_one_line(exc)})"


def record_outcome(result: dict[str, Any], mode: str, cuda: bool, trace_path: Path,
                   window: ProfiledWindow, mismatch: str | None) -> None:
    """A traced mode's last fields in its child's ``result``: the lean trace's ``profiled``
    record (what :func:`~traceviz.collect.tracing.check_trace` found, with ``window``'s step
    times and inflation), Inductor's counters for a compiled ``mode``, and the status:
    ``failed`` for a CUDA trace with no GPU activity, ``mismatch`` with the reason ``mismatch``
    when the outputs differed, else ``ok``."""
    from traceviz.collect import diagnostics, tracing

    check = tracing.check_trace(trace_path)
    result["profiled"] = check.profiled(trace_path.name, window)
    if mode in COMPILE_MODES:
        result["compile"] = diagnostics.compile_counters()
    if cuda and check.gpu_activities == 0:
        result.update(status="failed", reason=tracing.EMPTY_TRACE_HINT)
    elif mismatch is not None:
        result.update(status="mismatch", reason=mismatch)
    else:
        result.update(status="ok", reason=None)


class StepRun:
    """One mode's run of its step in this process, filled phase by phase into :attr:`result`.

    ``settings``: the child's JSON settings (:meth:`traceviz.collect.runner.RunSettings.
    child_settings`). ``identity``: fields every record of this run starts with after
    ``status`` (``failed``) and ``reason`` (``None``), such as a rank's number and host.
    """

    #: The ranks this run times and traces with (``None``: a process of its own).
    lockstep: Lockstep | None = None
    #: The least seconds a timing warm-up lasts (``None``: :func:`~traceviz.collect.timing.
    #: warm_min_s`).
    min_warm_s: float | None = None

    def __init__(self, workload_path: str, mode: str, device: str, settings: dict[str, Any],
                 **identity: Any) -> None:
        self.workload_path = workload_path
        self.mode = mode
        self.cuda = device == "cuda"
        self.settings = settings
        self.result: dict[str, Any] = {"status": "failed", "reason": None, **identity}
        self.current_phase = "start"

    def announce(self, name: str) -> None:
        """Tell the parent the phase ``name`` is running (:func:`phase`)."""
        phase(name)

    def enter(self, name: str) -> None:
        """Record and announce the phase now running."""
        self.current_phase = name
        self.announce(name)

    def sync(self) -> None:
        """Wait for the device."""
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    def fail(self, exc: BaseException) -> None:
        """Mark :attr:`result` ``failed``, the reason naming the phase and the error
        (:func:`failure_text`), and print the traceback to the mode's log."""
        self.result.update(status="failed",
                           reason=f"during {self.current_phase}: {failure_text(exc)}")
        traceback.print_exc()

    def first_call(self, call: Callable[[], T]) -> T:
        """Run ``call`` (the mode's one-off work ending in its first step) under the mode's
        first-call phase, record its seconds to the synchronized end (``first_call_s``) and
        return what it returned."""
        self.enter(first_call_phase(self.mode))
        begin = time.perf_counter()
        out = call()
        self.sync()
        self.result["first_call_s"] = time.perf_counter() - begin
        return out

    def check_steps(self, call: Callable[[], T], first: T) -> T:
        """The checking phase's steps: ``call`` until the first call's output ``first`` and
        these make ``check_steps`` steps; return the last step's output with the device
        synchronized."""
        self.enter("checking")
        out = first
        for _ in range(int(self.settings["check_steps"]) - 1):
            out = call()
        self.sync()
        return out

    def measure_and_trace(self, call: Callable[[], Any], *,
                          baseline: Callable[[], Callable[[], Any]], trace_path: Path,
                          metadata: dict[str, Any], mismatch: str | None) -> None:
        """Time the step ``call``, time it paired with ``baseline()`` (the eager step, built
        when paired timing starts), trace it lean to ``trace_path`` stamped with ``metadata``
        and record the outcome (``mismatch``: why the outputs differ, ``None`` when they
        agree)."""
        from traceviz.collect import tracing

        clock = self._time(call)
        if self.mode != BASELINE_MODE and float(self.settings.get("timing_budget_s", 0)) > 0:
            self.enter("paired timing")
            self.result["paired"] = self._paired(baseline, call, clock)
        self.enter("tracing")
        self._wait_for_ranks()
        window = tracing.profile_steps(call, trace_path, cuda=self.cuda, with_stack=False,
                                       metadata=metadata)
        self._wait_for_ranks()
        record_outcome(self.result, self.mode, self.cuda, trace_path, window, mismatch)

    def _wait_for_ranks(self) -> None:
        if self.lockstep is not None:
            self.lockstep.barrier()

    def _time(self, call: Callable[[], Any]) -> StepClock:
        """The timing phase: ``timing`` (and ``peak_mem_bytes`` on CUDA) in :attr:`result`."""
        from traceviz.collect import timing

        s = self.settings
        self.enter("timing")
        clock = timing.StepClock(self.cuda)
        summary = timing.measure(
            call, clock, warmup=int(s["warmup"]), repeats=int(s["repeats"]),
            min_repeat_ms=float(s["min_repeat_ms"]), max_iters=int(s["max_iters"]),
            min_warm_s=self.min_warm_s, lockstep=self.lockstep,
        )
        self.result["timing"] = summary.to_dict()
        if self.cuda:
            import torch

            self.sync()
            self.result["peak_mem_bytes"] = int(torch.cuda.max_memory_allocated())
        return clock

    def _paired(self, baseline: Callable[[], Callable[[], Any]], call: Callable[[], Any],
                clock: StepClock) -> dict[str, Any]:
        """The manifest's ``paired`` block: ``baseline()`` timed against ``call``.

        A process of its own records a baseline that cannot be built or run as
        ``{"baseline", "error"}`` (the mode's own numbers still stand); a rank raises, since
        its peers wait for it in lockstep.
        """
        from traceviz.collect.paired import PairedSettings, measure_paired

        s = self.settings
        settings = PairedSettings(
            budget_s=float(s["timing_budget_s"]), min_repeat_ms=float(s["min_repeat_ms"]),
            max_iters=int(s["max_iters"]), warmup=int(s["warmup"]),
        )
        try:
            return measure_paired(baseline(), call, clock, settings,
                                  baseline_name=BASELINE_MODE, lockstep=self.lockstep)
        except Exception as exc:
            if self.lockstep is not None:
                raise
            traceback.print_exc()
            return {"baseline": BASELINE_MODE, "error": failure_text(exc)}

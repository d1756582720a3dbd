"""One mode of one workload, in its own process: ``python -m traceviz.collect.child``.

``probe WORKLOAD OUT_JSON`` loads and validates the workload and writes the environment (versions,
GPU, what is available). ``run WORKLOAD MODE TRACE OUT_JSON --device D --settings JSON`` runs one
mode: eager reference, first call (compile / capture, ``first_call_s``), correctness, timing,
peak memory, paired timing against the eager step (:mod:`traceviz.collect.paired`), profiled
run, diagnostics; it writes the mode's manifest entry to OUT_JSON, also
when a phase raised (then ``status`` is ``failed`` and ``reason`` says where and why). Its
profiled run is the **lean** trace: no Python stacks, no shapes, so the profiler's own cost per
op stays as small as it can; the timeline metrics and the verdicts read it.
``stack WORKLOAD MODE TRACE OUT_JSON --device D --settings JSON`` records the **stacked** trace
(Python stacks on) in a process of its own, since CUPTI allows one profiler session per
process; only the host-wait sources are read from it. ``against NEW MODE OUT --old OLD
--device D --settings JSON`` times two versions of the step against each other
(:mod:`traceviz.collect.against`). Progress goes to stdout as ``@@traceviz-phase <name>``
lines for the parent's display.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traceviz.atomic import write_text_atomic
from traceviz.collect.mode_names import COMPILE_MODES, first_call_phase
from traceviz.collect.workload import WorkloadError, load_workload

if TYPE_CHECKING:
    from traceviz.collect.tracing import ProfiledWindow

PHASE_PREFIX = "@@traceviz-phase "
#: Environment variables that change what torch.compile does, recorded when set.
RECORDED_ENV = (
    "TORCH_LOGS",
    "TORCHINDUCTOR_CACHE_DIR",
    "TORCHINDUCTOR_COMPILE_THREADS",
    "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS",
    "CUDA_VISIBLE_DEVICES",
)
#: The mode every other mode is timed against, in the same process (paired timing).
BASELINE_MODE = "eager"
#: Exit code of a probe whose workload file is invalid.
EXIT_BAD_WORKLOAD = 2


def phase(name: str) -> None:
    """Tell the parent which phase the child is in."""
    print(PHASE_PREFIX + name, flush=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, default=str))


def _driver_version() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else None


def environment() -> dict[str, Any]:
    """Versions, GPU and host of this process (the manifest's ``environment``)."""
    import importlib.util

    import torch

    triton_version = None
    if importlib.util.find_spec("triton") is not None:
        try:
            import triton

            triton_version = triton.__version__
        except Exception as exc:  # a broken triton install is an environment fact
            triton_version = f"unimportable: {type(exc).__name__}: {exc}"
    cuda = torch.cuda.is_available()
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton_version,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "cuda_available": cuda,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "driver": _driver_version() if cuda else None,
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "env": {k: os.environ[k] for k in RECORDED_ENV if k in os.environ},
    }


def meta_signature(workload: Any) -> list[str] | None:
    """The inputs' ``dtype[shape]`` signature, made on the ``meta`` device (no memory, no
    compute); ``None`` when ``make_inputs`` cannot run there."""
    import torch

    from traceviz.collect.against import input_signature

    try:
        torch.manual_seed(0)
        made = workload.make_inputs(torch.device("meta"))
        made = tuple(made) if isinstance(made, (tuple, list)) else (made,)
        if not all(isinstance(t, torch.Tensor) for t in made):
            return None
        return input_signature(made)
    except Exception:  # an input the meta device cannot make: the mode's own check applies
        return None


def probe(workload_path: str, out: Path) -> int:
    """Validate the workload and write ``{workload, environment, inputs}`` to ``out``
    (``inputs``: :func:`meta_signature`)."""
    try:
        workload = load_workload(workload_path)
    except WorkloadError as exc:
        _write_json(out, {"error": str(exc)})
        return EXIT_BAD_WORKLOAD
    env = environment()
    _write_json(
        out,
        {
            "workload": {
                "path": str(workload.path),
                "name": workload.name,
                "description": workload.description,
                "has_triton_step": workload.triton_step is not None,
            },
            "environment": env,
            "triton_importable": env["triton"] is not None
            and not str(env["triton"]).startswith("unimportable"),
            "inputs": meta_signature(workload),
        },
    )
    return 0


class ModeRun:
    """State of one mode's run, filled phase by phase into :attr:`result`."""

    def __init__(self, workload_path: str, mode: str, device: str, settings: dict[str, Any]):
        self.workload_path = workload_path
        self.mode = mode
        self.device = device
        self.cuda = device == "cuda"
        self.settings = settings
        self.result: dict[str, Any] = {"status": "failed", "reason": None}
        self.current_phase = "start"

    def enter(self, name: str) -> None:
        """Record and announce the phase now running."""
        self.current_phase = name
        phase(name)

    def sync(self) -> None:
        """Wait for the device."""
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    def _fresh_inputs(self, workload: Any) -> tuple[Any, ...]:
        import torch

        torch.manual_seed(0)
        inputs = workload.make_inputs(torch.device(self.device))
        inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
        if not all(isinstance(t, torch.Tensor) for t in inputs):
            raise TypeError("make_inputs() must return a tuple of tensors")
        if any(i >= len(inputs) for i in workload.static_inputs):
            raise ValueError(f"STATIC_INPUTS {workload.static_inputs} out of range")
        return inputs

    def _reference(self, workload: Any, steps: int) -> tuple[Any, ...]:
        from traceviz.collect.correctness import to_reference_dtype
        from traceviz.collect.modes import as_outputs

        inputs = tuple(
            to_reference_dtype(t, workload.float64_reference)
            for t in self._fresh_inputs(workload)
        )
        for _ in range(steps):
            outputs = as_outputs(workload.step(*inputs))
        self.sync()
        return tuple(t.detach().clone() for t in outputs)

    def _paired(self, workload: Any, mode_call: Any, clock: Any) -> dict[str, Any]:
        """Time the baseline step interleaved with this mode (:mod:`traceviz.collect.paired`).

        The baseline runs on its own fresh inputs. A baseline that cannot run gives
        ``{"error": …}`` rather than failing the mode.
        """
        from traceviz.collect.modes import build_step
        from traceviz.collect.paired import PairedSettings, measure_paired

        s = self.settings
        settings = PairedSettings(
            budget_s=float(s["timing_budget_s"]),
            min_repeat_ms=float(s["min_repeat_ms"]),
            max_iters=int(s["max_iters"]),
            warmup=int(s["warmup"]),
        )
        try:
            base_inputs = self._fresh_inputs(workload)
            base_step = build_step(BASELINE_MODE, workload, base_inputs)
            return measure_paired(
                lambda: base_step(*base_inputs), mode_call, clock, settings,
                baseline_name=BASELINE_MODE,
            )
        except Exception as exc:  # the mode's own numbers still stand
            traceback.print_exc()
            return {"baseline": BASELINE_MODE, "error": failure_text(exc)}

    def _trace_metadata(self, workload: Any, kind: str) -> dict[str, Any]:
        return {"workload": workload.name, "workload_path": str(workload.path),
                "mode": self.mode, "trace_kind": kind, **self.settings["environment"]}

    def run_stacked(self, trace_path: Path) -> None:
        """The stacked trace: load, build, warm up, profile with Python stacks.

        :attr:`result` becomes the manifest's ``stack_profiled`` record; its inflation is over
        the unprofiled step time measured in this process just before the profiler starts.
        """
        from traceviz.collect import timing, tracing
        from traceviz.collect.modes import build_step

        s = self.settings
        self.enter("loading")
        workload = load_workload(self.workload_path)
        inputs = self._fresh_inputs(workload)
        step = build_step(self.mode, workload, inputs)
        self.enter("warming up")
        timing.warm(lambda: step(*inputs), max(int(s["warmup"]), 1), self.sync,
                    timing.warm_min_s(self.cuda))
        self.enter("tracing with stacks")
        window = tracing.profile_steps(
            lambda: step(*inputs), trace_path, cuda=self.cuda, with_stack=True,
            metadata=self._trace_metadata(workload, "stacked"),
        )
        record = tracing.check_trace(trace_path).profiled(trace_path.name, window)
        self.result = {"status": "ok", "reason": None, **record}

    def run(self, trace_path: Path) -> None:
        """All phases; exceptions propagate with :attr:`result` filled so far."""
        import torch

        from traceviz.collect import timing, tracing
        from traceviz.collect.correctness import compare
        from traceviz.collect.modes import build_step

        s = self.settings
        self.enter("loading")
        workload = load_workload(self.workload_path)
        self.enter("reference")
        check_steps = int(s["check_steps"])
        reference = self._reference(workload, check_steps)
        if self.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        inputs = self._fresh_inputs(workload)
        step = build_step(self.mode, workload, inputs)
        self.enter(first_call_phase(self.mode))
        begin = time.perf_counter()
        outputs = step(*inputs)
        self.sync()
        self.result["first_call_s"] = time.perf_counter() - begin
        self.enter("checking")
        for _ in range(check_steps - 1):
            outputs = step(*inputs)
        outputs = tuple(t.detach().clone() for t in outputs)
        self.sync()
        correct = compare(outputs, reference, workload.rtol, workload.atol)
        self.result["correctness"] = correct.to_dict()
        del outputs, reference

        self.enter("timing")
        clock = timing.StepClock(self.cuda)
        summary = timing.measure(
            lambda: step(*inputs), clock,
            warmup=int(s["warmup"]), repeats=int(s["repeats"]),
            min_repeat_ms=float(s["min_repeat_ms"]), max_iters=int(s["max_iters"]),
        )
        self.result["timing"] = summary.to_dict()
        if self.cuda:
            self.sync()
            self.result["peak_mem_bytes"] = int(torch.cuda.max_memory_allocated())
        if self.mode != BASELINE_MODE and float(s.get("timing_budget_s", 0)) > 0:
            self.enter("paired timing")
            self.result["paired"] = self._paired(workload, lambda: step(*inputs), clock)

        self.enter("tracing")
        window = tracing.profile_steps(
            lambda: step(*inputs), trace_path, cuda=self.cuda, with_stack=False,
            metadata=self._trace_metadata(workload, "lean"),
        )
        record_outcome(self.result, self.mode, self.cuda, trace_path, window,
                       None if correct.ok
                       else f"outputs differ from the eager reference: {correct.detail}")


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


def against(args: argparse.Namespace) -> int:
    """Time two versions of the step (:mod:`traceviz.collect.against`) and write the record,
    whatever happens inside."""
    from traceviz.collect.against import run_against

    settings = json.loads(args.settings)
    current = {"phase": "start"}

    def enter(name: str) -> None:
        current["phase"] = name
        phase(name)

    try:
        result = run_against(args.workload, args.old, args.mode, args.device, settings, enter)
    except BaseException as exc:
        result = {"status": "failed", "reason": f"during {current['phase']}: "
                  f"{failure_text(exc)}"}
        traceback.print_exc()
    finally:
        _write_json(Path(args.out), result)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run one mode (``run``) or record its stacked trace (``stack``) and write the result,
    whatever happens inside."""
    settings = json.loads(args.settings)
    mode_run = ModeRun(args.workload, args.mode, args.device, settings)
    stacked = args.command == "stack"
    try:
        if stacked:
            mode_run.run_stacked(Path(args.trace))
        else:
            mode_run.run(Path(args.trace))
    except BaseException as exc:
        mode_run.result.update(
            status="failed", reason=f"during {mode_run.current_phase}: {failure_text(exc)}"
        )
        traceback.print_exc()
        if (not stacked and mode_run.mode in COMPILE_MODES
                and "torch._dynamo" in sys.modules):
            from traceviz.collect.diagnostics import compile_counters

            mode_run.result["compile"] = compile_counters()
    finally:
        _write_json(Path(args.out), mode_run.result)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m traceviz.collect.child``."""
    parser = argparse.ArgumentParser(prog="python -m traceviz.collect.child")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe")
    p.add_argument("workload")
    p.add_argument("out")
    for name in ("run", "stack"):
        r = sub.add_parser(name)
        r.add_argument("workload")
        r.add_argument("mode")
        r.add_argument("trace")
        r.add_argument("out")
        r.add_argument("--device", required=True, choices=["cuda", "cpu"])
        r.add_argument("--settings", required=True, help="JSON: warmup, repeats, ...")
    v = sub.add_parser("against")
    v.add_argument("workload")
    v.add_argument("mode")
    v.add_argument("out")
    v.add_argument("--old", required=True)
    v.add_argument("--device", required=True, choices=["cuda", "cpu"])
    v.add_argument("--settings", required=True, help="JSON: warmup, timing budget, ...")
    args = parser.parse_args(argv)
    if args.command == "probe":
        return probe(args.workload, Path(args.out))
    if args.command == "against":
        return against(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

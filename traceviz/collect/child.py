"""One mode of one workload, in its own process: ``python -m traceviz.collect.child``.

``probe WORKLOAD OUT_JSON`` loads and validates the workload and writes the environment (versions,
GPU, what is available). ``run WORKLOAD MODE TRACE OUT_JSON --device D --settings JSON`` runs one
mode: the eager reference (on float64 copies of the inputs unless the workload says otherwise),
then the phases of :class:`traceviz.collect.profiled_step.StepRun` on the mode's step (first
call, correctness against the reference, timing, peak memory, paired timing against the eager
step, the lean trace, diagnostics); it writes the mode's manifest entry to OUT_JSON, also
when a phase raised (then ``status`` is ``failed`` and ``reason`` says where and why). Its
profiled run is the **lean** trace: no Python stacks, no shapes, so the profiler's own cost per
op stays as small as it can; the timeline metrics and the verdicts read it.
With ``--stack-trace STACK``, a mode that ran to the end then records the **stacked** trace
(Python stacks on) to STACK in the same process, in the phase
:data:`~traceviz.collect.profiled_step.STACK_PHASE`: OUT_JSON is written before it starts,
with every measurement, and again after it with the ``stack_profiled`` record, so a stacked
recording that raises, hangs or dies costs only that record. It is the process's second
profiler session, after the lean trace; only the host-wait sources are read from it.
``against NEW MODE OUT --old OLD --device D --settings JSON`` times two versions of the step
against each other (:mod:`traceviz.collect.against`). Progress goes to stdout as
``@@traceviz-phase <name>`` lines for the parent's display.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traceviz.collect.mode_names import COMPILE_MODES
from traceviz.collect.profiled_step import (
    BASELINE_MODE,
    RAN,
    STACK_PHASE,
    StepRun,
    failure_text,
    phase,
    write_json,
)
from traceviz.collect.workload import WorkloadError, load_workload

#: Environment variables that change what torch.compile does, recorded when set.
RECORDED_ENV = (
    "TORCH_LOGS",
    "TORCHINDUCTOR_CACHE_DIR",
    "TORCHINDUCTOR_COMPILE_THREADS",
    "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS",
    "CUDA_VISIBLE_DEVICES",
)
#: Exit code of a probe whose workload file is invalid.
EXIT_BAD_WORKLOAD = 2


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
        write_json(out, {"error": str(exc)})
        return EXIT_BAD_WORKLOAD
    env = environment()
    write_json(
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


class ModeRun(StepRun):
    """One mode's run in a process of its own (:class:`~traceviz.collect.profiled_step.
    StepRun`), on the workload's step and fresh inputs."""

    def __init__(self, workload_path: str, mode: str, device: str, settings: dict[str, Any]):
        super().__init__(workload_path, mode, device, settings)
        self.device = device

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

    def _baseline(self, workload: Any) -> Callable[[], Any]:
        """The baseline's step (:data:`~traceviz.collect.profiled_step.BASELINE_MODE`) on
        fresh inputs of its own, for paired timing."""
        from traceviz.collect.modes import build_step

        base_inputs = self._fresh_inputs(workload)
        base_step = build_step(BASELINE_MODE, workload, base_inputs)
        return lambda: base_step(*base_inputs)

    def _trace_metadata(self, workload: Any, kind: str) -> dict[str, Any]:
        return {"workload": workload.name, "workload_path": str(workload.path),
                "mode": self.mode, "trace_kind": kind, **self.settings["environment"]}

    def trace_stacked(self, call: Callable[[], Any], trace_path: Path,
                      metadata: dict[str, Any]) -> dict[str, Any]:
        """The stacked trace of the warm step ``call`` (the phase :data:`STACK_PHASE`, which
        the caller has entered): the manifest's ``stack_profiled`` record, never an exception.

        As the lean trace: :func:`~traceviz.collect.tracing.profile_steps` with Python stacks,
        its inflation over the unprofiled steps it times just before the profiler starts. The
        step is warm, but the lean trace's export and check left the device idle, after which
        a CUDA step runs slower for a while (:data:`~traceviz.collect.timing.WARM_MIN_S`): a
        warm-up as every other one (``warmup`` steps, at least ``warm_min_s`` seconds; on the
        CPU the steps alone) comes first. Both step times come after the lean session, which on
        CUDA leaves CUPTI attached (:mod:`traceviz.collect.manifest` says what that changes).
        ``status`` ``ok``; ``failed`` with the reason when recording raised (the error, as
        :meth:`fail` words it), or when a CUDA trace holds no GPU activity (CUPTI's second
        session in a process can come out empty: :data:`~traceviz.collect.tracing.
        EMPTY_TRACE_HINT`), the trace's counts and times then kept.
        """
        from traceviz.collect import timing, tracing

        try:
            timing.warm(call, int(self.settings["warmup"]), self.sync,
                        timing.warm_min_s(self.cuda) if self.min_warm_s is None
                        else self.min_warm_s)
            window = tracing.profile_steps(call, trace_path, cuda=self.cuda, with_stack=True,
                                           metadata=metadata)
            record = tracing.check_trace(trace_path).profiled(trace_path.name, window)
        except BaseException as exc:  # the mode's measurements stand; only this record fails
            traceback.print_exc()
            return {"status": "failed", "reason": f"during {STACK_PHASE}: {failure_text(exc)}"}
        if self.cuda and record["gpu_activities"] == 0:
            return {"status": "failed", "reason": tracing.EMPTY_TRACE_HINT, **record}
        return {"status": "ok", "reason": None, **record}

    def run(self, trace_path: Path, stack_path: Path | None = None,
            save: Callable[[], None] | None = None) -> None:
        """All phases; exceptions propagate with :attr:`result` filled so far. With
        ``stack_path``, a mode that ran to the end (``ok`` or ``mismatch``) then records its
        stacked trace there (:meth:`trace_stacked`, its record :attr:`result`'s
        ``stack_profiled``), once ``save()`` has written every measurement."""
        import torch

        from traceviz.collect.correctness import compare
        from traceviz.collect.modes import build_step

        self.enter("loading")
        workload = load_workload(self.workload_path)
        self.enter("reference")
        reference = self._reference(workload, int(self.settings["check_steps"]))
        if self.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        self.enter("building")  # torch.compile's first import of Dynamo and Inductor lands here
        inputs = self._fresh_inputs(workload)
        step = build_step(self.mode, workload, inputs)

        def call() -> tuple[Any, ...]:
            return step(*inputs)

        outputs = self.first_call(call)
        outputs = self.check_steps(call, outputs)
        outputs = tuple(t.detach().clone() for t in outputs)
        correct = compare(outputs, reference, workload.rtol, workload.atol)
        self.result["correctness"] = correct.to_dict()
        del outputs, reference
        self.measure_and_trace(
            call, baseline=lambda: self._baseline(workload), trace_path=trace_path,
            metadata=self._trace_metadata(workload, "lean"),
            mismatch=None if correct.ok
            else f"outputs differ from the eager reference: {correct.detail}",
        )
        if stack_path is not None and self.result["status"] in RAN:
            # announced before the save: a result written in this phase holds every measurement
            self.enter(STACK_PHASE)
            if save is not None:
                save()
            self.result["stack_profiled"] = self.trace_stacked(
                call, stack_path, self._trace_metadata(workload, "stacked"))


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
        write_json(Path(args.out), result)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run one mode (and its stacked trace with ``--stack-trace``) and write the result,
    whatever happens inside."""
    settings = json.loads(args.settings)
    mode_run = ModeRun(args.workload, args.mode, args.device, settings)
    out = Path(args.out)
    try:
        stack = None if args.stack_trace is None else Path(args.stack_trace)
        mode_run.run(Path(args.trace), stack, save=lambda: write_json(out, mode_run.result))
    except BaseException as exc:
        mode_run.fail(exc)
        if mode_run.mode in COMPILE_MODES and "torch._dynamo" in sys.modules:
            from traceviz.collect.diagnostics import compile_counters

            mode_run.result["compile"] = compile_counters()
    finally:
        write_json(out, mode_run.result)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m traceviz.collect.child``."""
    parser = argparse.ArgumentParser(prog="python -m traceviz.collect.child")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe")
    p.add_argument("workload")
    p.add_argument("out")
    r = sub.add_parser("run")
    r.add_argument("workload")
    r.add_argument("mode")
    r.add_argument("trace")
    r.add_argument("out")
    r.add_argument("--device", required=True, choices=["cuda", "cpu"])
    r.add_argument("--settings", required=True, help="JSON: warmup, repeats, ...")
    r.add_argument("--stack-trace", help="also record the stacked trace here, after the rest")
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

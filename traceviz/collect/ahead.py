"""Compile the compile modes side by side before any mode is timed (``traceviz profile``).

A cold ``torch.compile`` spends most of a mode's run compiling: tracing, lowering, Triton's
compiles and, for the ``max-autotune`` modes, autotuning. Inductor and Triton keep what they
compile in caches on disk (the FX graph cache, the autotuning results, the compiled kernels),
so a mode compiled once in any process starts warm in the next. :func:`compile_ahead` runs one
``python -m traceviz.collect.child warm`` process per selected compile mode, up to
:func:`ahead_workers` at once, before the first timed mode; each only builds its mode's step and
calls it :data:`~traceviz.collect.child.AHEAD_CALLS` times. The modes are then run one after
another as before, each alone on the machine: their timing, traces and checks are unchanged,
they just find the compiled graphs and kernels on disk. A mode whose compile ahead failed or
timed out is compiled by its own run, as without this step, and fails there if it must.

Where the autotuning ran beside another mode's compile, the autotuner timed its candidates on
a busy machine: it may keep another of two near-equal kernels than a quiet compile would (the
runs then time and trace the kernels it kept, as they would any other). Off (``--no-ahead``),
every mode compiles in its own run.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from traceviz.collect.mode_names import COMPILE_MODES
from traceviz.collect.runner import RunSettings, run_side
from traceviz.trace.parallel import usable_cpus

#: CPU cores per compile running at once (each also starts Inductor's compile workers).
CORES_PER_COMPILE = 4


def ahead_workers(n_modes: int, cores: int | None = None) -> int:
    """Compile processes at once for ``n_modes`` modes: one per :data:`CORES_PER_COMPILE`
    cores, at most one per mode. Below 2 the step is skipped: compiling the modes one at a time
    ahead would only add a process start to each."""
    return max(0, min(n_modes, (usable_cpus() if cores is None else cores) // CORES_PER_COMPILE))


def ahead_modes(modes: list[str]) -> list[str]:
    """The modes of ``modes`` that compile (in their order)."""
    return [m for m in modes if m in COMPILE_MODES]


def compile_ahead(workload: Path, modes: list[str], run_dir: Path, settings: RunSettings,
                  environment: dict[str, Any], on_done: Callable[[str, str], None]
                  ) -> dict[str, Any] | None:
    """Compile ``modes`` (compile modes, :func:`ahead_modes`) side by side; ``None`` when fewer
    than two can run at once (:func:`ahead_workers`). The manifest's ``compiled_ahead``
    record: ``{"workers", "wall_s", "modes": {mode: {"status", "reason", "first_call_s",
    "wall_s", "phase_s", "log"}}}``; ``on_done(mode, status)`` as each one ends."""
    workers = ahead_workers(len(modes))
    if workers < 2:
        return None
    child_settings = json.dumps(settings.child_settings(environment))

    stop = threading.Event()

    def one(mode: str) -> dict[str, Any]:
        record = run_side(run_dir, mode, "ahead", ("compiling ahead", "compile-ahead"),
                          lambda result: ["warm", str(workload), mode, str(result),
                                          "--device", settings.device,
                                          "--settings", child_settings],
                          settings, lambda _phase: None, stop)
        on_done(mode, str(record.get("status")))
        return record

    begin = time.monotonic()
    with ThreadPoolExecutor(workers, thread_name_prefix="traceviz-ahead") as pool:
        futures = [pool.submit(one, m) for m in modes]
        try:
            done = {m: f.result() for m, f in zip(modes, futures, strict=True)}
        except BaseException:  # the run is stopping (SIGINT / SIGTERM): kill every compile
            stop.set()
            for f in futures:
                f.cancel()
            raise
    return {"workers": workers, "wall_s": time.monotonic() - begin, "modes": done}

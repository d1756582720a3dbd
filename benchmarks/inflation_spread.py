"""How much a trace's profiler inflation varies between processes, under two statistics.

``python -m benchmarks.inflation_spread WORKLOAD:MODE[:VARIANT] [...] [--rounds N] [--pin CPU]
[--out FILE]`` runs, for each bundled workload and mode, ``N`` rounds of two fresh processes,
the lean trace's and the stacked trace's (lean first in the first, third, ... round, stacked
first in the others), each pinned to CPU ``--pin`` after its warm-up when given.
``VARIANT`` (:func:`one`) changes how the window is timed and how many profiler warm-up and
recorded steps it has. Each process does what
``traceviz profile``'s stack child does: load the workload, build the mode's step, warm up
(:func:`traceviz.collect.timing.warm`, :data:`~traceviz.collect.timing.WARM_MIN_S` on CUDA) and
record one profiled window with :func:`traceviz.collect.tracing.profile_steps` (Python stacks on
or off), keeping every profiled and adjacent unprofiled step time.

Per process it gives the inflation under both statistics: ``window mean`` (the manifest's before
2026-11-25: the profiled window's mean over the median of the adjacent windows' means) and
``median step`` (since: the median profiled step over the median adjacent step). Per workload
and mode: each statistic's lean and stacked inflations, their ranges, and in how many rounds the
lean trace was the less inflated. ``docs/comparison.md`` cites the committed result.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("lean", "stacked")


def _window_only(call: Any, trace: Path, cuda: bool, with_stack: bool) -> dict[str, Any]:
    """The profiled window timed as traceviz did before 2026-11-25: two CUDA events, around
    the whole active window only (no event between steps)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    from traceviz.collect import tracing

    if not cuda:
        raise SystemExit("the window variant times with CUDA events: it needs a GPU")
    adjacent = tracing.adjacent_intervals_ms(call, cuda=cuda)
    first = tracing.WAIT_STEPS + tracing.WARMUP_STEPS
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 with_stack=with_stack, record_shapes=False,
                 schedule=schedule(wait=tracing.WAIT_STEPS, warmup=tracing.WARMUP_STEPS,
                                   active=tracing.ACTIVE_STEPS, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(trace))) as prof:
        for i in range(first + tracing.ACTIVE_STEPS):
            if i == first:
                begin.record()
            call()
            if i == first + tracing.ACTIVE_STEPS - 1:
                end.record()
            prof.step()
    end.synchronize()
    mean = begin.elapsed_time(end) / tracing.ACTIVE_STEPS
    return {"step_intervals_ms": [mean] * tracing.ACTIVE_STEPS, "adjacent_intervals_ms": adjacent}


def warmed_step(workload: str, mode: str) -> tuple[Callable[[], Any], bool]:
    """The bundled ``workload``'s step in ``mode`` as a no-argument call, built and warmed up as
    ``profile``'s children do (:func:`traceviz.collect.timing.warm`), and whether it runs on
    CUDA."""
    import torch

    from traceviz.collect import timing
    from traceviz.collect.modes import build_step
    from traceviz.collect.workload import load_workload

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    wl = load_workload(str(Path("workloads") / f"{workload}.py"))
    torch.manual_seed(0)
    inputs = wl.make_inputs(device)
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    step = build_step(mode, wl, inputs)

    def call() -> Any:
        return step(*inputs)

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    timing.warm(call, 10, sync, timing.warm_min_s(cuda))
    return call, cuda


def one(workload: str, mode: str, kind: str, trace: Path, out: Path, variant: str,
        pin: int | None = None) -> None:
    """One process's profiled window (``kind`` lean or stacked); its step times to ``out``.

    ``variant`` is ``TIMING/WARMUP[/ACTIVE]``: ``step``
    (:func:`~traceviz.collect.tracing.profile_steps`, an event after every step) or ``window``
    (:func:`_window_only`), with ``WARMUP`` profiler warm-up steps before the ``ACTIVE``
    recorded ones (default :data:`~traceviz.collect.tracing.ACTIVE_STEPS`). ``pin``: after the
    warm-up, every thread of the process is pinned to that CPU and the step warmed again for
    0.5 s before the window (as :func:`benchmarks.cpu_placement.sweep` does)."""
    from traceviz.collect import timing, tracing

    call, cuda = warmed_step(workload, mode)
    if pin is not None:
        import torch

        from benchmarks.cpu_placement import pin_threads

        pin_threads({pin})
        timing.warm(call, 10, torch.cuda.synchronize if cuda else (lambda: None), 0.5)
    how, warmup, *active = variant.split("/")
    tracing.WARMUP_STEPS = int(warmup)
    if active:
        tracing.ACTIVE_STEPS = int(active[0])
    if how == "window":
        record = _window_only(call, trace, cuda, kind == "stacked")
    else:
        window = tracing.profile_steps(call, trace, cuda=cuda,
                                       with_stack=kind == "stacked", metadata={})
        record = {"step_intervals_ms": window.step_intervals_ms,
                  "adjacent_intervals_ms": window.adjacent_intervals_ms}
    out.write_text(json.dumps(record))


def inflations(record: dict[str, list[float]], window: int) -> dict[str, float]:
    """The process's inflation under both statistics (``window``: steps per window)."""
    steps = record["step_intervals_ms"]
    adjacent = record["adjacent_intervals_ms"]
    means = [statistics.fmean(adjacent[i:i + window]) for i in range(0, len(adjacent), window)]
    return {"window mean": statistics.fmean(steps) / statistics.median(means),
            "median step": statistics.median(steps) / statistics.median(adjacent)}


def summary(rounds: list[dict[str, dict[str, float]]]) -> dict[str, Any]:
    """Per statistic: lean and stacked inflations by round, ranges, rounds with lean lower."""
    out: dict[str, Any] = {}
    for stat in ("window mean", "median step"):
        lean = [r["lean"][stat] for r in rounds]
        stacked = [r["stacked"][stat] for r in rounds]
        out[stat] = {"lean": lean, "stacked": stacked,
                     "lean_range": [min(lean), max(lean)],
                     "stacked_range": [min(stacked), max(stacked)],
                     "rounds_lean_lower": sum(a < b for a, b in zip(lean, stacked, strict=True)),
                     "rounds": len(rounds)}
    return out


def measure(cell: str, rounds: int, window: int, pin: int | None = None) -> dict[str, Any]:
    """``rounds`` lean/stacked process pairs of one ``WORKLOAD:MODE[:VARIANT]`` (variant as in
    :func:`one`; default ``step/`` and today's warm-up steps), each process pinned to CPU
    ``pin`` after its warm-up when given."""
    from traceviz.collect.tracing import WARMUP_STEPS

    workload, mode, *rest = cell.split(":")
    variant = rest[0] if rest else f"step/{WARMUP_STEPS}"
    per_round = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            order = KINDS if r % 2 == 0 else KINDS[::-1]
            got: dict[str, Any] = {}
            for kind in order:
                out = Path(tmp) / f"{kind}{r}.json"
                subprocess.run([sys.executable, "-m", "benchmarks.inflation_spread", "--one",
                                workload, mode, kind, str(Path(tmp) / f"{kind}{r}.json.gz"),
                                str(out), variant,
                                *(["--pin", str(pin)] if pin is not None else [])], check=True)
                raw = json.loads(out.read_text())
                got[kind] = {**inflations(raw, window), "raw": raw}
            per_round.append(got)
            print(cell, r, {k: {s: round(v[s], 3) for s in ("window mean", "median step")}
                            for k, v in got.items()}, flush=True)
    return {"cell": cell, "variant": variant, "pin": pin, "rounds": per_round,
            "summary": summary(per_round)}


def _active(cell: str, default: int) -> int:
    """The recorded steps per window of a cell's variant."""
    parts = cell.split(":")[2:3]
    fields = parts[0].split("/") if parts else []
    return int(fields[2]) if len(fields) > 2 else default


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cells", nargs="*", help="WORKLOAD:MODE[:step|window/WARMUP]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--pin", type=int, help="pin each process to this CPU after warm-up")
    parser.add_argument("--one", nargs=6,
                        metavar=("WORKLOAD", "MODE", "KIND", "TRACE", "OUT", "VARIANT"))
    args = parser.parse_args(argv)
    if args.one:
        workload, mode, kind, trace, out, variant = args.one
        one(workload, mode, kind, Path(trace), Path(out), variant, args.pin)
        return
    from traceviz.collect.tracing import ACTIVE_STEPS

    results = []
    for cell in args.cells:
        results.append(measure(cell, args.rounds, _active(cell, ACTIVE_STEPS), args.pin))
        if args.out:
            args.out.write_text(json.dumps(results, indent=1))
    for r in results:
        for stat, s in r["summary"].items():
            print(f"{r['cell']:32} {stat:12} lean {s['lean_range'][0]:.2f}–{s['lean_range'][1]:.2f}"
                  f"  stacked {s['stacked_range'][0]:.2f}–{s['stacked_range'][1]:.2f}"
                  f"  lean lower in {s['rounds_lean_lower']}/{s['rounds']}")


if __name__ == "__main__":
    main()

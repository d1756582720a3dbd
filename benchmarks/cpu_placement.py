"""Does the CPU a step's host thread runs on decide its speed, profiled and unprofiled?

``python -m benchmarks.cpu_placement WORKLOAD:MODE[:profile] [...] [--fresh N] [--out FILE]``

Two measurements per cell, on the machine it runs on:

- **sweep** (one process): after the usual warm-up
  (:func:`benchmarks.inflation_spread.warmed_step`), every thread of the process is pinned to
  one CPU at a time (``sched_setaffinity`` on each task), twice over all CPUs; on each it times
  :data:`~traceviz.collect.tracing.ADJACENT_WINDOWS` windows of unprofiled steps
  (:func:`traceviz.collect.tracing.adjacent_intervals_ms`) and, for ``:profile`` cells, records
  one lean profiled window (:func:`traceviz.collect.tracing.profile_steps`, no stacks) and its
  inflation. Only modes without CUDA graphs may take ``:profile`` (later profiler sessions in
  one process miss graph replays).
- **fresh** (``--fresh N`` processes per ``:profile`` cell, unpinned): one lean profiled window
  each, as ``traceviz profile``'s trace child records it, with a thread sampling which CPU the
  main thread is on every 2 ms while it runs.

Prints the topology (``lscpu -e``, the GPU's ``local_cpulist``) and per CPU the medians.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.inflation_spread import warmed_step


def pin_threads(cpus: set[int]) -> None:
    """Pin every thread of this process to ``cpus``."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(tid), cpus)


def _cpu_of(tid: int) -> int:
    """The CPU thread ``tid`` last ran on (``/proc/self/task/TID/stat`` field 39)."""
    stat = Path(f"/proc/self/task/{tid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[36])


def sweep(workload: str, mode: str, profile: bool, trace_dir: Path) -> list[dict[str, Any]]:
    """Per CPU, twice over: the unprofiled step median and (``profile``) the lean inflation."""
    from traceviz.collect import timing, tracing

    call, cuda = warmed_step(workload, mode)
    import torch

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    everyone = sorted(os.sched_getaffinity(0))
    rows = []
    for rep in range(2):
        for cpu in everyone:
            pin_threads({cpu})
            timing.warm(call, 10, sync, 0.5)
            row: dict[str, Any] = {"rep": rep, "cpu": cpu}
            if profile:
                window = tracing.profile_steps(call, trace_dir / f"{cpu}-{rep}.json.gz",
                                               cuda=cuda, metadata={})
                row.update(adjacent_ms=window.adjacent_unprofiled_ms, step_ms=window.step_ms,
                           inflation=window.inflation)
            else:
                row["adjacent_ms"] = statistics.median(
                    tracing.adjacent_intervals_ms(call, cuda=cuda))
            rows.append(row)
            print(workload, mode, {k: round(v, 4) if isinstance(v, float) else v
                                   for k, v in row.items()}, flush=True)
    pin_threads(set(everyone))
    return rows


def fresh_one(workload: str, mode: str, trace: Path, out: Path) -> None:
    """One unpinned lean profiled window, with the main thread's CPU sampled while it runs."""
    from traceviz.collect import tracing

    call, cuda = warmed_step(workload, mode)
    main = threading.get_native_id()
    seen: Counter[int] = Counter()
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            seen[_cpu_of(main)] += 1
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    window = tracing.profile_steps(call, trace, cuda=cuda, metadata={})
    stop.set()
    sampler.join()
    out.write_text(json.dumps({"adjacent_ms": window.adjacent_unprofiled_ms,
                               "step_ms": window.step_ms, "inflation": window.inflation,
                               "main_thread_cpus": dict(seen.most_common())}))


def fresh(workload: str, mode: str, n: int) -> list[dict[str, Any]]:
    """``n`` fresh unpinned processes' lean windows (:func:`fresh_one`)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            out = Path(tmp) / f"{i}.json"
            subprocess.run([sys.executable, "-m", "benchmarks.cpu_placement", "--one", workload,
                            mode, str(Path(tmp) / f"{i}.json.gz"), str(out)], check=True)
            rows.append(json.loads(out.read_text()))
            print(workload, mode, "fresh", i, rows[-1], flush=True)
    return rows


def topology() -> dict[str, Any]:
    """``lscpu -e`` and, per GPU, its PCI address's ``local_cpulist``."""
    info: dict[str, Any] = {}
    for name, cmd in (("lscpu", ["lscpu", "-e"]),
                      ("gpus", ["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"])):
        try:
            info[name] = subprocess.run(cmd, capture_output=True, text=True,
                                        check=False).stdout
        except OSError as exc:
            info[name] = f"unavailable: {exc}"
    local = {}
    for bus in info.get("gpus", "").split():
        path = Path("/sys/bus/pci/devices") / bus.lower().replace("00000000:", "0000:")
        cpulist = path / "local_cpulist"
        local[bus] = cpulist.read_text().strip() if cpulist.exists() else "absent"
    info["local_cpulist"] = local
    return info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cells", nargs="*", help="WORKLOAD:MODE[:profile]")
    parser.add_argument("--fresh", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", nargs=4, metavar=("WORKLOAD", "MODE", "TRACE", "OUT"))
    args = parser.parse_args(argv)
    if args.one:
        workload, mode, trace, out = args.one
        fresh_one(workload, mode, Path(trace), Path(out))
        return
    result: dict[str, Any] = {"topology": topology(), "cells": []}
    print(json.dumps(result["topology"], indent=1), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for cell in args.cells:
            workload, mode, *flag = cell.split(":")
            profile = flag == ["profile"]
            entry = {"cell": cell, "sweep": sweep(workload, mode, profile, Path(tmp))}
            if profile and args.fresh:
                entry["fresh"] = fresh(workload, mode, args.fresh)
            result["cells"].append(entry)
            if args.out:
                args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

"""Do the GPU's and the CPU's clocks explain the levels a step time moves between?

``python -m benchmarks.gpu_clocks WORKLOAD:MODE [...] [--processes N] [--seconds S]
[--out FILE]`` runs, per bundled workload and mode, ``N`` fresh processes one after another.
Each does what ``traceviz profile``'s trace child does (:func:`benchmarks.inflation_spread.
warmed_step`), then times windows of :data:`~traceviz.collect.tracing.ACTIVE_STEPS` unprofiled
steps back to back for ``S`` seconds (:func:`traceviz.collect.tracing.adjacent_intervals_ms`'s
timing: CUDA events between steps), and ends with one lean profiled window
(:func:`traceviz.collect.tracing.profile_steps`, which times its own adjacent windows).

Beside it, in their own processes so that they take no GIL from the step:

- ``nvidia-smi`` samples the GPU every 10 ms: SM and memory clocks, power, performance state
  and the active clock-event reasons (bit mask);
- a sampler reads, every 10 ms, the CPU the step's main thread last ran on
  (``/proc/PID/task/PID/stat``) and that CPU's current frequency (``/proc/cpuinfo``).

Each window gets the mean of the samples taken while it ran (wall clock, ``time.time``). Per
process it prints the windows' median step time by SM-clock level and the Spearman rank
correlation of step time with the SM clock and with the CPU frequency; the JSON keeps every
window and sample. ``docs/comparison.md`` cites the committed result.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

SAMPLE_MS = 10
SMI_FIELDS = ("timestamp", "clocks.sm", "clocks.mem", "power.draw", "pstate",
              "clocks_event_reasons.active")


def _cpu_mhz() -> dict[int, float]:
    """Current frequency (MHz) of each CPU, from ``/proc/cpuinfo``."""
    out: dict[int, float] = {}
    cpu = -1
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("processor"):
            cpu = int(line.split(":")[1])
        elif line.startswith("cpu MHz"):
            out[cpu] = float(line.split(":")[1])
    return out


def cpu_sampler(pid: int, out: Path) -> None:
    """Until ``pid`` ends: every ``SAMPLE_MS``, (wall s, CPU of pid's main thread, its MHz)."""
    rows = []
    stat = Path(f"/proc/{pid}/task/{pid}/stat")
    while True:
        try:
            cpu = int(stat.read_text().rsplit(")", 1)[1].split()[36])
        except (OSError, IndexError, ValueError):
            break
        rows.append((time.time(), cpu, _cpu_mhz().get(cpu)))
        time.sleep(SAMPLE_MS / 1000)
    out.write_text(json.dumps(rows))


def _smi_rows(path: Path) -> list[tuple[float, float, float, float, str, str]]:
    """nvidia-smi's CSV samples as (wall s, SM MHz, memory MHz, power W, pstate, reasons)."""
    rows = []
    for line in path.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(SMI_FIELDS):
            continue
        try:
            t = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append((t, float(parts[1]), float(parts[2]), float(parts[3]), parts[4],
                         parts[5]))
        except ValueError:
            continue
    return rows


def one(workload: str, mode: str, seconds: float, out: Path) -> None:
    """One process: warmed step, unprofiled windows for ``seconds``, one lean profiled window."""
    from benchmarks.inflation_spread import warmed_step
    from traceviz.collect import tracing

    call, cuda = warmed_step(workload, mode)
    windows = []
    end = time.time() + seconds
    while time.time() < end:
        t0, h0 = time.time(), time.perf_counter_ns()
        steps = tracing._step_intervals_ms(call, tracing.ACTIVE_STEPS, cuda)
        windows.append({"t0": t0, "t1": time.time(), "steps_ms": steps,
                        "wall_ms": (time.perf_counter_ns() - h0) / 1e6})
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.time()
        window = tracing.profile_steps(call, Path(tmp) / "lean.json.gz", cuda=cuda,
                                       with_stack=False, metadata={})
        profiled = {"t0": t0, "t1": time.time(), "steps_ms": window.step_intervals_ms,
                    "adjacent_ms": window.adjacent_intervals_ms,
                    "inflation": window.inflation}
    out.write_text(json.dumps({"windows": windows, "profiled": profiled}))


def _mean_over(samples: list[tuple], t0: float, t1: float, field: int) -> float | None:
    """Mean of ``field`` over samples taken in [t0, t1] (the nearest one when none is)."""
    inside = [s[field] for s in samples if t0 <= s[0] <= t1 and s[field] is not None]
    if inside:
        return statistics.fmean(inside)
    if not samples:
        return None
    return min(samples, key=lambda s: abs(s[0] - (t0 + t1) / 2))[field]


def _ranks(xs: list[float]) -> list[float]:
    """Ranks of ``xs`` from 0, tied values sharing their mean rank."""
    order = sorted(range(len(xs)), key=xs.__getitem__)
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            ranks[k] = (i + j) / 2
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation; None below 3 points or when either side never varies."""
    if len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else None


def _quantiles(xs: list[float]) -> dict[str, float]:
    """min, p10, median, p90, max of ``xs``."""
    q = statistics.quantiles(xs, n=10)
    return {"min": min(xs), "p10": q[0], "median": statistics.median(xs), "p90": q[-1],
            "max": max(xs)}


def process(cell: str, seconds: float, gpu: str) -> dict[str, Any]:
    """One fresh process of ``WORKLOAD:MODE`` with both samplers beside it."""
    workload, mode = cell.split(":")[:2]
    with tempfile.TemporaryDirectory() as tmp:
        smi_out, cpu_out, rec = (Path(tmp) / n for n in ("smi.csv", "cpu.json", "rec.json"))
        with smi_out.open("w") as f:
            smi = subprocess.Popen(
                ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "-i", gpu,
                 "--format=csv,noheader,nounits", f"-lms={SAMPLE_MS}"], stdout=f)
        child = subprocess.Popen([sys.executable, "-m", "benchmarks.gpu_clocks", "--one",
                                  workload, mode, str(seconds), str(rec)])
        sampler = subprocess.Popen([sys.executable, "-m", "benchmarks.gpu_clocks",
                                    "--sample", str(child.pid), str(cpu_out)])
        rc = child.wait()
        sampler.wait()
        smi.terminate()
        smi.wait()
        if rc:
            raise SystemExit(f"{cell}: the measuring process ended with {rc}")
        record = json.loads(rec.read_text())
        gpu_rows = _smi_rows(smi_out)
        cpu_rows = [tuple(r) for r in json.loads(cpu_out.read_text())]
    for w in [*record["windows"], record["profiled"]]:
        w["sm_mhz"] = _mean_over(gpu_rows, w["t0"], w["t1"], 1)
        w["mem_mhz"] = _mean_over(gpu_rows, w["t0"], w["t1"], 2)
        w["power_w"] = _mean_over(gpu_rows, w["t0"], w["t1"], 3)
        w["cpu_mhz"] = _mean_over(cpu_rows, w["t0"], w["t1"], 2)
        w["cpus"] = sorted({r[1] for r in cpu_rows if w["t0"] <= r[0] <= w["t1"]})
        w["median_ms"] = statistics.median(w["steps_ms"])
    windows = record["windows"][2:]  # the first two still settle after the warm-up
    med = [w["median_ms"] for w in windows]
    sm = [w["sm_mhz"] for w in windows if w["sm_mhz"] is not None]
    cpu = [w["cpu_mhz"] for w in windows if w["cpu_mhz"] is not None]
    return {"cell": cell, "windows": len(windows), "window_median_ms": _quantiles(med),
            "levels": _levels(windows),
            "sm_mhz_in_windows": sorted({round(v) for v in sm}),
            "cpu_mhz_in_windows": sorted({round(v) for v in cpu}),
            "cpus": sorted({c for w in windows for c in w["cpus"]}),
            "power_w": [min(w["power_w"] for w in windows), max(w["power_w"] for w in windows)],
            "pstates": sorted({r[4] for r in gpu_rows}),
            "reasons": sorted({r[5] for r in gpu_rows}),
            "spearman_sm": spearman(med, [w["sm_mhz"] or 0.0 for w in windows]),
            "spearman_cpu": spearman(med, [w["cpu_mhz"] or 0.0 for w in windows]),
            "profiled": {k: v for k, v in record["profiled"].items()
                         if k not in ("t0", "t1", "cpus")},
            "every_100th_window": [
                {"t_s": round(w["t0"] - windows[0]["t0"], 3), "median_ms": w["median_ms"],
                 "sm_mhz": w["sm_mhz"], "cpu_mhz": w["cpu_mhz"], "cpus": w["cpus"]}
                for w in windows[::100]]}


def _levels(windows: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """Per SM-clock level (window means rounded to 15 MHz): windows and their median step."""
    by: dict[int, list[float]] = {}
    for w in windows:
        if w["sm_mhz"] is not None:
            by.setdefault(round(w["sm_mhz"] / 15) * 15, []).append(w["median_ms"])
    return {mhz: {"windows": len(v), "median_ms": statistics.median(v)}
            for mhz, v in sorted(by.items())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cells", nargs="*", help="WORKLOAD:MODE")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", nargs=4, metavar=("WORKLOAD", "MODE", "SECONDS", "OUT"))
    parser.add_argument("--sample", nargs=2, metavar=("PID", "OUT"))
    args = parser.parse_args(argv)
    if args.one:
        workload, mode, seconds, out = args.one
        one(workload, mode, float(seconds), Path(out))
        return
    if args.sample:
        cpu_sampler(int(args.sample[0]), Path(args.sample[1]))
        return
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    results = []
    for cell in args.cells:
        for p in range(args.processes):
            r = process(cell, args.seconds, gpu)
            results.append(r)
            prof, q = r["profiled"], r["window_median_ms"]
            print(f"{cell} process {p}: {r['windows']} windows, median step {q['min']:.4f} / "
                  f"{q['p10']:.4f} / {q['median']:.4f} / {q['p90']:.4f} / {q['max']:.4f} ms "
                  f"(min/p10/median/p90/max); SM clock in windows {r['sm_mhz_in_windows']} MHz, "
                  f"CPU {r['cpu_mhz_in_windows']} MHz on CPUs {r['cpus']}; rho(step, SM) "
                  f"{r['spearman_sm']}, rho(step, CPU MHz) {r['spearman_cpu']}; levels "
                  f"{r['levels']}; profiled: inflation {prof['inflation']:.2f} at SM "
                  f"{prof['sm_mhz']} MHz", flush=True)
            if args.out:
                args.out.write_text(json.dumps(results))


if __name__ == "__main__":
    main()

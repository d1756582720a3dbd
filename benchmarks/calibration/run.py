"""Run the calibration cells through traceviz and score them against the injected truth.

::

    python -m benchmarks.calibration.run --device cpu --out /tmp/calib     # every CPU cell
    python -m benchmarks.calibration.run --device cuda --out OUT           # GPU subset, < 8 min
    python -m benchmarks.calibration.run --device cuda --modes all --effects all \
        --targets-us 20,200,2000,20000 --out OUT                          # the whole GPU table
    python -m benchmarks.calibration.run --device cuda --nproc 2 --out OUT # distributed cells

Steps: the device probe (:mod:`benchmarks.calibration.probe`, a child process; single-process
cells only), the cells' workload files (:mod:`benchmarks.calibration.cells`) under
``OUT/workloads/``, then per cell ``traceviz profile B --against A`` (``--nproc``: ``profile A``
and ``profile B`` as two runs, then ``traceviz compare A B``) into ``OUT/runs/``, the JSON report
beside each run, and the score of every mode (:mod:`benchmarks.calibration.score`). One progress
line per cell. After every cell the results so far are written to
``OUT/calibration-<device>[-nprocN]-<date>.json`` (and to ``--results`` when given), so a run
stopped by ``--budget-min`` or by hand still leaves a table: ``python -m
benchmarks.calibration.table RESULTS... > docs/calibration.md``. ``python -m
benchmarks.calibration.rescore RESULTS...`` scores stored results again with the current
scorer (no profiling).

On the CPU the profiled children get ``OMP_NUM_THREADS=--threads`` (default 1): on a shared
machine an intra-op thread pool waiting on a busy core multiplies small matmuls' times many
fold, in the probe and in the runs alike.

**Shared machines** (``--max-load``, default: the core count on the CPU, off on CUDA): before
the probe and before each cell the runner waits while the 1-minute load average is above
``--max-load``, polling every :data:`LOAD_POLL_S` s for at most ``--load-wait-s`` (then it goes
on); the waits count towards ``--budget-min``, and a wait never outlasts the budget. Each
score records the load when its cell started (``load_start_1m``), when it ended
(``loadavg_1m``) and the seconds waited before it (``waited_s``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.calibration import cells as cellmod
from benchmarks.calibration.score import (
    CHECKS,
    TOL_FLOOR_NS,
    TOL_FRACTION,
    recovered_against,
    recovered_runs,
    score,
)
from traceviz.collect.run_files import OLD_DIR

#: Results schema name.
SCHEMA = "traceviz.calibration/1"
#: Defaults per device: step targets (µs), single-process effects and modes.
DEFAULTS = {"cpu": {"targets": "20,200,2000,20000", "effects": ",".join(cellmod.EFFECTS),
                    "modes": "eager,compile", "budget": 2.0},
            "cuda": {"targets": "20,2000", "effects": "host50,launches,fused,gpu,sync",
                     "modes": "eager,cudagraph", "budget": 3.0}}
#: ``--modes all``: every mode but the hand-written Triton one (the cells define no
#: ``triton_step``).
ALL_MODES = "eager,compile,reduce-overhead,max-autotune-no-cudagraphs,max-autotune,cudagraph"
#: Seconds between two looks at the load average while waiting for a quieter machine.
LOAD_POLL_S = 20.0


def wait_for_load(max_load: float | None, limit_s: float) -> tuple[float, float]:
    """Wait while the 1-minute load average is above ``max_load`` (``None``: do not wait),
    polling every :data:`LOAD_POLL_S` s, at most ``limit_s`` s; return (the load when the wait
    ended, the seconds waited)."""
    t0 = time.monotonic()
    load = os.getloadavg()[0]
    while max_load is not None and load > max_load and time.monotonic() - t0 < limit_s:
        print(f"load {load:.2f} > {max_load:g}: waiting …", flush=True)
        time.sleep(min(LOAD_POLL_S, max(0.0, limit_s - (time.monotonic() - t0))))
        load = os.getloadavg()[0]
    return load, time.monotonic() - t0


def _traceviz() -> list[str]:
    return [sys.executable, "-m", "traceviz"]


def _run(cmd: list[str], log: Path, env: dict[str, str]) -> int:
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        return subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                              check=False).returncode


def _report(run_dir: Path, out: Path, log: Path, env: dict[str, str]) -> dict[str, Any] | None:
    _run([*_traceviz(), "report", str(run_dir), "-f", "json", "-o", str(out), "--force"],
         log, env)
    return json.loads(out.read_text()) if out.is_file() else None


def _profile_args(args: argparse.Namespace, modes: str) -> list[str]:
    return ["--device", args.device, "--modes", modes, "--timing-budget-s",
            str(args.timing_budget_s), "--timeout", str(args.timeout), "--no-stack", "--force"]


def run_cell(cell: cellmod.Cell, args: argparse.Namespace, out: Path,
             env: dict[str, str]
             ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """Profile one cell; return (the JSON report, the old version's JSON report (``profile
    --against``) or both runs' own reports (``{"a": …, "b": …}``, distributed cells), the
    modes)."""
    a, b = cellmod.write_pair(cell, out / "workloads")
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    log = out / "logs" / f"{cell.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    modes = args.modes
    if cell.nproc == 1:
        run_dir = runs / cell.name
        _run([*_traceviz(), "profile", str(b), "--against", str(a), "--out", str(run_dir),
              *_profile_args(args, modes)], log, env)
        old = _report(run_dir / OLD_DIR, runs / f"{cell.name}.old.json", log, env)
        return _report(run_dir, runs / f"{cell.name}.json", log, env), old, modes.split(",")
    dirs = []
    for side, path in (("a", a), ("b", b)):
        d = runs / f"{cell.name}-{side}"
        _run([*_traceviz(), "profile", str(path), "--nproc", str(cell.nproc), "--out", str(d),
              *_profile_args(args, modes)], log, env)
        dirs.append(d)
    report = runs / f"{cell.name}.json"
    _run([*_traceviz(), "compare", str(dirs[0]), str(dirs[1]), "-f", "json", "-o",
          str(report), "--force"], log, env)
    sides = [_report(d, runs / f"{d.name}.json", log, env) for d in dirs]
    return ((json.loads(report.read_text()) if report.is_file() else None),
            {"a": sides[0], "b": sides[1]}, modes.split(","))


def _summary(scores: list[dict[str, Any]]) -> dict[str, Any]:
    def count(check: str) -> dict[str, int]:
        vals = [s["checks"].get(check) for s in scores if s["checks"].get(check) is not None]
        return {"checked": len(vals), "passed": sum(bool(v) for v in vals)}

    return {"scored": len(scores), "passed": sum(bool(s["passed"]) for s in scores),
            **{c: count(c) for c in CHECKS}}


def write_results(record: dict[str, Any], paths: list[Path]) -> None:
    record["summary"] = _summary(record["scores"])
    text = json.dumps(record, indent=1) + "\n"
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _probe(args: argparse.Namespace, out: Path, env: dict[str, str]) -> dict[str, Any]:
    path = out / "probe.json"
    if args.probe:
        shutil.copyfile(args.probe, path)
    else:
        print(f"probe: timing the base and the effects on {args.device} …", flush=True)
        done = subprocess.run([sys.executable, "-m", "benchmarks.calibration.probe", "--device",
                               args.device, "--targets-us", args.targets_us],
                              capture_output=True, text=True, env=env, check=True)
        path.write_text(done.stdout)
    return json.loads(path.read_text())


def _selected(args: argparse.Namespace, probe: dict[str, Any] | None) -> list[cellmod.Cell]:
    if args.nproc > 1:
        effects = cellmod.DIST_EFFECTS if args.effects in ("all", None) else tuple(
            e for e in args.effects.split(",") if e in cellmod.DIST_EFFECTS)
        return cellmod.dist_cells(args.device, effects, args.nproc)
    assert probe is not None
    effects = cellmod.EFFECTS if args.effects == "all" else tuple(args.effects.split(","))
    targets = [float(t) for t in args.targets_us.split(",")]
    chosen = cellmod.single_cells(probe, targets, effects)
    if args.cells:
        wanted = set(args.cells.split(","))
        chosen = [c for c in chosen if c.name in wanted]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), required=True)
    parser.add_argument("--nproc", type=int, default=1,
                        help="1: single-process cells (profile --against); N > 1: the "
                             "distributed cells on N ranks (two runs, compare)")
    parser.add_argument("--out", type=Path, required=True, help="everything goes here")
    parser.add_argument("--targets-us", help="step targets, µs (default per device)")
    parser.add_argument("--effects", help="comma list of effects, or 'all' (default per "
                        f"device; single: {','.join(cellmod.EFFECTS)}; distributed: "
                        f"{','.join(cellmod.DIST_EFFECTS)})")
    parser.add_argument("--cells", help="only these cell names (e.g. host50-200us,gpu-2ms)")
    parser.add_argument("--modes", help=f"traceviz modes; 'all' = {ALL_MODES} "
                        "(default: eager,compile on cpu; eager,cudagraph on cuda)")
    parser.add_argument("--timing-budget-s", type=float, help="per mode (default 2 cpu, 3 cuda)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mode process")
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS (default 1 on cpu)")
    parser.add_argument("--budget-min", type=float,
                        help="start no new cell after this many minutes (0: no limit; "
                        "default 0 on cpu, 7 on cuda)")
    parser.add_argument("--max-load", type=float,
                        help="wait before each cell while the 1-minute load average is above "
                        "this (default: the core count on cpu, no wait on cuda)")
    parser.add_argument("--load-wait-s", type=float, default=600.0,
                        help="longest wait for --max-load, seconds (default 600)")
    parser.add_argument("--probe", type=Path, help="reuse this probe.json")
    parser.add_argument("--results", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    d = DEFAULTS[args.device]
    args.targets_us = args.targets_us or d["targets"]
    args.effects = args.effects or (d["effects"] if args.nproc == 1 else "all")
    args.modes = ALL_MODES if args.modes == "all" else (args.modes or d["modes"])
    args.timing_budget_s = args.timing_budget_s or d["budget"]
    if args.budget_min is None:
        args.budget_min = 7.0 if args.device == "cuda" else 0.0
    env = dict(os.environ)
    threads = args.threads or (1 if args.device == "cpu" else None)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.max_load is None and args.device == "cpu":
        args.max_load = float(os.cpu_count() or 1)
    started = time.monotonic()
    if args.nproc == 1 and not args.probe:
        wait_for_load(args.max_load, args.load_wait_s)
    probe = _probe(args, out, env) if args.nproc == 1 else None
    chosen = _selected(args, probe)
    date = dt.date.today().isoformat()
    suffix = f"-nproc{args.nproc}" if args.nproc > 1 else ""
    paths = [out / f"calibration-{args.device}{suffix}-{date}.json"]
    if args.results:
        paths.append(args.results)
    record: dict[str, Any] = {
        "schema": SCHEMA, "device": args.device, "nproc": args.nproc, "date": date,
        "host": platform.node(), "cores": os.cpu_count(), "gpu": (probe or {}).get("gpu"),
        "settings": {"modes": args.modes, "timing_budget_s": args.timing_budget_s,
                     "targets_us": args.targets_us, "effects": args.effects,
                     "omp_num_threads": threads, "max_load": args.max_load,
                     "tolerance": {"fraction": TOL_FRACTION,
                                                               "floor_ns": TOL_FLOOR_NS}},
        "probe": probe, "cells": [c.to_dict() for c in chosen], "scores": [], "skipped": []}
    print(f"{len(chosen)} cells x modes {args.modes} on {args.device}; results -> {paths[0]}",
          flush=True)
    for i, cell in enumerate(chosen, 1):
        left_s = (args.budget_min * 60 - (time.monotonic() - started) if args.budget_min
                  else args.load_wait_s)
        load_start, waited = wait_for_load(args.max_load,
                                           max(0.0, min(args.load_wait_s, left_s)))
        elapsed = (time.monotonic() - started) / 60
        if args.budget_min and elapsed > args.budget_min:
            record["skipped"].append({"cell": cell.name, "reason": f"--budget-min "
                                      f"{args.budget_min:g} spent ({elapsed:.1f} min)"})
            continue
        t0 = time.monotonic()
        doc, old_doc, modes = run_cell(cell, args, out, env)
        for mode in modes:
            rec = None
            if doc is not None:
                rec = (recovered_against(doc, mode, old_doc) if cell.nproc == 1
                       else recovered_runs(doc, mode, old_doc))
            s = score(cell, mode, args.device, rec)
            record["scores"].append({**s.to_dict(), "load_start_1m": round(load_start, 2),
                                     "loadavg_1m": round(os.getloadavg()[0], 2),
                                     "waited_s": round(waited)})
            print(f"[{i}/{len(chosen)}] {cell.name:<16} {mode:<12} "
                  f"{'pass' if s.passed else 'MISS'} {'; '.join(s.reasons)}", flush=True)
        print(f"[{i}/{len(chosen)}] {cell.name}: {time.monotonic() - t0:.0f} s", flush=True)
        write_results(record, paths)
    write_results(record, paths)
    sm = record["summary"]
    print(f"done: {sm['passed']}/{sm['scored']} cell x mode pass in "
          f"{(time.monotonic() - started) / 60:.1f} min; results {paths[0]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does ``traceviz check RUN --against BASELINE_RUN`` pass identical code and fail a slowdown?

``python -m benchmarks.gate_repeats [--pairs 20] [--slower 3] [--runs DIR] [--modes M,...]
[--timing-budget-s S] [--device cpu] [--out FILE]`` profiles, each in fresh processes
(``traceviz profile``, ``--no-stack``):

* ``--pairs`` pairs of identical code: ``benchmarks/calibration/pointwise.py`` twice (run A,
  then run B);
* ``--slower`` slower pairs: a new run of ``benchmarks/calibration/pointwise_trig.py`` (the same
  step plus a sin/cos/exp chain, about 20× slower on a CPU) as run B against the A of one of
  the first identical pairs (a fresh B process each).

Runs are kept under ``--runs`` and reused when their ``manifest.json`` exists (so the gate can be
re-evaluated on recorded runs). Then, per pair, it runs ``traceviz check B --against A`` (the
default ``--max-slowdown`` 5 %) and records its exit code, its ``FAIL`` and ``WARN`` lines,
both runs' between-process spreads (:func:`traceviz.analyze.review.run_speed.run_spread`) and
the one the gate used, each mode's median and floor (fastest block) change; per run, the eager
code's own-process number over its in-pair one, by median and by floor (issue 38, item 1: the
in-pair eager ran 3–5× faster than its own process on some CPUs). Writes every number
to ``--out`` (JSON) and prints the summary: identical pairs that exit 0, slower pairs that
exit 3, the spreads' range. ``docs/comparison.md`` ("Regression gate") cites the committed
result.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE = ROOT / "benchmarks" / "calibration" / "pointwise.py"
AFTER = ROOT / "benchmarks" / "calibration" / "pointwise_trig.py"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "2026-11-27-gate-repeats-cpu.json"


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m traceviz ARGS`` with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, check=False, timeout=1800)


def profile(workload: Path, out: Path, args: argparse.Namespace) -> float:
    """Profile ``workload`` into ``out`` unless it holds a manifest; wall seconds (0: reused)."""
    if (out / "manifest.json").is_file():
        return 0.0
    t0 = time.perf_counter()
    proc = traceviz("profile", str(workload), "--modes", args.modes, "--device", args.device,
                    "--timing-budget-s", str(args.timing_budget_s), "--no-stack",
                    "--out", str(out), "--force")
    if proc.returncode != 0:
        raise SystemExit(f"profile {workload.name} → {out} failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def own_vs_pair(run: Path) -> dict[str, float | None]:
    """The eager code's own-process number over its in-pair one, by median (own
    ``timing.median_ms`` / the paired blocks' median) and by floor (own ``timing.p10_ms`` /
    the fastest paired block); ``None`` without both."""
    modes = json.loads((run / "manifest.json").read_text())["modes"]
    own = modes.get("eager", {}).get("timing") or {}
    blocks = [p["baseline_block_ms"] for m, e in modes.items()
              if m != "eager" and isinstance(p := e.get("paired"), dict)
              and p.get("baseline") == "eager" and p.get("baseline_block_ms")]
    if not blocks or not own.get("median_ms"):
        return {"median": None, "floor": None}
    return {"median": own["median_ms"] / statistics.median(statistics.median(b) for b in blocks),
            "floor": own["p10_ms"] / statistics.median(min(b) for b in blocks)}


def evaluate(kind: str, a: Path, b: Path) -> dict[str, Any]:
    """``check B --against A``'s exit code and lines, the spreads, each mode's numbers."""
    from traceviz.analyze.verdicts import Thresholds
    from traceviz.report import run_compare_report

    proc = traceviz("check", str(b), "--against", str(a))
    result, _ = run_compare_report.build(a, b, Thresholds())
    used = result.spread
    return {
        "kind": kind, "a": a.name, "b": b.name, "exit": proc.returncode,
        "fail_lines": [ln for ln in proc.stdout.splitlines() if ln.startswith("FAIL")],
        "warn_lines": [ln for ln in proc.stdout.splitlines() if ln.startswith("WARN")],
        "spread": None if used is None else {"run": used[0], "value": used[1].value},
        "spread_a": None if result.spread_a is None else result.spread_a.as_dict(),
        "spread_b": None if result.spread_b is None else result.spread_b.as_dict(),
        "modes": {d.mode: None if d.speed is None else {
            "median_ms_a": d.speed.step_ms_a, "median_ms_b": d.speed.step_ms_b,
            "median_change": d.speed.change, "ci_slowdown": 1 / d.speed.speedup.high - 1,
            "floor_ms_a": d.floor_ms.a, "floor_ms_b": d.floor_ms.b,
            "floor_change": None if d.floor_ms.a is None or d.floor_ms.b is None
            else d.floor_ms.b / d.floor_ms.a - 1}
            for d in result.modes},
        "own_vs_pair": {"a": own_vs_pair(a), "b": own_vs_pair(b)},
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--slower", type=int, default=3)
    ap.add_argument("--runs", type=Path, default=Path("/tmp/gate-repeats-runs"))
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--timing-budget-s", type=float, default=2.0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.slower > args.pairs:
        raise SystemExit("--slower reuses the first identical pairs' A runs: at most --pairs")
    args.runs.mkdir(parents=True, exist_ok=True)
    walls = []
    jobs = [(f"same-{i:02d}", BEFORE, BEFORE) for i in range(args.pairs)]
    for name, before, after in jobs:
        walls.append(profile(before, args.runs / f"{name}-a", args))
        walls.append(profile(after, args.runs / f"{name}-b", args))
        print(f"{name}: {'recorded' if any(walls[-2:]) else 'reused'}", flush=True)
    for j in range(args.slower):
        walls.append(profile(AFTER, args.runs / f"slow-{j:02d}-b", args))
        print(f"slow-{j:02d}: {'recorded' if walls[-1] else 'reused'}", flush=True)
    pairs = [evaluate("identical", args.runs / f"{n}-a", args.runs / f"{n}-b")
             for n, _, _ in jobs]
    pairs += [evaluate("slower", args.runs / f"same-{j:02d}-a", args.runs / f"slow-{j:02d}-b")
              for j in range(args.slower)]
    created = [json.loads((run / "manifest.json").read_text())["created"]
               for run in sorted(args.runs.iterdir()) if (run / "manifest.json").is_file()]
    same = [p for p in pairs if p["kind"] == "identical"]
    slow = [p for p in pairs if p["kind"] == "slower"]
    spreads = [p["spread"]["value"] for p in pairs if p["spread"] is not None]
    ratios = {k: [r[k] for p in pairs for r in p["own_vs_pair"].values() if r[k] is not None]
              for k in ("median", "floor")}
    def value_range(mode: str, key: str) -> list[float] | None:
        """min and max of a mode's ``key`` (``floor_ms`` / ``median_ms``) over the identical
        pairs' runs."""
        vals = [v for p in same if p["modes"].get(mode)
                for v in (p["modes"][mode][f"{key}_a"], p["modes"][mode][f"{key}_b"])
                if v is not None]
        return [min(vals), max(vals)] if vals else None

    summary = {
        "identical_exit_0": sum(p["exit"] == 0 for p in same), "identical": len(same),
        # what a gate on the median CI alone (no floor, no spread) would have failed
        "identical_failed_by_ci_alone": sum(any(
            m is not None and m["ci_slowdown"] > 0.05 for m in p["modes"].values())
            for p in same),
        **{f"{mode}_{key}_range": value_range(mode, key) for mode in ("eager", "compile")
           for key in ("floor_ms", "median_ms")},
        "slower_exit_3": sum(p["exit"] == 3 for p in slow), "slower": len(slow),
        "spread_min": min(spreads, default=None), "spread_median":
            statistics.median(spreads) if spreads else None,
        "spread_max": max(spreads, default=None),
        **{f"own_vs_pair_{k}_{f.__name__}": f(v, default=None)
           for k, v in ratios.items() for f in (min, max)},
    }
    import torch

    doc = {
        "benchmark": "gate_repeats", "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "torch": torch.__version__},
        "settings": {"modes": args.modes, "device": args.device,
                     "timing_budget_s": args.timing_budget_s, "max_slowdown": 0.05,
                     "before": BEFORE.relative_to(ROOT).as_posix(),
                     "after": AFTER.relative_to(ROOT).as_posix()},
        "profile_wall_s": [round(w, 1) for w in walls if w],
        "recorded": [min(created), max(created)],
        "summary": summary, "pairs": pairs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

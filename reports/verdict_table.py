"""Print the README's table of the committed GPU runs: ``python reports/verdict_table.py``.

One row per mode of each single-process run directory under ``reports/`` (the baseline's row
first): the paired speed-up with its CI and the three verdicts, then the unprofiled split
(host issue ms per step, baseline → mode, and which side was host- or GPU-bound) and each
trace's profiler inflation (lean: the trace the verdicts read; stacked: the trace with Python
stacks; runs before manifest schema 3 had only the stacked one). Every number comes from
:func:`traceviz.report.compare_report.build`, as ``traceviz report`` computes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from traceviz.report.compare_report import build, load_run_dir

REPORTS = Path(__file__).resolve().parent
#: Run directories in the README's order (the others follow alphabetically).
ORDER = ("decode_loop", "tiny_transformer", "elementwise", "rmsnorm_residual", "kv_cache_static",
         "inplace_update", "gemm_mlp", "train_step", "branch", "kv_cache_dynamic")
HEADER = ("| workload | mode | speed-up (95 % CI) | speed | fusion | launch | host issue ms/step "
          "(eager → mode) | bound (eager / mode) | inflation lean / stacked |\n"
          "|---|---|--:|---|---|---|--:|---|--:|")


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def rows(run: Path) -> list[str]:
    """The table rows of one run directory."""
    inputs = load_run_dir(run)
    c, _ = build(inputs)
    manifest = inputs.manifest or {}
    # Before schema 3 the one profiled trace was recorded with stacks (unless --no-stack).
    old_stacked = manifest.get("schema", 0) < 3 and (manifest.get("settings") or {}).get(
        "with_stack", True)
    verdicts = {(v.mode, v.kind): v.status for v in c.verdicts}
    out = []
    for r in c.rows:
        infl = (f"– / {_x(r.inflation)}" if old_stacked
                else f"{_x(r.inflation)} / {_x(r.stack_inflation)}")
        if r.mode == c.baseline:
            out.append(f"| {run.name} | {r.mode} (baseline) | – | – | – | – | – | – | {infl} |")
            continue
        h = c.headline(r.mode)
        if h is None or h.speedup is None:
            out.append(f"| {run.name} | {r.mode} | {r.status} | – | – | – | – | – | {infl} |")
            continue
        ci = f" ({h.ci_low:.2f}–{h.ci_high:.2f})" if h.ci_low is not None else ""
        s = c.unprofiled.get(r.mode)
        issue = bound = "–"
        if s is not None:
            issue = f"{s.baseline.issue_ms:.3f} → {s.mode.issue_ms:.3f}"
            bound = (f"{'host' if s.baseline.host_bound else 'GPU'} / "
                     f"{'host' if s.mode.host_bound else 'GPU'}")
        out.append(f"| {run.name} | {r.mode} | {h.speedup:.2f}×{ci} | "
                   f"{verdicts[(r.mode, 'speed')]} | {verdicts[(r.mode, 'fusion')]} | "
                   f"{verdicts[(r.mode, 'launch')]} | {issue} | {bound} | {infl} |")
    return out


def runs() -> list[Path]:
    """Single-process run directories (``profile --nproc`` runs have rank traces instead)."""
    found = {p.parent.name: p.parent for p in REPORTS.glob("*/manifest.json")
             if not any(isinstance(e, dict) and e.get("ranks_summary")
                        for e in json.loads(p.read_text())["modes"].values())}
    return [found[n] for n in ORDER if n in found] + [found[n] for n in sorted(found)
                                                      if n not in ORDER]


def main() -> None:
    print(HEADER)
    for run in runs():
        print("\n".join(rows(run)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

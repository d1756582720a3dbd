"""The run directory and its ``manifest.json``.

Schema history: 2 added ``paired`` (per mode) and the settings ``timing_budget_s`` and
``with_stack``; 3 added the host issue times of every paired block
(``paired.baseline_issue_ms`` / ``paired.mode_issue_ms``), made the ``profiled`` trace the
lean one (no stacks, no shapes) and added ``stack_profiled`` (the stacked trace, when
``with_stack``: recorded in a second process until 2026-11-28, since then by the mode's own
process after its lean trace). Older manifests are still read (readers treat a missing key as
``null``; without issue times the verdicts keep the profiled-trace rules and say so).

A run directory holds ``manifest.json``, one ``<mode>.pt.trace.json.gz`` per mode that reached
its profiled run, ``logs/<mode>.log`` (the child's output) and, once written, the comparison
report. Schema (keys are stable; a value is ``null`` where it does not apply or was not reached)::

    {
      "schema": 3,
      "workload": {"path", "name", "description", "has_triton_step",
                   "sha256": hex digest of the workload file's bytes when the run started
                   (``profile --resume`` refuses a changed file)},
      "environment": {"python", "torch", "triton", "cuda", "cudnn", "cuda_available", "gpu",
                      "gpu_count", "driver", "hostname", "platform", "cpu_count"},
      "created": ISO-8601 UTC time the run started,
      "settings": {"device", "timeout_s", "warmup", "repeats", "min_repeat_ms", "max_iters",
                   "check_steps", "timing_budget_s", "with_stack",
                   "trace_schedule": {"wait", "warmup", "active"},
                   "adjacent_windows": unprofiled windows before each profiled one,
                   "warm_min_s": the minimum seconds of every warm-up (absent in older runs)},
      "modes": {
        "<mode>": {
          "status": "ok" | "failed" | "skipped" | "timeout" | "mismatch" | "crashed"
                    | "interrupted" | "pending",
                    -- crashed: the child was killed by a signal ("killed by SIGSEGV");
                    interrupted: the run was stopped (SIGINT / SIGTERM) before this mode
                    finished; pending: not reached yet (left so only when the parent itself
                    was killed outright); see :mod:`traceviz.collect.run_control`,
          "reason": why it is not ok (null when ok),
          "first_call_s": seconds of the first call (compile / capture included),
          "timing": {"median_ms", "p10_ms", "p90_ms", "repeats", "iters_per_repeat",
                     "noisy", "spread"}        -- per-step ms without the profiler,
          "paired": {"baseline", "order": "ABBA", "pairs", "baseline_block_ms": [...],
                     "mode_block_ms": [...], "baseline_issue_ms": [...],
                     "mode_issue_ms": [...] -- host issue ms per step of each block
                     (traceviz.collect.timing), "iters_baseline", "iters_mode", "speedup",
                     "ci_low", "ci_high", "level", "resamples", "seed", "half_width",
                     "stopped": "converged" | "budget" | "max_pairs", "budget_s",
                     "elapsed_s"}  -- the eager step timed in alternation with this mode in
                     the same process (traceviz.collect.paired); {"baseline", "error"} when
                     the baseline could not run; null for eager itself,
          "profiled": {"trace": file name in the run dir, "steps": ProfilerStep count,
                       "gpu_activities": kernel+memcpy+memset events, "step_ms": median
                       step ms under the profiler, "adjacent_unprofiled_ms": median step ms
                       of the same process's unprofiled windows just before the profiler
                       started, "inflation": step_ms / adjacent_unprofiled_ms (runs before
                       that field existed: step_ms / timing.median_ms), "statistic": "median
                       step" (absent before 2026-11-25: step_ms was the profiled window's
                       mean, adjacent_unprofiled_ms the median of the windows' means),
                       "step_intervals_ms": [...], "adjacent_intervals_ms": [...] -- the
                       step times the medians are of}
                       -- the lean trace (no stacks, no shapes): metrics and verdicts,
          "stack_profiled": the same keys for ``<mode>.stack.pt.trace.json.gz``, recorded
                       with Python stacks (host-wait sources only), plus "status" ("ok" |
                       "failed" | "timeout"), "reason" and "log" (the mode's own log) --
                       recorded by the mode's own process last, in its phase "stacks" (its seconds:
                       ``phase_s["stacks"]``), after every measurement above was written, so
                       a recording that raises, dies or times out fails only this record
                       (the mode keeps its status); ``step_ms`` and
                       ``adjacent_unprofiled_ms`` are defined as the lean trace's, after a
                       warm-up of ``warmup`` steps and at least ``warm_min_s`` (the lean
                       trace's export idled the GPU), but both are now measured in a process
                       that has had a profiler session: on CUDA, Kineto leaves CUPTI attached
                       after it (pytorch/pytorch#144455), which can slow the unprofiled
                       launches too, so its inflation is over that process's unprofiled step,
                       not a fresh one's; "failed" too when a CUDA trace holds no GPU
                       activity. Runs before 2026-11-28 recorded it in a second process
                       (load, build, the same warm-up) with its own "wall_s", "phase_s" and
                       "log" (``logs/<mode>.stack.log``); null or absent with --no-stack,
                       for a mode that did not run to the end, and for --nproc modes,
          "correctness": {"ok", "max_abs_err", "max_rel_err", "rtol", "atol", "detail"},
          "compile": {"graphs", "frames_traced", "graph_breaks", "break_reasons",
                      "recompiles", "recompiled_functions", "recompile_reasons",
                      "cudagraph_skips": [...], "cudagraph_skips_counted",
                      "fxgraph_cache_hits", "fxgraph_cache_misses"}   -- compile modes only,
          "peak_mem_bytes": peak allocated GPU memory (CUDA only),
          "analysis_summary": {"steps", "kernels_per_step", "launches_per_step",
                               "graph_launches_per_step", ...} or {"error": ...},
          "wall_s": seconds the child process ran (its stacked trace included),
          "phase_s": seconds per phase of the child ({"start", "loading", ..., "stacks"}),
          "log": "logs/<mode>.log"
        }
      },
      "report": path of the comparison report in the run dir, or null,
      "resumed": [{"at": ISO-8601 UTC time, "modes": [modes run again]}, ...]
                 -- one item per ``profile --resume`` (absent if never resumed)
    }
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from traceviz.atomic import write_text_atomic

SCHEMA_VERSION = 3
MANIFEST_NAME = "manifest.json"

#: Every mode entry has these keys.
MODE_KEYS = (
    "status",
    "reason",
    "first_call_s",
    "timing",
    "paired",
    "profiled",
    "stack_profiled",
    "correctness",
    "compile",
    "peak_mem_bytes",
    "analysis_summary",
    "wall_s",
    "log",
)


class RunDirError(ValueError):
    """The output directory exists and may not be overwritten."""


def utc_now() -> datetime:
    """The current UTC time."""
    return datetime.now(timezone.utc)


def default_run_dir(workload_name: str, started: datetime, root: Path = Path("runs")) -> Path:
    """``runs/<workload>-<YYYYmmdd-HHMMSS>``."""
    return root / f"{workload_name}-{started.strftime('%Y%m%d-%H%M%S')}"


def mode_entry(**values: Any) -> dict[str, Any]:
    """A mode entry with every key of :data:`MODE_KEYS`, ``None`` where not given."""
    unknown = set(values) - set(MODE_KEYS)
    entry = {key: values.get(key) for key in MODE_KEYS}
    entry.update({key: values[key] for key in sorted(unknown)})
    return entry


def new_manifest(
    probe: dict[str, Any], settings: dict[str, Any], started: datetime
) -> dict[str, Any]:
    """The manifest before any mode ran."""
    return {
        "schema": SCHEMA_VERSION,
        "workload": probe["workload"],
        "environment": probe["environment"],
        "created": started.isoformat(timespec="seconds"),
        "settings": settings,
        "modes": {},
        "report": None,
    }


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` atomically; return its path."""
    return write_text_atomic(
        run_dir / MANIFEST_NAME, json.dumps(manifest, indent=2, default=str) + "\n"
    )


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """Read ``manifest.json`` from a run directory."""
    return json.loads((run_dir / MANIFEST_NAME).read_text(encoding="utf-8"))

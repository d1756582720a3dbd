"""Small run directories (manifest + hand-built Kineto traces) whose verdicts are known.

``write_run_dir`` writes ``manifest.json`` in the schema of :mod:`traceviz.collect.manifest` and
one ``<mode>.pt.trace.json.gz`` per mode that "ran". All trace times are integer ns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.kineto import TraceBuilder

STEPS = 4


@dataclass(frozen=True)
class ModeSpec:
    """One mode: the kernels of a step (name, duration ns) and how they are launched."""

    kernels: tuple[tuple[str, int], ...]
    launch_every_ns: int = 15_000  # CPU time between launch calls
    graph: bool = False  # one cudaGraphLaunch replays all kernels
    median_ms: float | None = None
    spread_ms: float = 0.01
    correct: bool | None = True
    status: str = "ok"
    reason: str | None = None
    compile: dict[str, Any] | None = None
    paired: dict[str, Any] | None = None  # the schema-2 ``paired`` block (see :func:`paired`)
    extra: dict[str, Any] = field(default_factory=dict)


def mode_trace(spec: ModeSpec) -> TraceBuilder:
    """``STEPS`` steps; each launches ``spec.kernels`` (or one graph replaying them)."""
    b = TraceBuilder()
    gpu_ns = sum(d for _, d in spec.kernels)
    if spec.graph:
        step_ns = 10_000 + gpu_ns + 500 * len(spec.kernels) + 20_000
    else:  # the step ends (synchronises) when both the CPU and the GPU are done, + 20 µs
        step_ns = max(len(spec.kernels) * spec.launch_every_ns, 5_000 + gpu_ns) + 20_000
    for n in range(STEPS):
        s = n * step_ns
        b.step(n + 1, s, step_ns)
        if spec.graph:
            corr = b.launch(s + 1_000, 5_000, name="cudaGraphLaunch")
            t = s + 10_000
            for name, dur in spec.kernels:
                b.gpu(corr, t, dur, name=name)
                t += dur + 500
            continue
        prev_end = 0
        for i, (name, dur) in enumerate(spec.kernels):
            launch_ts = s + 1_000 + i * spec.launch_every_ns
            start = max(launch_ts + 5_000, prev_end)
            b.kernel(launch_ts=launch_ts, ts=start, dur=dur, name=name, launch_dur=2_000)
            prev_end = start + dur
    return b


def _entry(mode: str, spec: ModeSpec) -> dict[str, Any]:
    ran = spec.status == "ok"
    timing = None
    if ran and spec.median_ms is not None:
        timing = {"median_ms": spec.median_ms, "p10_ms": spec.median_ms - spec.spread_ms / 2,
                  "p90_ms": spec.median_ms + spec.spread_ms / 2, "repeats": 20,
                  "iters_per_repeat": 10, "noisy": False, "spread": spec.spread_ms}
    return {
        "status": spec.status,
        "reason": spec.reason,
        "first_call_s": 0.5 if ran else None,
        "timing": timing,
        "profiled": {"trace": f"{mode}.pt.trace.json.gz", "steps": STEPS} if ran else None,
        "correctness": None if spec.correct is None else {"ok": spec.correct,
                                                          "max_abs_err": 0.0},
        "compile": spec.compile,
        "peak_mem_bytes": 64 * 2**20 if ran else None,
        **({"paired": spec.paired} if spec.paired is not None else {}),
        **spec.extra,
    }


def paired(speedup: float, ci_low: float, ci_high: float, pairs: int = 23,
           baseline: str = "eager") -> dict[str, Any]:
    """A schema-2 ``paired`` block whose block times give the estimate asked for: mode blocks
    of 1 ms and baseline blocks of ``ci_low``, ``speedup`` and ``ci_high`` ms (as many low as
    high, the median ``speedup``), so the bootstrap's tails land on the bounds exactly
    (``pairs >= 3``). The estimate is recorded as the runner records it, from the blocks (the
    manifest check recomputes it)."""
    from traceviz.analyze.stats import paired_speedup

    low = (pairs - 1) // 2 if pairs % 2 else pairs // 2 - 1
    base = [ci_low] * low + [speedup] * (pairs - 2 * low) + [ci_high] * low
    mode = [1.0] * pairs
    return {
        "baseline": baseline, "order": "ABBA", "pairs": pairs,
        "baseline_block_ms": base, "mode_block_ms": mode,
        "iters_baseline": 40, "iters_mode": 100, **paired_speedup(base, mode).as_dict(),
        "stopped": "converged", "budget_s": 30.0, "elapsed_s": 12.3,
    }


def paired_split(base_ms: list[float], mode_ms: list[float], base_issue_ms: list[float],
                 mode_issue_ms: list[float], iters: int = 100,
                 baseline: str = "eager") -> dict[str, Any]:
    """A schema-3 ``paired`` block: the given block periods and host issue times (ms per step)
    with the speed-up estimate computed from them."""
    from traceviz.analyze.stats import paired_speedup

    est = paired_speedup(base_ms, mode_ms)
    return {
        "baseline": baseline, "order": "ABBA", "pairs": len(base_ms),
        "baseline_block_ms": base_ms, "mode_block_ms": mode_ms,
        "baseline_issue_ms": base_issue_ms, "mode_issue_ms": mode_issue_ms,
        "iters_baseline": iters, "iters_mode": iters, **est.as_dict(),
        "stopped": "converged", "budget_s": 30.0, "elapsed_s": 5.0,
    }


def write_run_dir(root: Path, modes: dict[str, ModeSpec], name: str = "synthetic") -> Path:
    """A run directory with a manifest and one gzipped trace per mode that ran."""
    root.mkdir(parents=True, exist_ok=True)
    for mode, spec in modes.items():
        if spec.status == "ok":
            mode_trace(spec).write(root / f"{mode}.pt.trace.json.gz", gzipped=True)
    manifest = {
        "schema": _schema(modes),
        "workload": {"path": f"workloads/{name}.py", "name": name,
                     "description": "hand-built test workload"},
        "environment": {"gpu": "Test GPU", "torch": "2.9.0"},
        "created": "2026-01-01T00:00:00Z",
        "modes": {m: _entry(m, s) for m, s in modes.items()},
        "report": None,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return root


def _schema(modes: dict[str, ModeSpec]) -> int:
    blocks = [s.paired for s in modes.values() if s.paired is not None]
    if any("baseline_issue_ms" in b for b in blocks):
        return 3
    return 2 if blocks else 1


EAGER = ModeSpec(kernels=tuple((f"elementwise_kernel_{i}", 10_000) for i in range(20)),
                 median_ms=0.50)
#: 5 fused Triton kernels doing the work of 20: fewer kernels, less busy time, fewer launches.
COMPILED = ModeSpec(
    kernels=tuple((f"triton_poi_fused_add_mul_{i}", 30_000) for i in range(5)),
    launch_every_ns=15_000, median_ms=0.25,
    compile={"graphs": 1, "graph_breaks": 0, "break_reasons": [], "recompiles": 0,
             "cudagraph_skips": []},
)
#: Same 5 kernels replayed by one CUDA graph per step.
CUDAGRAPH = ModeSpec(kernels=COMPILED.kernels, graph=True, median_ms=0.18,
                     compile={"graphs": 1, "graph_breaks": 0, "break_reasons": [],
                              "recompiles": 0, "cudagraph_skips": []})
FAILED = ModeSpec(kernels=(), status="failed", reason="RuntimeError: CUDA out of memory",
                  correct=None)


def standard_run(root: Path) -> Path:
    """eager, compile (fusion + launch WIN), cudagraph (launch WIN), broken (failed)."""
    return write_run_dir(root, {"eager": EAGER, "compile": COMPILED, "cudagraph": CUDAGRAPH,
                                "broken": FAILED})


#: GEMM-bound: three long GEMMs per step; compiling changes nothing.
GEMM_EAGER = ModeSpec(kernels=tuple((f"sm90_xmma_gemm_bf16_{i}", 500_000) for i in range(3)),
                      launch_every_ns=5_000, median_ms=1.51, spread_ms=0.02)
GEMM_COMPILED = ModeSpec(kernels=GEMM_EAGER.kernels, launch_every_ns=5_000, median_ms=1.50,
                         spread_ms=0.02,
                         compile={"graphs": 1, "graph_breaks": 0, "break_reasons": [],
                                  "recompiles": 0,
                                  "cudagraph_skips": ["skipping cudagraphs due to mutated inputs"]})


def gemm_run(root: Path) -> Path:
    return write_run_dir(root, {"eager": GEMM_EAGER, "compile": GEMM_COMPILED}, name="gemm")

"""The files an adversarial case starts from: traces, run directories, rank directories, a web
project, special files. Every builder writes under the folder it is given and nowhere else.

Traces come from :mod:`tests.kineto` (``TraceBuilder``) and run directories from
:mod:`tests.synthetic_runs`; both are importable from the repository root. All times are
integer nanoseconds.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path
from typing import Any

from tests.kineto import TraceBuilder
from tests.synthetic_runs import (
    COMPILED,
    EAGER,
    ModeSpec,
    mode_trace,
    paired,
    standard_run,
    write_run_dir,
)

#: The estimate recorded in :func:`paired_run` (speed-up, 95 % CI low, high) — issue 37's.
PAIRED_ESTIMATE = (1.22, 1.19, 1.23)
#: A threshold name every command accepts, and a valid value for it.
THRESHOLD_NAME, THRESHOLD_VALUE = "min_speedup", 0.05
#: ``mknod`` numbers of the character device ``/dev/null`` (1, 3): the copy made in a case
#: folder behaves like it; the real ``/dev/null`` is never used as an output.
NULL_DEVICE = (1, 3)
#: A small torch workload for ``profile`` (a few hundred floats: seconds on a CPU).
TINY_WORKLOAD = '''"""Tiny CPU workload for the adversarial campaign."""
import torch

DESCRIPTION = "a few pointwise ops over 256 floats"


def make_inputs(device):
    return (torch.randn(256, device=device),)


def step(x):
    return torch.sigmoid(x * 2.0) + x
'''


def trace(path: Path, gz: bool = True, spec: ModeSpec = EAGER) -> Path:
    """A good single-process trace: 4 ``ProfilerStep`` s launching ``spec``'s kernels."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return mode_trace(spec).write(path, gzipped=gz)


def compiled_trace(path: Path, gz: bool = True) -> Path:
    """The fused counterpart of :func:`trace` (5 Triton kernels a step)."""
    return trace(path, gz, COMPILED)


def run_dir(path: Path) -> Path:
    """:func:`tests.synthetic_runs.standard_run`: eager, compile, cudagraph, broken."""
    return standard_run(path)


def paired_run(path: Path) -> Path:
    """eager and compile, compile with a schema-2 ``paired`` block whose recorded estimate is
    :data:`PAIRED_ESTIMATE` (block times consistent with it)."""
    spec = ModeSpec(kernels=COMPILED.kernels, median_ms=0.41, compile=COMPILED.compile,
                    paired=paired(*PAIRED_ESTIMATE))
    return write_run_dir(path, {"eager": EAGER, "compile": spec}, name="paired")


def renamed_trace_run(path: Path, outside: Path) -> tuple[Path, Path, Path]:
    """A run directory whose manifest names traces outside the ``*.pt.trace.json*`` pattern:
    compile's as ``compile-lean.json`` in the run directory, cudagraph's as a ``../`` path to
    ``outside``. Returns (run dir, the in-dir renamed trace, the outside trace)."""
    run_dir(path)
    inside = path / "compile-lean.json"
    inside.write_bytes(gzip.decompress((path / "compile.pt.trace.json.gz").read_bytes()))
    (path / "compile.pt.trace.json.gz").unlink()
    outside.parent.mkdir(parents=True, exist_ok=True)
    (path / "cudagraph.pt.trace.json.gz").replace(outside)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["modes"]["compile"]["profiled"]["trace"] = inside.name
    manifest["modes"]["cudagraph"]["profiled"]["trace"] = os.path.relpath(outside, path)
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return path, inside, outside


def rank_dir(path: Path, ranks: int = 2) -> list[Path]:
    """A directory of rank traces named as HTA's corpus names them
    (``a100_eager_nccl_rank<r>.json.gz``: not ``*.pt.trace.json*``)."""
    path.mkdir(parents=True, exist_ok=True)
    out = []
    for r in range(ranks):
        b = mode_trace(EAGER)
        b.distributed(r, ranks, hostname="node0")
        out.append(b.write(path / f"a100_eager_nccl_rank{r}.json.gz", gzipped=True))
    return out


def web_project(path: Path) -> Path:
    """A folder that is not a traceviz run but holds a file called ``manifest.json``."""
    (path / "src").mkdir(parents=True, exist_ok=True)
    (path / "index.html").write_text("<!doctype html><title>app</title><script src=src/app.js>"
                                     "</script>\n")
    (path / "src" / "app.js").write_text("console.log('hello');\n")
    (path / "manifest.json").write_text(json.dumps({"name": "app", "start_url": "/",
                                                    "display": "standalone"}))
    return path


def thresholds_file(path: Path) -> Path:
    """A valid TOML thresholds file."""
    path.write_text(f"[thresholds]\n{THRESHOLD_NAME} = {THRESHOLD_VALUE}\n")
    return path


def workload(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TINY_WORKLOAD)
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def null_device(path: Path) -> Path | None:
    """A character device like ``/dev/null`` at ``path`` (needs CAP_MKNOD; None without)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*NULL_DEVICE))
    except PermissionError:  # not root, or no CAP_MKNOD (containers)
        return None
    return path


def user_file(path: Path, text: str = "my notes: do not lose\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- hostile trace documents ------------------------------------------------------------------


def good_document() -> dict[str, Any]:
    """The document :func:`trace` writes, as a dict to tamper with."""
    return mode_trace(EAGER).document()


def named_trace(cpu_name: str, kernel_name: str) -> TraceBuilder:
    """2 steps; each a CPU op called ``cpu_name`` around three launches of ``kernel_name``,
    with the GPU idle between them (so the op is a host-wait source)."""
    b = TraceBuilder()
    step_ns = 200_000
    for n in range(2):
        s = n * step_ns
        b.step(n + 1, s, step_ns)
        b.cpu_op(cpu_name, s + 1_000, 150_000)
        for i in range(3):
            b.kernel(launch_ts=s + 2_000 + i * 40_000, ts=s + 10_000 + i * 40_000, dur=5_000,
                     name=kernel_name)
    return b


def begin_end_steps(steps: int, paired_ends: bool = True) -> TraceBuilder:
    """``steps`` ``ProfilerStep#n`` spans as ``B``/``E`` events (the last ``E`` dropped when
    ``paired_ends`` is false) around one kernel launch each."""
    b = TraceBuilder()
    step_ns = 100_000
    for n in range(steps):
        s = n * step_ns
        b.events.append({"ph": "B", "cat": "user_annotation", "name": f"ProfilerStep#{n + 1}",
                         "pid": 100, "tid": 100, "ts": s / 1000})
        b.kernel(launch_ts=s + 2_000, ts=s + 10_000, dur=20_000, name="k")
        if paired_ends or n < steps - 1:
            b.events.append({"ph": "E", "cat": "user_annotation",
                             "name": f"ProfilerStep#{n + 1}", "pid": 100, "tid": 100,
                             "ts": (s + step_ns - 1_000) / 1000})
    return b


def deep_nesting(depth: int, launches: int) -> TraceBuilder:
    """One step holding ``depth`` CPU ops nested one inside the other, the innermost launching
    ``launches`` kernels with GPU gaps between them."""
    b = TraceBuilder()
    span = 10_000 * (launches + 2) + 2 * depth
    b.step(1, 0, span + 10 * depth)
    for d in range(depth):
        b.cpu_op(f"aten::op_{d}", 1 + d, span + 2 * (depth - d))
    for i in range(launches):
        t = 2 * depth + 1_000 + i * 10_000
        b.kernel(launch_ts=t, ts=t + 3_000, dur=2_000, name=f"k{i % 7}")
    return b


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path

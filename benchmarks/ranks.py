"""Many rank traces: the local pool against ``--dask local``, at several worker counts.

``python -m benchmarks.run --ranks 64 --rank-size 50MB [--workers 1,2,4,8,16]`` (this module
does the work) generates ``--ranks`` rank traces from a real two-rank run (the committed H200
``reports/ddp_mlp_straggler/`` eager traces, else ``reports/ddp_mlp/``), then for each worker
count runs ``traceviz report DIR --format json`` with ``--workers N`` (the local pool; ``1`` is
the in-process path) and with ``--dask local --workers N``, each in a fresh child process, and
records wall time, GB/s (JSON bytes of all ranks / wall), the parent's peak RSS, the largest
worker's peak RSS and the peak summed RSS of all the parent's descendants (sampled every
50 ms), and whether every JSON output is byte-identical.

**Rank r** is a copy of source rank ``r % 2`` (rank 1 of the source run is host-bound: its
host sleeps 3 ms per step), with ``distributedInfo`` rewritten (rank r, world size N, one
process group of all N ranks), on host ``node{r // G}`` (G = 8 ranks per host from 16 ranks
on, else 2, so there are always several hosts and clocks are aligned on collective ends), the
clock of host k skewed by ``k × 1.000003 ms`` (``baseTimeNanoseconds``; ranks of one host share
their clock) and
every NCCL kernel of it starting ``(37 r mod 61) µs`` later with its end unchanged (a later
arrival: per-rank lateness, so one odd rank is the straggler), then its steps replicated
(:func:`benchmarks.generate.replicate`) to ``--rank-size`` of JSON; every rank gets the same
number of copies (that of rank 0), so all ranks share their step numbers.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import psutil

from benchmarks.generate import (
    DATA_DIR,
    GENERATOR_VERSION,
    REPO,
    _fmt_us,
    _to_ns,
    load_source,
    replicate,
    size_label,
)

#: Bump when the rank traces this module writes change.
RANKS_VERSION = 2
SOURCE_RUNS = (REPO / "reports" / "ddp_mlp_straggler", REPO / "reports" / "ddp_mlp")
SKEW_NS = 1_000_003
SAMPLE_S = 0.05
MIB = 1024 * 1024


def source_ranks() -> tuple[Path, Path]:
    """The eager rank-0 and rank-1 traces of the first committed two-rank run found."""
    for run in SOURCE_RUNS:
        pair = (run / "eager.rank0.pt.trace.json.gz", run / "eager.rank1.pt.trace.json.gz")
        if all(p.exists() for p in pair):
            return pair
    raise FileNotFoundError(f"no two-rank source run in {[str(r) for r in SOURCE_RUNS]}")


def arrival_delay_ns(rank: int) -> int:
    return (37 * rank % 61) * 1000


def ranks_per_host(world: int) -> int:
    return 8 if world >= 16 else 2


def rank_source(src: Path, rank: int, world: int, out: Path) -> Path:
    """Write source ``src`` as rank ``rank`` of ``world`` (see the module docstring)."""
    host = rank // ranks_per_host(world)
    doc = load_source(src)
    dist = doc["distributedInfo"]
    dist["rank"], dist["world_size"] = rank, world
    for pg in dist.get("pg_config") or ():
        pg["ranks"], pg["pg_size"] = list(range(world)), world
    dist["pg_count"] = len(dist.get("pg_config") or ())
    stamp = doc.get("traceviz")
    if isinstance(stamp, dict):
        stamp.update(rank=rank, world_size=world, hostname=f"node{host}")
    doc["baseTimeNanoseconds"] = int(doc["baseTimeNanoseconds"]) + host * SKEW_NS
    delay = arrival_delay_ns(rank)
    for ev in doc["traceEvents"]:
        if (ev.get("cat") == "kernel" and "nccl" in str(ev.get("name", "")).lower()
                and delay):
            ts, ts_int = _to_ns(ev["ts"])
            dur, dur_int = _to_ns(ev["dur"])
            shift = min(delay, dur - 1000)
            ev["ts"], ev["dur"] = _fmt_us(ts + shift, ts_int), _fmt_us(dur - shift, dur_int)
    out.write_bytes(msgspec.json.encode(doc))
    return out


def generate_ranks(n: int, rank_bytes: int, folder: Path | None = None,
                   log: Any = print) -> tuple[Path, dict[str, Any]]:
    """``n`` rank traces of about ``rank_bytes`` each in ``folder`` (cached: regenerated only
    when the sources, the sizes or the generator changed); returns the folder and its plan."""
    sources = source_ranks()
    folder = folder or DATA_DIR / f"ranks-{n}x{size_label(rank_bytes)}"
    plan = {"ranks_version": RANKS_VERSION, "generator_version": GENERATOR_VERSION,
            "sources": [str(s) for s in sources],
            "sources_sha256": [hashlib.sha256(s.read_bytes()).hexdigest() for s in sources],
            "ranks": n, "rank_bytes": rank_bytes}
    side = folder.with_name(folder.name + ".meta.json")  # beside: the folder holds only ranks
    files = [folder / f"bench.rank{r}.json" for r in range(n)]
    if side.exists() and all(f.exists() for f in files):
        old = json.loads(side.read_text())
        if {k: old.get(k) for k in plan} == plan:
            return folder, old
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.json"):
        stale.unlink()
    t0 = time.perf_counter()
    copies = None
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(n):
            src = rank_source(sources[r % 2], r, n, Path(tmp) / f"src.rank{r}.json")
            gen = replicate(src, files[r], copies=copies,
                            target_bytes=None if copies else rank_bytes)
            copies = gen.copies
            src.unlink()
    total = sum(f.stat().st_size for f in files)
    plan.update(copies=copies, total_bytes=total, seconds=time.perf_counter() - t0)
    side.write_text(json.dumps(plan, indent=1) + "\n")
    log(f"generated {n} rank traces of {total / n / 1e6:.1f} MB ({copies} copies of the "
        f"source steps) in {folder} in {plan['seconds']:.1f} s")
    return folder, plan


def measure_report(args: list[str], out: Path) -> dict[str, Any]:
    """Run ``traceviz report …`` as a child; wall, parent and worker peak RSS, output hash."""
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "traceviz", "report", *args, "--format", "json", "-o",
           str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    ps = psutil.Process(proc.pid)
    peaks = {"parent": 0.0, "worker": 0.0, "descendants": 0.0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(SAMPLE_S):
            try:
                parent = ps.memory_info().rss
                kids = ps.children(recursive=True)
            except psutil.Error:
                continue
            rss = []
            for k in kids:
                try:
                    rss.append(k.memory_info().rss)
                except psutil.Error:
                    continue
            peaks["parent"] = max(peaks["parent"], parent)
            peaks["worker"] = max(peaks["worker"], max(rss, default=0))
            peaks["descendants"] = max(peaks["descendants"], sum(rss))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    data = out.read_bytes() if out.exists() else b""
    return {"wall_s": wall, "rc": proc.returncode,
            "parent_peak_rss_mib": peaks["parent"] / MIB,
            "worker_peak_rss_mib": peaks["worker"] / MIB,
            "descendants_peak_rss_mib": peaks["descendants"] / MIB,
            "output_sha256": hashlib.sha256(data).hexdigest(), "output_bytes": len(data),
            "stderr_tail": stderr[-1500:]}


def run_ranks(n: int, rank_bytes: int, worker_counts: list[int], with_dask: bool,
              log: Any = print) -> dict[str, Any]:
    """Generate the ranks and time every (engine, workers) pair; see the module docstring."""
    folder, plan = generate_ranks(n, rank_bytes, log=log)
    total = plan["total_bytes"]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in worker_counts:
            engines = [("pool", ["--workers", str(w)])]
            if with_dask:
                engines.append(("dask-local", ["--dask", "local", "--workers", str(w)]))
            for engine, extra in engines:
                m = measure_report([str(folder), *extra], Path(tmp) / f"{engine}-{w}.json")
                m.update(engine=engine if not (engine == "pool" and w == 1) else "in-process",
                         workers=w, gb_per_s=total / 1e9 / m["wall_s"])
                runs.append(m)
                log(f"  {m['engine']:>10} workers {w:>2}: {m['wall_s']:7.2f} s, "
                    f"{m['gb_per_s']:.3f} GB/s, parent {m['parent_peak_rss_mib']:.0f} MiB, "
                    f"largest worker {m['worker_peak_rss_mib']:.0f} MiB, rc {m['rc']}")
    hashes = {m["output_sha256"] for m in runs}
    return {"plan": plan, "folder": str(folder), "runs": runs,
            "identical_json": len(hashes) == 1 and all(m["rc"] == 0 for m in runs)}


def format_ranks(doc: dict[str, Any]) -> str:
    """Markdown table of a ranks benchmark."""
    plan = doc["plan"]
    lines = [f"{plan['ranks']} ranks × {plan['total_bytes'] / plan['ranks'] / 1e6:.1f} MB "
             f"({plan['total_bytes'] / 1e9:.2f} GB of JSON); all JSON outputs byte-identical: "
             f"{'yes' if doc['identical_json'] else 'NO'}", "",
             "| engine | workers | wall s | GB/s | parent peak RSS MiB | largest worker "
             "peak RSS MiB | all descendants peak RSS MiB |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    for m in doc["runs"]:
        lines.append(f"| {m['engine']} | {m['workers']} | {m['wall_s']:.2f} | "
                     f"{m['gb_per_s']:.3f} | {m['parent_peak_rss_mib']:.0f} | "
                     f"{m['worker_peak_rss_mib']:.0f} | {m['descendants_peak_rss_mib']:.0f} |")
    return "\n".join(lines)

"""How `traceviz report` on one big trace scales with the loader's ``--workers`` (issue 11).

    python -m benchmarks.workers --trace big.json --workers 1,2,4,8,16 --repeat 3 [--against DIR]

Each run is a fresh ``python -m traceviz report TRACE --format json --workers N`` child; the
worker counts are interleaved round by round (the order rotates each round) so drift on the
machine hits every count alike. Timed runs are left alone; memory is measured in one more run
per count, whose process tree is sampled every ``--sample-ms``: the sum of RSS (counts pages
shared by forked workers once per process, an over-estimate) and the sum of PSS (each shared
page split between its sharers: the tree's real footprint). Reading PSS walks each process's
page tables under its memory lock, which slows the measured processes — hence the separate
runs. The JSON outputs of all runs must be byte-identical (checked, recorded). ``--against
DIR`` times another version too (the ``traceviz`` package in DIR, e.g. a ``git worktree`` of
the previous release), each of its runs next to one of this version's at the same count.

Writes ``benchmarks/results/<date>-workers-<host>.json`` (or ``--out``) and prints a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil

from benchmarks.run import tree_memory

RESULTS = Path(__file__).parent / "results"


def run_once(trace: Path, workers: int, out: Path, sample_s: float | None,
             tree: Path | None = None) -> dict[str, float]:
    """One ``report --format json`` child: wall seconds and (when ``sample_s`` is given) peak
    tree RSS / PSS bytes. ``tree``: run the ``traceviz`` package in that directory instead
    (``python -m`` puts the working directory first on the import path)."""
    cmd = [sys.executable, "-m", "traceviz", "report", str(trace.resolve()), "--format", "json",
           "-o", str(out), "--force", "--workers", str(workers)]
    env = None
    if tree is not None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(tree.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tree,
                            env=env)
    peak_rss = peak_pss = 0.0
    if sample_s is not None:
        ps = psutil.Process(proc.pid)
        while proc.poll() is None:
            pss, rss = tree_memory(ps, with_pss=True)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            time.sleep(sample_s)
    proc.wait()
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()}")
    return {"wall_s": wall, "peak_tree_rss_bytes": int(peak_rss),
            "peak_tree_pss_bytes": int(peak_pss)}


def measure(trace: Path, counts: list[int], repeat: int, sample_s: float,
            against: Path | None = None) -> dict:
    """Interleaved runs of every worker count; per count the runs, medians and output hash.
    With ``against`` (a directory holding another version's ``traceviz`` package), that
    version runs right before or after each timed run too (alternating), so the two are
    compared under the same drift."""
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
    base_runs: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
    memory: dict[int, dict[str, float]] = {}
    digests: dict[int, set[str]] = {n: set() for n in counts}
    base_digests: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeat + 1):  # the last round measures memory
            order = counts[r % len(counts):] + counts[: r % len(counts)]
            for n in order:
                out = Path(tmp) / f"w{n}.json"
                if r == repeat:
                    memory[n] = run_once(trace, n, out, sample_s)
                    digests[n].add(hashlib.sha256(out.read_bytes()).hexdigest())
                    print(f"  memory run workers {n:>2}: {memory[n]['wall_s']:.2f} s",
                          file=sys.stderr)
                    continue
                trees = [None] if against is None else [None, against][:: 1 - 2 * (r % 2)]
                for tree in trees:
                    got = run_once(trace, n, out, None, tree)
                    digest = hashlib.sha256(out.read_bytes()).hexdigest()
                    (runs if tree is None else base_runs)[n].append(got)
                    (digests[n] if tree is None else base_digests).add(digest)
                    who = "" if tree is None else " (against)"
                    print(f"  round {r + 1}/{repeat} workers {n:>2}{who}: {got['wall_s']:.2f} s",
                          file=sys.stderr)
    size = trace.stat().st_size
    base = statistics.median(x["wall_s"] for x in runs[counts[0]])
    rows = []
    for n in counts:
        wall = statistics.median(x["wall_s"] for x in runs[n])
        pss = memory[n]["peak_tree_pss_bytes"]
        rss = memory[n]["peak_tree_rss_bytes"]
        row = {"workers": n, "wall_s_median": round(wall, 3),
               "wall_s": [round(x["wall_s"], 3) for x in runs[n]],
               f"speedup_vs_{counts[0]}": round(base / wall, 2),
               "peak_tree_pss_bytes": pss, "peak_tree_rss_bytes": rss,
               "memory_run_wall_s": round(memory[n]["wall_s"], 3),
               "peak_pss_over_file": round(pss / size, 2),
               "output_sha256": sorted(digests[n])}
        if against is not None:
            against_wall = statistics.median(x["wall_s"] for x in base_runs[n])
            row |= {"against_wall_s_median": round(against_wall, 3),
                    "against_wall_s": [round(x["wall_s"], 3) for x in base_runs[n]],
                    "speedup_vs_against": round(against_wall / wall, 2)}
        rows.append(row)
    identical = len({d for n in counts for d in digests[n]}) == 1
    result = {"trace": str(trace), "trace_bytes": size, "repeat": repeat, "rows": rows,
              "outputs_identical": identical}
    if against is not None:
        result |= {"against": str(against),
                   "against_outputs_identical": base_digests <= digests[counts[0]]}
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", type=Path, required=True, help="the trace to report on")
    ap.add_argument("--workers", default="1,2,4,8,16", help="comma-separated worker counts")
    ap.add_argument("--repeat", type=int, default=3, help="runs per worker count (median)")
    ap.add_argument("--sample-ms", type=float, default=50.0,
                    help="memory sampling period of the memory runs")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="also time the traceviz package in DIR (another version's checkout, "
                         "e.g. a git worktree), interleaved with this one")
    ap.add_argument("-o", "--out", type=Path, help="results JSON")
    a = ap.parse_args(argv)
    counts = [int(x) for x in a.workers.split(",")]
    if a.against is not None and not (a.against / "traceviz" / "__init__.py").is_file():
        ap.error(f"--against {a.against}: no traceviz package there")
    uncompiled = _uncompiled(BYTECODE_PACKAGES)
    for name, where in uncompiled.items():
        print(f"warning: {name} has no bytecode: every run compiles it from source (pip install "
              f"writes it; PYTHONDONTWRITEBYTECODE forbids it): python -m compileall {where}")
    result = measure(a.trace, counts, a.repeat, a.sample_ms / 1000, a.against)
    result["uncompiled_packages"] = sorted(uncompiled)
    result["machine"] = {"host": platform.node(), "cpus": os.cpu_count(),
                         "usable_cpus": len(os.sched_getaffinity(0)),
                         "cpu_model": _cpu_model(), "python": platform.python_version()}
    result["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    out = a.out or RESULTS / f"{datetime.now(UTC):%Y-%m-%d}-workers-{platform.node()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    size = result["trace_bytes"]
    print(f"{a.trace} ({size / 1e9:.2f} GB), {result['machine']['usable_cpus']} usable cores; "
          f"outputs identical: {result['outputs_identical']}")
    vs = a.against is not None
    print(f"{'workers':>7} {'median s':>9} {'speed-up':>8} {'peak PSS':>9} {'PSS/file':>8}"
          + (f" {'against s':>9} {'faster':>7}" if vs else ""))
    for row in result["rows"]:
        sp = row[f"speedup_vs_{counts[0]}"]
        print(f"{row['workers']:>7} {row['wall_s_median']:>9.2f} {sp:>7.2f}x "
              f"{row['peak_tree_pss_bytes'] / 1e9:>7.2f}GB {row['peak_pss_over_file']:>8.2f}"
              + (f" {row['against_wall_s_median']:>9.2f} {row['speedup_vs_against']:>6.2f}x"
                 if vs else ""))
    if vs:
        print(f"against {a.against}: outputs identical to this version's: "
              f"{result['against_outputs_identical']}")
    print(f"→ {out}")


#: Packages every run imports; one without bytecode is compiled from source at every start
#: (numpy alone: 0.25 s on the device VM, whose image ships it so), which no installed copy does.
BYTECODE_PACKAGES = ("numpy", "pandas", "msgspec", "typer", "click", "rich", "traceviz")


def _uncompiled(names: tuple[str, ...]) -> dict[str, str]:
    """The packages among ``names`` whose ``__init__`` has no cached bytecode, and their
    directories (found without importing them)."""
    import importlib.util

    out = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(".py") and not os.path.exists(
                importlib.util.cache_from_source(origin)):
            out[name] = os.path.dirname(origin)
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()

"""``traceviz report`` on a trace of very many tiny profiler steps (issue 23, "bounded reports").

``python -m benchmarks.many_steps [--steps N] [--max-step-rows N] [--workers N] [--keep]``
writes a synthetic Kineto trace of ``N`` steps (default 10⁶) to
``benchmarks/data/many-steps-N.json`` (git-ignored), runs ``traceviz report TRACE --format
json`` on it in a fresh child process and records the wall time, the memory (``wait4`` max RSS
of the command; the process tree's PSS and RSS, sampled), the trace size and the JSON report
size into ``benchmarks/results/<date>-many-steps-<host>.json``.

The peak compared with the bound is ``max(maxrss, tree PSS)``, as in ``benchmarks/run.py``:
the decode and analysis workers are forked and share the parent's pages, which the tree's
summed RSS (``tree_rss_peak_mib``, recorded too) counts once per process. With ``--workers 1``
nothing is forked and ``maxrss`` is the whole answer.

The trace is streamed to disk, one step at a time: each step is a ``ProfilerStep#k`` CPU window
holding ``--kernels`` ``cudaLaunchKernel`` calls (1 µs each, 2 µs apart), each launching one
kernel of 1.5 µs on stream 7 (so a step with two or more kernels has host-wait gaps), steps
10 µs apart. Times are exact integer ns, written as Kineto writes them (``"{us}.{ns:03}"``).

The issue's bound: at 10⁶ steps, peak RSS ≤ 2 × the file + 300 MB and a JSON report ≤ 20 MB
with the default ``--max-step-rows``; ``within_bounds`` in the result says whether it held.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
from pathlib import Path

from benchmarks.run import MIB, REPO, TRACEVIZ_BIN, measure

DATA_DIR = REPO / "benchmarks" / "data"
RESULTS_DIR = REPO / "benchmarks" / "results"
BASE_NS = 1_790_000_000_000_000_000
STEP_NS = 10_000
LAUNCH_NS = 1_000
LAUNCH_EVERY_NS = 2_000
KERNEL_NS = 1_500
KERNEL_DELAY_NS = 3_000


def _ts(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}"


def write_trace(path: Path, steps: int, kernels: int = 1) -> int:
    """Write the ``steps``-step trace to ``path``, streaming; returns its size in bytes."""
    if kernels * LAUNCH_EVERY_NS + KERNEL_DELAY_NS > STEP_NS:
        raise ValueError(f"at most {(STEP_NS - KERNEL_DELAY_NS) // LAUNCH_EVERY_NS} kernels a step")
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "Synthetic GPU", "numSms": 132,
                              "computeMajor": 9, "computeMinor": 0}],
        "baseTimeNanoseconds": BASE_NS,
    }
    step_t = ('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":100,"tid":100,'
              '"ts":%s,"dur":%s,"args":{}},\n')
    launch_t = ('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,'
                '"ts":%s,"dur":%s,"args":{"correlation":%d}},\n')
    kernel_t = ('{"ph":"X","cat":"kernel","name":"tiny_kernel","pid":0,"tid":7,"ts":%s,'
                '"dur":%s,"args":{"device":0,"stream":7,"correlation":%d}},\n')
    step_dur, launch_dur, kernel_dur = _ts(STEP_NS - 1_000), _ts(LAUNCH_NS), _ts(KERNEL_NS)
    with path.open("w", encoding="ascii", buffering=1 << 20) as fh:
        fh.write(json.dumps(head)[:-1] + ',\n"traceEvents":[\n')
        fh.write('{"ph":"M","name":"process_name","pid":100,"tid":0,"args":{"name":"python3"}},\n'
                 '{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}},\n')
        corr = 1
        for k in range(steps):
            t0 = k * STEP_NS
            parts = [step_t % (k, _ts(t0), step_dur)]
            for j in range(kernels):
                lt = t0 + 500 + j * LAUNCH_EVERY_NS
                parts.append(launch_t % (_ts(lt), launch_dur, corr))
                parts.append(kernel_t % (_ts(lt + KERNEL_DELAY_NS), kernel_dur, corr))
                corr += 1
            fh.write("".join(parts))
        # a last metadata row closes the list without a trailing comma
        fh.write('{"ph":"M","name":"thread_name","pid":100,"tid":100,'
                 '"args":{"name":"python3"}}\n]}\n')
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.many_steps",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--kernels", type=int, default=1, help="kernels per step (default 1)")
    parser.add_argument("--max-step-rows", type=int, default=None,
                        help="passed to traceviz report (default: its own default)")
    parser.add_argument("--workers", type=int, default=None,
                        help="passed to traceviz report as --workers (default: its own)")
    parser.add_argument("--keep", action="store_true", help="keep the trace and the report")
    parser.add_argument("--out", type=Path, default=None, help="result file (default "
                        "benchmarks/results/<date>-many-steps-<host>.json)")
    parser.add_argument("--host", default=platform.node() or "host",
                        help="host label of the result file name")
    a = parser.parse_args(argv)
    trace = DATA_DIR / f"many-steps-{a.steps}x{a.kernels}.json"
    report = DATA_DIR / f"many-steps-{a.steps}x{a.kernels}.report.json"
    size = write_trace(trace, a.steps, a.kernels)
    print(f"trace: {trace} ({size / MIB:,.1f} MiB, {a.steps:,} steps)", file=sys.stderr)
    cmd = [TRACEVIZ_BIN, "report", str(trace), "--format", "json", "-o", str(report), "--force"]
    if a.max_step_rows is not None:
        cmd += ["--max-step-rows", str(a.max_step_rows)]
    if a.workers is not None:
        cmd += ["--workers", str(a.workers)]
    m = measure(cmd, size=f"{a.steps}", input_kind="many-steps", contender="traceviz-report",
                file_bytes=size, remove=report)
    json_bytes = report.stat().st_size if report.exists() else None
    peak = m.peak_mib  # max(maxrss, tree PSS)
    bound_mib = 2 * size / MIB + 300
    result = {
        "date": dt.date.today().isoformat(),
        "host": a.host,
        "python": sys.version.split()[0],
        "command": " ".join(["traceviz", *cmd[1:]]),
        "steps": a.steps,
        "kernels_per_step": a.kernels,
        "max_step_rows": a.max_step_rows,
        "workers": a.workers,
        "rc": m.rc,
        "wall_s": round(m.wall_s, 3),
        "maxrss_mib": round(m.maxrss_mib, 1),
        "tree_pss_peak_mib": round(m.tree_pss_mib, 1),
        "tree_rss_peak_mib": round(m.tree_rss_mib, 1),
        "peak_mib": round(peak, 1),
        "bound_mib": round(bound_mib, 1),
        "file_bytes": size,
        "json_bytes": json_bytes,
        "peak_over_file": round(peak * MIB / size, 3),
        "bound": "peak = max(maxrss, tree PSS) <= 2 x file + 300 MiB and JSON <= 20 MB",
        "within_bounds": bool(m.rc == 0 and peak <= bound_mib
                              and json_bytes is not None and json_bytes <= 20 * 10**6),
        "error": m.error,
    }
    text = json.dumps(result, indent=2)
    print(text)
    out = a.out or RESULTS_DIR / f"{result['date']}-many-steps-{a.host}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    print(f"result: {out}", file=sys.stderr)
    if not a.keep:
        trace.unlink(missing_ok=True)
        report.unlink(missing_ok=True)
    return 0 if m.rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Child-process entry points of the benchmark runner, one contender per call.

Each runs in a fresh interpreter started by :mod:`benchmarks.run`, does one job, and prints
one JSON line with its in-process timings in seconds (imports excluded, so interpreter start
and import time can be told apart from the work: the parent measures the wall time).

``python -m benchmarks.contenders KIND ARGS…`` with KIND one of

* ``read TRACE`` — read the file's bytes; for gzip also inflate them with isal;
* ``msgspec TRACE`` — :mod:`benchmarks.msgspec_reference` (read + typed decode);
* ``simdjson TRACE`` — read (gzip inflated with isal), then one pysimdjson parse of the whole
  document (simdjson's DOM: every value parsed onto its tape, no Python object per event) and
  the length of ``traceEvents`` read from it — the **parse floor** yardstick;
* ``traceviz TRACE OUT`` — ``traceviz report TRACE --format json -o OUT`` called in-process
  after importing the CLI, so ``work_s`` is the report's own time;
* ``hta DIR`` — HTA ``TraceAnalysis(trace_dir=DIR)`` load, temporal breakdown, idle time
  breakdown and CUDA kernel launch stats.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _read(trace: str) -> dict[str, float]:
    from isal import igzip

    t0 = time.perf_counter()
    data = Path(trace).read_bytes()
    t1 = time.perf_counter()
    out = {"work_s": t1 - t0, "read_s": t1 - t0, "bytes": len(data)}
    if data[:2] == b"\x1f\x8b":
        raw = igzip.decompress(data)
        t2 = time.perf_counter()
        out.update(work_s=t2 - t0, gunzip_s=t2 - t1, bytes=len(raw))
    return out


def _msgspec(trace: str) -> dict[str, float]:
    from benchmarks.msgspec_reference import decode, read_bytes

    t0 = time.perf_counter()
    data = read_bytes(Path(trace))
    t1 = time.perf_counter()
    events = decode(data)
    t2 = time.perf_counter()
    return {"work_s": t2 - t0, "read_s": t1 - t0, "decode_s": t2 - t1, "events": len(events)}


def _simdjson(trace: str) -> dict[str, float]:
    import simdjson

    from benchmarks.msgspec_reference import read_bytes

    parser = simdjson.Parser()
    t0 = time.perf_counter()
    data = read_bytes(Path(trace))
    t1 = time.perf_counter()
    doc = parser.parse(data)
    events = len(doc["traceEvents"])
    t2 = time.perf_counter()
    return {"work_s": t2 - t0, "read_s": t1 - t0, "parse_s": t2 - t1, "events": events}


def _traceviz(trace: str, out: str) -> dict[str, float]:
    from traceviz.cli.app import app

    t0 = time.perf_counter()
    app(["report", trace, "--format", "json", "-o", out], standalone_mode=False)
    return {"work_s": time.perf_counter() - t0}


def _hta(trace_dir: str) -> dict[str, float]:
    from hta.trace_analysis import TraceAnalysis

    t0 = time.perf_counter()
    analysis = TraceAnalysis(trace_dir=trace_dir)
    t1 = time.perf_counter()
    analysis.get_temporal_breakdown(visualize=False)
    t2 = time.perf_counter()
    analysis.get_idle_time_breakdown(visualize=False)
    t3 = time.perf_counter()
    analysis.get_cuda_kernel_launch_stats(visualize=False)
    t4 = time.perf_counter()
    return {
        "work_s": t4 - t0,
        "load_s": t1 - t0,
        "temporal_s": t2 - t1,
        "idle_s": t3 - t2,
        "launch_stats_s": t4 - t3,
    }


_KINDS = {"read": _read, "msgspec": _msgspec, "simdjson": _simdjson, "traceviz": _traceviz,
          "hta": _hta}


def main(argv: list[str] | None = None) -> int:
    """Run one contender and print its timings as the last stdout line."""
    kind, *args = argv if argv is not None else sys.argv[1:]
    result = _KINDS[kind](*args)
    sys.stdout.flush()
    print("\n" + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

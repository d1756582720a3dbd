"""Where ``traceviz report --format json`` spends its time: each stage's seconds and share.

``python -m benchmarks.stages TRACE [--repeat N] [--out FILE]`` runs the report's pipeline
N times (default 5), each in a fresh child process, with the CLI's malloc setting
(:func:`traceviz.freed_memory.return_freed_memory`) and one worker, so the stages run one
after another in one process and each can be timed: the load (``traceviz.trace.load``), the
analysis (``traceviz.analyze.analysis.analyze``) and the JSON report (``Analysis.to_json``,
then the file written), each split into the stages below by timing the functions that do
them. It prints a table (median seconds, range, median share of the run) and writes every
run to ``benchmarks/results/<date>-stages-<trace stem>-<host>.json`` (or ``--out``).

Stages (seconds of wall time in the child; a stage named ``other`` is its part's time not in
the named stages):

* ``import`` — ``import traceviz.cli.app`` and the analysis modules;
* ``read`` — the file's bytes (``read_trace_bytes``; gzip inflated);
* ``scan`` — the C scanner's columns of every event chunk it takes (``scanned_columns``,
  with msgspec's decode of the chunk's rare other events);
* ``decode`` — msgspec's typed decode of every chunk the scanner declines, or of every
  chunk without it (``decode_events``);
* ``columns`` — those chunks' events turned into columns (``columns_from_events``);
* ``tables`` — the chunks joined into the trace's tables (``_build_trace``);
* ``load_other`` — the top-level split and the rest of ``load``;
* ``links`` — launches linked to their GPU activities (``link_launches``);
* ``steps`` — the per-step grouping: ``find_steps``, ``step_timeline``, ``_step_metrics``;
* ``host_wait`` — plan, blocks and merge of the host-wait attribution (``plan_host_wait``,
  ``HostWaitPlan.attribute``, ``_staged_merge``);
* ``analysis_other`` — the rest of ``analyze`` (screening, families, gap statistics, compile
  structure, totals, health, …);
* ``json`` — the JSON document encoded and indented (``Analysis.to_json``);
* ``write`` — the text written to a file.

Per stage the table also gives the minor page faults taken in it (pages the kernel mapped in
and zeroed: the system time of fresh memory) and how far it raised the peak RSS (MiB; the row
``import`` holds the peak before the load). The child also reports its user and system CPU
seconds, minor page faults and peak RSS.
The end-to-end CLI (``traceviz report``, default workers: the decode on several processes)
is measured by :mod:`benchmarks.run` and :mod:`benchmarks.paired`, not here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import importlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"

#: (stage, module, attribute) of every timed function; a class attribute is ``Class.name``.
TIMED: tuple[tuple[str, str, str], ...] = (
    ("read", "traceviz.trace.loader", "read_trace_bytes"),
    ("scan", "traceviz.trace.chunk", "scanned_columns"),
    ("decode", "traceviz.trace.decode", "decode_events"),
    ("columns", "traceviz.trace.decode", "columns_from_events"),
    ("tables", "traceviz.trace.loader", "_build_trace"),
    ("links", "traceviz.analyze.analysis", "link_launches"),
    ("steps", "traceviz.analyze.analysis", "find_steps"),
    ("steps", "traceviz.analyze.analysis", "step_timeline"),
    ("steps", "traceviz.analyze.analysis", "_step_metrics"),
    ("host_wait", "traceviz.analyze.analysis", "plan_host_wait"),
    ("host_wait", "traceviz.analyze.host_wait.plan", "HostWaitPlan.attribute"),
    ("host_wait", "traceviz.analyze.host_wait.plan", "_staged_merge"),
)
STAGES = ("import", "read", "scan", "decode", "columns", "tables", "load_other", "links", "steps",
          "host_wait", "analysis_other", "json", "write")


def _faults() -> int:
    """Minor page faults of this process so far (each a page the kernel mapped in)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _peak_kib() -> int:
    """This process's peak RSS so far (KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class _Clock:
    """Seconds per stage; a timed call inside another timed call counts for the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.faults: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.peak_growth_kib: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.depth = 0

    def timed(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            t0, f0, p0 = time.perf_counter(), _faults(), _peak_kib()
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.seconds[stage] += time.perf_counter() - t0
                    self.faults[stage] += _faults() - f0
                    self.peak_growth_kib[stage] += _peak_kib() - p0
        return run

    def install(self) -> None:
        """Wrap every :data:`TIMED` function where its callers look it up."""
        for stage, module_name, attr in TIMED:
            owner: Any = importlib.import_module(module_name)
            *outer, name = attr.split(".")
            for part in outer:
                owner = getattr(owner, part)
            setattr(owner, name, self.timed(stage, getattr(owner, name)))


def child(trace: str) -> dict[str, Any]:
    """One run in this process: the stages' seconds, CPU seconds, faults and peak RSS."""
    t0 = time.perf_counter()
    import traceviz.cli.app  # noqa: F401  (what every CLI call imports)
    from traceviz.api.analysis import Analysis
    from traceviz.freed_memory import return_freed_memory
    from traceviz.trace import load

    analysis_module = importlib.import_module("traceviz.analyze.analysis")
    clock = _Clock()
    clock.seconds["import"] = time.perf_counter() - t0
    return_freed_memory()  # as the CLI does first
    clock.install()
    before = resource.getrusage(resource.RUSAGE_SELF)
    t1, f1, p1 = time.perf_counter(), _faults(), _peak_kib()
    loaded = load(trace, workers=1)
    t2, f2, p2 = time.perf_counter(), _faults(), _peak_kib()
    result = analysis_module.analyze(loaded, workers=1)
    t3, f3, p3 = time.perf_counter(), _faults(), _peak_kib()
    text = Analysis(loaded, result).to_json()
    t4, f4, p4 = time.perf_counter(), _faults(), _peak_kib()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "report.json").write_text(text, encoding="utf-8")
    t5, f5, p5 = time.perf_counter(), _faults(), _peak_kib()
    after = resource.getrusage(resource.RUSAGE_SELF)
    s, f, g = clock.seconds, clock.faults, clock.peak_growth_kib
    loaded_parts = ("read", "scan", "decode", "columns", "tables")
    analysis_parts = ("links", "steps", "host_wait")
    s["load_other"] = (t2 - t1) - sum(s[k] for k in loaded_parts)
    f["load_other"] = (f2 - f1) - sum(f[k] for k in loaded_parts)
    g["load_other"] = (p2 - p1) - sum(g[k] for k in loaded_parts)
    s["analysis_other"] = (t3 - t2) - sum(s[k] for k in analysis_parts)
    f["analysis_other"] = (f3 - f2) - sum(f[k] for k in analysis_parts)
    g["analysis_other"] = (p3 - p2) - sum(g[k] for k in analysis_parts)
    s["json"], s["write"] = t4 - t3, t5 - t4
    f["json"], f["write"] = f4 - f3, f5 - f4
    g["json"], g["write"] = p4 - p3, p5 - p4
    g["import"] = p1  # the peak before the load (KiB): the imports' and the interpreter's
    return {"stages_s": s, "stage_faults": f,
            "stage_peak_growth_mib": {k: v / 1024 for k, v in g.items()},
            "total_s": sum(s.values()), "load_s": t2 - t1,
            "analysis_s": t3 - t2, "report_s": t5 - t3,
            "user_s": after.ru_utime - before.ru_utime,
            "sys_s": after.ru_stime - before.ru_stime,
            "minor_faults": after.ru_minflt - before.ru_minflt,
            "maxrss_mib": after.ru_maxrss / 1024, "json_bytes": len(text.encode())}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per stage and for the CPU and fault counts: median, min, max; the stage's median
    share of the run (its seconds over the run's total, per run, then the median)."""
    def stats(values: list[float]) -> dict[str, float]:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    out: dict[str, Any] = {"stages": {}}
    for stage in STAGES:
        secs = [r["stages_s"][stage] for r in runs]
        shares = [r["stages_s"][stage] / r["total_s"] for r in runs]
        out["stages"][stage] = {**stats(secs), "share_median": statistics.median(shares),
                                "minor_faults_median": statistics.median(
                                    r["stage_faults"][stage] for r in runs),
                                "peak_growth_mib_median": statistics.median(
                                    r["stage_peak_growth_mib"][stage] for r in runs)}
    for key in ("total_s", "load_s", "analysis_s", "report_s", "user_s", "sys_s",
                "minor_faults", "maxrss_mib"):
        out[key] = stats([r[key] for r in runs])
    return out


def format_table(summary: dict[str, Any]) -> str:
    """The stages as a Markdown table: median s, range, median share."""
    lines = ["| stage | median s | range s | share | minor faults | peak growth MiB |",
             "| --- | --: | --: | --: | --: | --: |"]
    for stage, st in summary["stages"].items():
        lines.append(f"| {stage} | {st['median']:.3f} | {st['min']:.3f}–{st['max']:.3f} | "
                     f"{100 * st['share_median']:.1f} % | {st['minor_faults_median']:,.0f} | "
                     f"{st['peak_growth_mib_median']:,.0f} |")
    t = summary["total_s"]
    lines.append(f"| **total** | {t['median']:.3f} | {t['min']:.3f}–{t['max']:.3f} | | "
                 f"{summary['minor_faults']['median']:,.0f} | "
                 f"{summary['maxrss_mib']['median']:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stages",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="the trace (.json or .json.gz)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh child runs (default 5)")
    parser.add_argument("--out", type=Path, default=None, help="result file")
    parser.add_argument("--host", default=platform.node() or "host")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = parser.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.trace)))
        return 0
    runs = []
    for i in range(a.repeat):
        load_before = os.getloadavg()[0]
        got = subprocess.run([sys.executable, "-m", "benchmarks.stages", "--child", a.trace],
                             cwd=REPO, capture_output=True, text=True, check=True)
        run = json.loads(got.stdout.strip().splitlines()[-1])
        run["loadavg_1min_before"] = load_before
        runs.append(run)
        print(f"run {i + 1}/{a.repeat}: {run['total_s']:.2f} s (load average {load_before:.2f})",
              file=sys.stderr)
    summary = _summary(runs)
    trace = Path(a.trace)
    doc = {
        "date": dt.date.today().isoformat(),
        "host": a.host,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "command": "python -m benchmarks.stages " + " ".join(argv or sys.argv[1:]),
        "trace": trace.name,
        "trace_bytes": trace.stat().st_size,
        "workers": 1,
        "summary": summary,
        "runs": runs,
    }
    print(format_table(summary))
    stem = trace.name.split(".")[0]
    out = a.out or RESULTS_DIR / f"{doc['date']}-stages-{stem}-{a.host}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"result: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

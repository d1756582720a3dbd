"""The traceviz-vs-HTA cross-check of ``docs/hta.md``: record it once, render it from the record.

``python scripts/hta_facts.py record OUT.json TRACE_DIR…`` (needs ``pip install
'traceviz[hta]'`` and the traces) runs traceviz (load + analyze) and HTA
(:func:`traceviz.holistic.run_hta`) on every ``*.json.gz`` of each folder, one process, and
writes per trace traceviz's totals (counts; times in integer ns), its driver-API kernel launches
and distinct ProfilerStep names, HTA's whole result (:meth:`HtaResult.to_dict`, times in µs,
``seconds`` of wall time), traceviz's seconds and the ``totals``, ``health`` and ``steps`` of
its ``traceviz report --format json`` (µs; what ``docs/metrics.md`` quotes of these traces),
plus the run's date, machine, total wall
seconds and peak RSS (MiB). The docs then read only the record, so ``scripts/docs_outputs.py``
needs neither HTA nor the traces outside the repository (``../shared/cases/hta``):

* ``table RECORD FOLDER``: the Markdown table of the traces of one folder (its name as
  recorded, e.g. ``hta``);
* ``section RECORD TRACE``: the report's "HTA" section of one trace, as ``traceviz report
  --hta`` renders it (:func:`traceviz.report.hta_section.hta_markdown`), headings one level
  down;
* ``facts RECORD``: JSON for ``json-format`` prose: the record's header, each trace's row by
  its name (``traces[NAME]``) with derived fields (``window_diff_ns``, ``idle_diff_ns``: HTA
  minus traceviz; ``hta_extra_window_us``; ``dropped_ops``; ``health[CODE]``: the report's
  health entries by code; ``steps[NAME]``: its step rows by name; ``steps_idle_sum_us``: Σ over
  the steps of period − GPU busy; ``union_idle_us``: the same of the totals (the
  steps' union); ``launch_latency_median_ms`` / ``_worst_ms``: read from the
  ``launch_latency_high`` message, when raised), the spread of HTA's seconds on the ``hta``
  folder's traces (``hta_seconds_min``, ``hta_seconds_max``, ``hta_traces``) and
  ``trace_count``.

``python scripts/hta_facts.py overlap-record OUT.json RUN_DIR:MODE…`` (needs HTA) records the
comm/compute overlap of each rank of a multi-rank mode, both ways: HTA's
``get_comm_comp_overlap`` and traceviz's transfer overlap (:attr:`HtaResult.comm_comp_overlap_pct`
and ``traceviz_overlap_pct``, percent; ``None`` where HTA failed, its ``errors`` beside);
``overlap-facts RECORD`` prints it with each row also under ``ranks[RUN/MODE/RANK]`` (RUN the
folder's name) for ``json-format``.

``python scripts/hta_facts.py comm-record OUT.json TRACE…`` (needs the traces, not HTA) records
the ``communication.overall`` of each trace's ``traceviz report --format json`` (µs; shares
0–1), with the run's date, machine and traceviz version; ``comm-table COMM_RECORD RECORD``
renders ``docs/metrics.md``'s overlap table from it and the cross-check record's HTA
``comm_comp_overlap_pct`` of the same traces (by name), percent with 2 decimals.
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOTALS = ("kernels", "memcpys", "memsets", "activities", "unlinked", "launches",
          "kernel_launches", "graph_launches", "gpu_window_ns", "gpu_busy_all_ns")


def record(out: Path, folders: list[Path]) -> dict[str, Any]:
    """Run both analyzers on every trace of ``folders``; the record written to ``out``."""
    import traceviz
    from traceviz.holistic import run_hta
    from traceviz.vocab import STEP_MARKER, LaunchKind, base_api_name

    t0 = time.perf_counter()
    traces = []
    for folder in folders:
        for path in sorted(folder.glob("*.json.gz")):
            t = time.perf_counter()
            trace = traceviz.load(path)
            analysis = traceviz.analyze(trace)
            seconds = time.perf_counter() - t
            rt, gpu = trace.runtime, trace.gpu
            linked = rt[(rt["kind"] == LaunchKind.KERNEL)
                        & rt["correlation"].isin(gpu["correlation"])]
            steps = {n for n in trace.cpu["name"].astype(str).unique() if STEP_MARKER.match(n)}
            result = run_hta(path, rank=trace.meta.rank, totals=analysis.totals)
            report = json.loads(subprocess.run(
                [sys.executable, "-m", "traceviz", "report", str(path), "--format", "json"],
                capture_output=True, text=True, check=True).stdout)
            traces.append({
                "name": path.name.removesuffix(".json.gz").removesuffix(".pt.trace"),
                "folder": folder.name,
                "totals": {k: int(getattr(analysis.totals, k)) for k in TOTALS},
                "driver_kernel_launches": int(sum(base_api_name(str(n)).startswith("cuLaunch")
                                                  for n in linked["name"])),
                "step_names": len(steps), "traceviz_seconds": round(seconds, 3),
                "hta": {**result.to_dict(), "trace_path": path.name},
                "report": {k: report[k] for k in ("totals", "health", "steps")},
            })
    doc = {"date": time.strftime("%Y-%m-%d"),
           "machine": f"{platform.node()}, {len(os.sched_getaffinity(0))} cores, Python "
                      f"{platform.python_version()}",
           "command": "python scripts/hta_facts.py record OUT "
                      + " ".join(os.path.relpath(f, ROOT) for f in folders),
           "wall_s": round(time.perf_counter() - t0, 1),
           "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "traces": traces}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def overlap_record(out: Path, modes: list[str]) -> dict[str, Any]:
    """Both overlaps of every rank of each ``RUN_DIR:MODE``; the record written to ``out``."""
    import traceviz
    from traceviz.analyze.distributed.overlap import overlap_by_path

    rows = []
    for spec in modes:
        run, mode = spec.rsplit(":", 1)
        paths = sorted(Path(run).glob(f"{mode}.rank*.pt.trace.json.gz"))
        overlaps = {str(Path(k)): v for k, v in overlap_by_path(
            traceviz.Ranks.from_paths(paths, workers=1).result).items()}
        for path in paths:
            r = traceviz.analyze(path).hta(overlaps.get(str(path)))
            rows.append({"run": Path(run).name, "mode": mode, "rank": r.rank,
                         "hta_pct": r.comm_comp_overlap_pct,
                         "traceviz_pct": r.traceviz_overlap_pct, "errors": dict(r.errors)})
    from hta.version import __version__ as hta_version

    doc = {"date": time.strftime("%Y-%m-%d"), "hta_version": hta_version,
           "command": "python scripts/hta_facts.py overlap-record OUT " + " ".join(modes),
           "rows": rows}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def comm_record(out: Path, paths: list[Path]) -> dict[str, Any]:
    """Each trace's ``communication.overall`` as ``traceviz report`` gives it; the record
    written to ``out``."""
    import traceviz

    traces = []
    for path in paths:
        report = json.loads(subprocess.run(
            [sys.executable, "-m", "traceviz", "report", str(path), "--format", "json"],
            capture_output=True, text=True, check=True).stdout)
        traces.append({"name": path.name.removesuffix(".json.gz").removesuffix(".pt.trace"),
                       "overall": report["communication"]["overall"]})
    doc = {"date": time.strftime("%Y-%m-%d"),
           "machine": f"{platform.node()}, {len(os.sched_getaffinity(0))} cores, Python "
                      f"{platform.python_version()}",
           "traceviz_version": traceviz.__version__,
           "command": "python scripts/hta_facts.py comm-record OUT "
                      + " ".join(os.path.relpath(p, ROOT) for p in paths),
           "traces": traces}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def comm_table(comm: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """The overlap table: per trace of ``comm``, traceviz's ``overlap_share`` and
    ``hta_overlap_share`` beside HTA's ``get_comm_comp_overlap`` from the cross-check record
    ``doc`` (percent, 2 decimals)."""
    hta = {t["name"]: t["hta"]["comm_comp_overlap_pct"] for t in doc["traces"]}
    lines = ["| trace | `overlap_share` (ours) | `hta_overlap_share` | HTA "
             "`get_comm_comp_overlap` |", "|---|---:|---:|---:|"]
    for t in comm["traces"]:
        o = t["overall"]
        lines.append(f"| `{t['name']}` | {o['overlap_share'] * 100:.2f} % | "
                     f"{o['hta_overlap_share'] * 100:.2f} % | {hta[t['name']]:.2f} % |")
    return lines


def overlap_facts(doc: dict[str, Any]) -> dict[str, Any]:
    """The overlap record with each row also under ``ranks["RUN/MODE/RANK"]``."""
    return {**doc, "ranks": {f"{r['run']}/{r['mode']}/{r['rank']}": r for r in doc["rows"]}}


def _n(value: float) -> str:
    """µs with traceviz's ns digits."""
    return f"{value:,.3f}"


def _hta(value: float) -> str:
    """HTA's float µs with its own digits (up to 10 decimals, trailing zeros cut)."""
    return f"{value:,.10f}".rstrip("0").rstrip(".")


def table(doc: dict[str, Any], folder: str) -> list[str]:
    """The cross-check table of one folder's traces (µs; HTA's columns with its own digits)."""
    lines = ["| trace | GPU ops traceviz (unlinked) | GPU ops HTA | window traceviz | "
             "kernel_time HTA | idle traceviz | idle HTA | launches traceviz (driver, graph) | "
             "HTA launch stats | HTA run s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in (t for t in doc["traces"] if t["folder"] == folder):
        tv, h = t["totals"], t["hta"]
        tb = h["temporal_breakdown"] or {}
        ls = h["launch_stats"] or {}
        idle = (tv["gpu_window_ns"] - tv["gpu_busy_all_ns"]) / 1000
        lines.append(
            f"| {t['name']} | {tv['activities']:,} ({tv['unlinked']:,}) | "
            f"{sum(h['gpu_ops'].values()):,} | {_n(tv['gpu_window_ns'] / 1000)} | "
            f"{_hta(tb.get('kernel_time_us', 0))} | {_n(idle)} | "
            f"{_hta(tb.get('idle_time_us', 0))} | {tv['launches']:,} "
            f"({t['driver_kernel_launches']:,}, {tv['graph_launches']:,}) | "
            f"{ls.get('launches', 0):,} | {h['seconds']:.1f} |")
    return lines


def section(doc: dict[str, Any], name: str) -> str:
    """The "HTA" report section of trace ``name``, from its recorded result."""
    from traceviz.holistic import HtaResult
    from traceviz.report.hta_section import hta_markdown

    h = next(t["hta"] for t in doc["traces"] if t["name"] == name)
    result = HtaResult(**{**h, "idle_time_breakdown": tuple(h["idle_time_breakdown"]),
                          "notes": tuple(h["notes"])})
    return "\n".join("#" + s if s.startswith("#") else s
                     for s in hta_markdown(result).rstrip("\n").split("\n"))


def facts(doc: dict[str, Any]) -> dict[str, Any]:
    """The record with each trace indexed by name and the differences prose quotes."""
    traces = {}
    for t in doc["traces"]:
        tv, tb = t["totals"], t["hta"]["temporal_breakdown"] or {}
        window_ns, idle_ns = tv["gpu_window_ns"], tv["gpu_window_ns"] - tv["gpu_busy_all_ns"]
        traces[t["name"]] = {
            **t, "hta_ops": sum(t["hta"]["gpu_ops"].values()),
            "dropped_ops": tv["activities"] - sum(t["hta"]["gpu_ops"].values()),
            "window_diff_ns": tb.get("kernel_time_us", 0) * 1000 - window_ns,
            "idle_diff_ns": tb.get("idle_time_us", 0) * 1000 - idle_ns,
            "hta_extra_window_us": tb.get("kernel_time_us", 0) - window_ns / 1000,
            "traceviz_window_us": window_ns / 1000, **_report_facts(t["report"])}
    seconds = [t["hta"]["seconds"] for t in doc["traces"] if t["folder"] == "hta"]
    return {**doc, "traces": traces, "hta_seconds_min": min(seconds, default=0),
            "hta_seconds_max": max(seconds, default=0),
            "hta_traces": len(seconds), "trace_count": len(doc["traces"])}


def _report_facts(report: dict[str, Any]) -> dict[str, Any]:
    """The report's health entries and steps by name, the steps' and their union's idle (µs)
    and the launch latency figures of its ``launch_latency_high`` message (ms)."""
    health = {h["code"]: h for h in report["health"]}
    out: dict[str, Any] = {
        "health": health, "steps": {s["name"]: s for s in report["steps"]},
        "steps_idle_sum_us": sum(s["period_us"] - s["gpu_busy_us"] for s in report["steps"]),
        "union_idle_us": report["totals"]["period_us"] - report["totals"]["gpu_busy_us"]}
    latency = health.get("launch_latency_high")
    m = latency and re.search(r"median launch-to-start latency ([\d.]+) ms.*?worst ([\d.]+) ms",
                              latency["message"])
    if m:
        out["launch_latency_median_ms"], out["launch_latency_worst_ms"] = map(float, m.groups())
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    usage = ("usage: python scripts/hta_facts.py record OUT.json DIR… | table RECORD FOLDER | "
             "section RECORD TRACE | facts RECORD | overlap-record OUT.json RUN_DIR:MODE… | "
             "overlap-facts RECORD | comm-record OUT.json TRACE… | comm-table COMM_RECORD "
             "RECORD")
    if len(args) >= 3 and args[0] == "record":
        record(Path(args[1]), [Path(a) for a in args[2:]])
        return 0
    if len(args) >= 3 and args[0] == "overlap-record":
        overlap_record(Path(args[1]), args[2:])
        return 0
    if len(args) >= 3 and args[0] == "comm-record":
        comm_record(Path(args[1]), [Path(a) for a in args[2:]])
        return 0
    if len(args) == 3 and args[0] == "comm-table":
        comm, doc = (json.loads(Path(a).read_text(encoding="utf-8")) for a in args[1:])
        print("\n".join(comm_table(comm, doc)))
        return 0
    if len(args) < 2 or args[0] not in ("table", "section", "facts", "overlap-facts"):
        print(usage, file=sys.stderr)
        return 2
    doc = json.loads(Path(args[1]).read_text(encoding="utf-8"))
    if args[0] == "facts" and len(args) == 2:
        print(json.dumps(facts(doc)))
    elif args[0] == "overlap-facts" and len(args) == 2:
        print(json.dumps(overlap_facts(doc)))
    elif args[0] == "table" and len(args) == 3:
        print("\n".join(table(doc, args[2])))
    elif args[0] == "section" and len(args) == 3:
        print(section(doc, args[2]))
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

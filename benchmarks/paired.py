"""Old code against new on one trace, in interleaved pairs, with the parse yardsticks.

``python -m benchmarks.paired TRACE --before DIR [--pairs N] [--out FILE]`` runs
``traceviz report TRACE --format json -o OUT`` N times (default 5) with the code of ``DIR``
(a checkout of the old commit: ``git archive HEAD | tar -x -C DIR``; run as ``python -P -m
traceviz`` with ``PYTHONPATH=DIR``) and N times with this tree's, alternating old and new
(``before, after, before, after, …``), each in a fresh child measured by
:func:`benchmarks.run.measure`: wall seconds, user and system CPU seconds (the child and the
workers it waited for), ``wait4`` max RSS and the sampled PSS of the process tree; ``peak`` =
max(max RSS, tree PSS). The same round also runs the yardsticks of
:mod:`benchmarks.contenders` once each: ``msgspec`` (the typed decode of
:mod:`benchmarks.msgspec_reference`) and ``simdjson`` (a pysimdjson parse of the whole
document), interpreter start included, as the CLI's wall is. ``--no-yardsticks`` skips them.

Each label gets median, min and max of every number; ``ratios`` divide medians (after /
before, after / msgspec, after / simdjson, peak / file). The 1-minute load average before
each run is kept with it: the machine may be shared. The result goes to
``benchmarks/results/<date>-paired-<trace stem>-<host>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.run import MIB, PYTHON, REPO, RESULTS_DIR, Measurement, measure

NUMBERS = ("wall_s", "user_s", "sys_s", "maxrss_mib", "tree_pss_mib", "peak_mib")


def _report_cmd(trace: Path, out: Path, code: Path | None) -> tuple[list[str], dict[str, str]]:
    """``traceviz report`` on ``trace`` with the code of ``code`` (``None``: this tree)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code or REPO)
    return [PYTHON, "-P", "-m", "traceviz", "report", str(trace), "--format", "json", "-o",
            str(out), "--force"], env


def _record(m: Measurement) -> dict[str, Any]:
    return {"wall_s": m.wall_s, "user_s": m.user_s, "sys_s": m.sys_s,
            "maxrss_mib": m.maxrss_mib, "tree_pss_mib": m.tree_pss_mib,
            "peak_mib": m.peak_mib, "rc": m.rc,
            "loadavg_1min_before": m.detail.get("loadavg_1min_before"),
            "work_s": m.work_s, "error": m.error}


def _stats(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {k: {"median": statistics.median(r[k] for r in runs),
                "min": min(r[k] for r in runs), "max": max(r[k] for r in runs)}
            for k in NUMBERS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--before", type=Path, required=True,
                        help="checkout of the old code (holds traceviz/)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--no-yardsticks", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--host", default=platform.node() or "host")
    a = parser.parse_args(argv)
    size = a.trace.stat().st_size
    labels = ["before", "after"] + ([] if a.no_yardsticks else ["msgspec", "simdjson"])
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in labels}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        for i in range(a.pairs):
            for label in labels:
                if label in ("before", "after"):
                    cmd, env = _report_cmd(a.trace, out, a.before if label == "before" else None)
                else:
                    cmd, env = [PYTHON, "-m", "benchmarks.contenders", label, str(a.trace)], None
                m = measure(cmd, size=str(size), input_kind="json", contender=label,
                            file_bytes=size, env=env, remove=out if env else None)
                runs[label].append(_record(m))
                print(f"pair {i + 1}/{a.pairs} {label}: {m.wall_s:.2f} s wall, "
                      f"{m.user_s:.2f} user, {m.sys_s:.2f} sys, peak {m.peak_mib:.0f} MiB "
                      f"(load {m.detail.get('loadavg_1min_before', 0):.2f})", file=sys.stderr)
                if m.rc != 0:
                    print(m.error, file=sys.stderr)
                    return 1
    stats = {k: _stats(v) for k, v in runs.items()}
    med = {k: v["wall_s"]["median"] for k, v in stats.items()}
    ratios: dict[str, float] = {
        "after_over_before_wall": med["after"] / med["before"],
        "after_over_before_sys": (stats["after"]["sys_s"]["median"]
                                  / stats["before"]["sys_s"]["median"]),
        "after_peak_over_file": stats["after"]["peak_mib"]["median"] * MIB / size,
        "before_peak_over_file": stats["before"]["peak_mib"]["median"] * MIB / size,
    }
    per_pair = [r["wall_s"] / b["wall_s"] for r, b in zip(runs["after"], runs["before"],
                                                         strict=True)]
    ratios_range = {"after_over_before_wall_per_pair": {
        "median": statistics.median(per_pair), "min": min(per_pair), "max": max(per_pair)}}
    for y in ("msgspec", "simdjson"):
        if y in med:
            ratios[f"after_over_{y}_wall"] = med["after"] / med[y]
            ratios[f"before_over_{y}_wall"] = med["before"] / med[y]
    doc = {
        "date": dt.date.today().isoformat(),
        "host": a.host,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "command": "python -m benchmarks.paired " + " ".join(argv or sys.argv[1:]),
        "before": str(a.before),
        "trace": a.trace.name,
        "trace_bytes": size,
        "order": labels,
        "stats": stats,
        "ratios": ratios,
        **ratios_range,
        "runs": runs,
    }
    text = json.dumps(doc, indent=2)
    print(json.dumps({"stats": {k: {n: round(v[n]["median"], 3) for n in NUMBERS}
                                for k, v in stats.items()},
                      "ratios": {k: round(v, 3) for k, v in ratios.items()}}, indent=1))
    stem = a.trace.name.split(".")[0]
    out_file = a.out or RESULTS_DIR / f"{doc['date']}-paired-{stem}-{a.host}.json"
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text + "\n", encoding="utf-8")
    print(f"result: {out_file}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

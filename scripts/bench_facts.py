"""Facts from committed benchmark results files, for the docs' generated blocks.

``python scripts/bench_facts.py SUBCOMMAND FILE…`` reads results under ``benchmarks/results/``
and prints what a page states about them; ``scripts/docs_outputs.py`` regenerates the blocks,
so a page's benchmark numbers are the files' numbers. Subcommands:

* ``json NAME=FILE…``: one JSON object ``{NAME: the file's content}``, for the ``json-format``
  filter's prose templates (``{w[rows][0][wall_s_median]:.2f}``). Every list of two or more
  numbers under a key ``K`` also gets ``K_min``, ``K_max`` and ``K_median`` beside it (the
  spread a sentence quotes); a list of two or more objects gets them as objects, per numeric
  field the items share (``{q[runs_max][queue_depth]}``).
* ``run-table FILE``: the table of a ``python -m benchmarks.run`` record (seconds and ratios
  per size and input, from its ``results`` and ``ratios``).
* ``workers-table FILE``: what ``python -m benchmarks.workers`` printed for a record (its
  table, rebuilt from the file the same way).
* ``inflation-table FILE…``: ``python -m benchmarks.inflation_spread`` records pooled per
  ``WORKLOAD:MODE`` (a cell's variant suffix dropped): processes of each, the range of the lean
  and the stacked inflation (profiled / adjacent unprofiled median step; a lone value over 3×
  the next is shown apart), and in how many rounds the lean one was the lower.
* ``fuzz-table FILE…``: one row per ``python -m benchmarks.fuzz`` result (wall seconds,
  examples per second, class counts, largest peak RSS in MB and the slowest example in s); a
  campaign file with ``parts`` (a run resumed over several calls) gives a row per part, the
  part's first example index and code from the campaign, and a bold total row.
* ``mode-blocks MODE RUN…``: a mode's paired blocks across run directories
  (:func:`mode_blocks`); ``block-spreads RUN MODE…``: each mode's paired-block spread in one
  run directory (:func:`block_spreads`).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(value: object) -> bool:
    return isinstance(value, list) and len(value) >= 2 and all(_number(v) for v in value)


def _spreads(values: list[float]) -> tuple[float, float, float]:
    return min(values), max(values), statistics.median(values)


def with_spreads(value: Any) -> Any:
    """``value`` with ``K_min``, ``K_max``, ``K_median`` beside each numeric list ``K`` (and,
    for a list of objects, beside it per numeric field all its items have)."""
    if isinstance(value, list):
        return [with_spreads(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: with_spreads(v) for k, v in value.items()}
    for k, v in value.items():
        if _numbers(v):
            out.update(zip((f"{k}_min", f"{k}_max", f"{k}_median"), _spreads(v), strict=True))
        elif isinstance(v, list) and len(v) >= 2 and all(isinstance(i, dict) for i in v):
            fields = [f for f in v[0] if all(_number(i.get(f)) for i in v)]
            stats = {f: _spreads([i[f] for i in v]) for f in fields}
            for n, name in enumerate(("min", "max", "median")):
                if stats:
                    out[f"{k}_{name}"] = {f: s[n] for f, s in stats.items()}
    return out


def _read(path: str) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def run_table(doc: dict[str, Any]) -> list[str]:
    """The per-size table of a ``benchmarks.run`` record: seconds (wall, one process per
    contender, interpreter start included), HTA / traceviz, traceviz / msgspec and traceviz's
    peak memory over the file size."""
    wall = {(r["size"], r["input"], r["contender"]): r["wall_s"] for r in doc["results"]}
    events = {size: f["events"] for size, f in doc["files"].items()}
    lines = ["| size | input | read s | msgspec decode s | traceviz report s | HTA s | "
             "HTA / traceviz | traceviz / msgspec | traceviz peak / file |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for r in sorted(doc["ratios"], key=lambda r: (r["file_mb"], r["input"] != "json")):
        if r["file_mb"] < 50:
            continue  # the 10 MB size: interpreter start dominates
        size, kind = r["size"], r["input"]
        label = size.replace("MB", " MB").replace("GB", " GB")
        if size.endswith("GB"):
            label += f" ({events[size] / 1e6:.2f} M events)"
        lines.append(
            f"| {label} | {kind} | {wall[size, kind, 'read']:.2f} | "
            f"{wall[size, kind, 'msgspec']:.2f} | {r['traceviz_s']:.2f} | "
            f"{wall[size, kind, 'hta']:.1f} | {r['hta_over_traceviz']:.1f}× | "
            f"{r['traceviz_over_msgspec']:.2f} | {r['peak_over_file']:.2f} |")
    return lines


def workers_table(doc: dict[str, Any]) -> list[str]:
    """``benchmarks.workers``' printed summary of a record (its header, table and check)."""
    vs = "against" in doc
    first = doc["rows"][0]["workers"]
    lines = [f"{doc['trace']} ({doc['trace_bytes'] / 1e9:.2f} GB), "
             f"{doc['machine']['usable_cpus']} usable cores; outputs identical: "
             f"{doc['outputs_identical']}",
             f"{'workers':>7} {'median s':>9} {'speed-up':>8} {'peak PSS':>9} {'PSS/file':>8}"
             + (f" {'against s':>9} {'faster':>7}" if vs else "")]
    for row in doc["rows"]:
        lines.append(
            f"{row['workers']:>7} {row['wall_s_median']:>9.2f} "
            f"{row[f'speedup_vs_{first}']:>7.2f}x {row['peak_tree_pss_bytes'] / 1e9:>7.2f}GB "
            f"{row['peak_pss_over_file']:>8.2f}"
            + (f" {row['against_wall_s_median']:>9.2f} {row['speedup_vs_against']:>6.2f}x"
               if vs else ""))
    if vs:
        lines.append(f"against {doc['against']}: outputs identical to this version's: "
                     f"{doc['against_outputs_identical']}")
    return lines


def _spread(values: list[float]) -> str:
    v = sorted(values)
    if len(v) > 2 and v[-1] > 3 * v[-2]:
        return f"{v[0]:.2f}–{v[-2]:.2f}× (one at {v[-1]:.1f}×)"
    return f"{v[0]:.2f}–{v[-1]:.2f}×"


def inflation_table(paths: list[str]) -> list[str]:
    """Lean against stacked inflation per workload and mode, over every round of the files."""
    rounds: dict[str, list[tuple[float, float]]] = {}
    for path in paths:
        for cell in _read(path):
            key = ":".join(cell["cell"].split(":")[:2])
            rounds.setdefault(key, []).extend(
                (r["lean"]["median step"], r["stacked"]["median step"]) for r in cell["rounds"])
    lines = ["| mode | processes of each | lean inflation | stacked inflation | lean the lower |",
             "| --- | --: | --- | --- | --: |"]
    for key, pairs in sorted(rounds.items(),
                             key=lambda kv: -sum(a < b for a, b in kv[1]) / len(kv[1])):
        workload, mode = key.split(":")
        ties = sum(round(a, 2) == round(b, 2) for a, b in pairs)
        lines.append(
            f"| `{workload}` `{mode}` | {len(pairs)} | {_spread([a for a, _ in pairs])} | "
            f"{_spread([b for _, b in pairs])} | {sum(a < b for a, b in pairs)} of {len(pairs)}"
            + (f" ({ties} equal to two decimals)" if ties else "") + " |")
    return lines


def _fuzz_row(doc: dict[str, Any], part: dict[str, Any] | None = None) -> str:
    part = part or {}
    first = part.get("first_index", doc.get("first_index") or 0)
    code = part.get("code_commit") or doc.get("code_commit") or doc["git_commit"][:7]
    c = doc["counts"]
    return (f"| {doc['started_utc'][:10]} | {code} | {doc['seed']} | {doc['examples']:,} "
            f"({first:,}–{first + doc['examples'] - 1:,}) | {doc['workers']} | "
            f"{doc['wall_s']:.1f} ({doc['examples_per_s']:.1f}/s) | {c['ok']:,} | "
            f"{c['ok-health']:,} | {c['clean-error']:,} | **{c['FAILURE']}** | "
            f"{doc['max_rss_mb']:.1f} | {doc['slowest_s']:.2f} |")


def fuzz_table(paths: list[str]) -> list[str]:
    """The campaigns table: one row per result file (or per part of a resumed campaign)."""
    lines = ["| started (UTC) | code | seed | examples (indices) | workers | wall s | ok | "
             "ok-health | clean-error | FAILURE | largest RSS MB | slowest s |",
             "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |"]
    for path in paths:
        doc = _read(path)
        if "parts" not in doc:
            lines.append(_fuzz_row(doc))
            continue
        parts = [(_read(part["file"]), part) for part in doc["parts"]]
        lines += [_fuzz_row(d, part) for d, part in parts]
        total = {k: sum(d["counts"][k] for d, _ in parts) for k in parts[0][0]["counts"]}
        lines.append(
            f"| **the {doc['examples']:,}-example campaign** (the {len(parts)} rows above) | | "
            f"{doc['seed']} | **{doc['examples']:,}** | | {sum(d['wall_s'] for d, _ in parts):.1f}"
            f" | {total['ok']:,} | {total['ok-health']:,} | {total['clean-error']:,} | "
            f"**{total['FAILURE']}** | {max(d['max_rss_mb'] for d, _ in parts):.1f} | "
            f"{max(d['slowest_s'] for d, _ in parts):.2f} |")
    return lines


#: The profiled steps a ``traceviz profile`` window keeps (steps beyond them: a longer window).
WINDOW_STEPS = 5


def _levels(values: list[float]) -> dict[str, Any]:
    """``values`` (``count`` of them) split at their largest ratio between neighbours when
    sorted: the low and the high level, each as ``[min, max]``, its count and its median."""
    v = sorted(values)
    cut = max(range(1, len(v)), key=lambda i: v[i] / v[i - 1])
    return {"count": len(v), "low": [v[0], v[cut - 1]], "low_count": cut, "high": [v[cut], v[-1]],
            "high_count": len(v) - cut, "low_median": statistics.median(v[:cut]),
            "high_median": statistics.median(v[cut:])}


def _lone_outlier(values: list[float]) -> tuple[list[float], float | None]:
    """``values`` less a lone largest value over 3× the next (as ``inflation-table`` shows it
    apart), and that value."""
    v = sorted(values)
    return (v[:-1], v[-1]) if len(v) > 2 and v[-1] > 3 * v[-2] else (v, None)


def _process(record: dict[str, Any]) -> dict[str, float]:
    raw = record["raw"]
    return {"profiled_ms": statistics.median(raw["step_intervals_ms"]),
            "unprofiled_ms": statistics.median(raw["adjacent_intervals_ms"]),
            "inflation": record["median step"]}


def _within(steps: list[float]) -> dict[str, float]:
    """One long profiled window: p10, p90 (numpy linear percentiles) of the steps after the
    first :data:`WINDOW_STEPS` over their median, and the first steps' median over it."""
    import numpy as np

    later = steps[WINDOW_STEPS:]
    median = statistics.median(later)
    return {"p10": float(np.percentile(later, 10)) / median,
            "p90": float(np.percentile(later, 90)) / median,
            "first": statistics.median(steps[:WINDOW_STEPS]) / median}


def inflation_facts(paths: list[str]) -> dict[str, Any]:
    """Facts of ``benchmarks.inflation_spread`` records, rounds pooled per ``WORKLOAD:MODE``.

    ``modes[W:M]``: ``rounds``; per kind (``lean``, ``stacked``): ``profiled_ms``,
    ``unprofiled_ms`` and ``inflation`` as ``[min, max]``, ``inflation_ratio`` (max / min
    without a lone outlier, see :func:`_lone_outlier`) and ``outlier``, ``common`` (the most
    frequent inflation to two decimals) and ``common_count``; over both kinds' processes
    ``unprofiled_ms`` (``[min, max]``) and ``unprofiled_levels`` (:func:`_levels`);
    ``high_rounds`` (rounds with a process at the high level), ``stacked_lower`` (rounds whose
    stacked inflation is the lower), ``high_rounds_stacked_lower``, ``stacked_slower`` (rounds
    whose stacked profiled step is the slower) and ``lean_higher_first`` (rounds of the first
    file whose lean inflation is the higher, of ``rounds_first``). ``between[KIND]``: the
    largest ``inflation_ratio`` over the modes and its mode, the outlier and its mode.
    ``within[KIND]``: over every window longer than :data:`WINDOW_STEPS` steps (``steps``: the
    longest), the lowest p10, highest p90 and
    highest first-steps ratio of :func:`_within`.
    """
    rounds: dict[str, list[dict[str, Any]]] = {}
    first: dict[str, list[dict[str, Any]]] = {}
    windows: dict[str, list[dict[str, float]]] = {"lean": [], "stacked": []}
    steps = 0
    for n, path in enumerate(paths):
        for cell in _read(path):
            key = ":".join(cell["cell"].split(":")[:2])
            rounds.setdefault(key, []).extend(cell["rounds"])
            if n == 0:
                first.setdefault(key, []).extend(cell["rounds"])
            for r in cell["rounds"]:
                for kind in windows:
                    s = r[kind]["raw"]["step_intervals_ms"]
                    if len(s) > WINDOW_STEPS:
                        windows[kind].append(_within(s))
                        steps = max(steps, len(s))
    modes: dict[str, Any] = {}
    for key, rs in rounds.items():
        procs = {kind: [_process(r[kind]) for r in rs] for kind in ("lean", "stacked")}
        mode: dict[str, Any] = {"rounds": len(rs)}
        for kind, ps in procs.items():
            infl = [p["inflation"] for p in ps]
            kept, outlier = _lone_outlier(infl)
            common = statistics.mode(round(i, 2) for i in infl)
            mode[kind] = {**{f: [min(p[f] for p in ps), max(p[f] for p in ps)]
                             for f in ("profiled_ms", "unprofiled_ms", "inflation")},
                          "inflation_ratio": kept[-1] / kept[0], "outlier": outlier,
                          "common": common,
                          "common_count": sum(round(i, 2) == common for i in infl)}
        unprofiled = [p["unprofiled_ms"] for ps in procs.values() for p in ps]
        levels = _levels(unprofiled)
        high = [any(p["unprofiled_ms"] >= levels["high"][0] for p in (le, st))
                for le, st in zip(procs["lean"], procs["stacked"], strict=True)]
        lower = [st["inflation"] < le["inflation"]
                 for le, st in zip(procs["lean"], procs["stacked"], strict=True)]
        mode.update(
            unprofiled_ms=[min(unprofiled), max(unprofiled)], unprofiled_levels=levels,
            high_rounds=sum(high), stacked_lower=sum(lower),
            high_rounds_stacked_lower=sum(h and lo for h, lo in zip(high, lower, strict=True)),
            stacked_slower=sum(st["profiled_ms"] > le["profiled_ms"]
                               for le, st in zip(procs["lean"], procs["stacked"], strict=True)),
            rounds_first=len(first.get(key, [])),
            lean_higher_first=sum(r["lean"]["median step"] > r["stacked"]["median step"]
                                  for r in first.get(key, [])))
        modes[key] = mode
    between = {}
    for kind in ("lean", "stacked"):
        widest = max(modes, key=lambda k: modes[k][kind]["inflation_ratio"])
        out = [k for k in modes if modes[k][kind]["outlier"] is not None]
        between[kind] = {"ratio": modes[widest][kind]["inflation_ratio"], "ratio_mode": widest,
                         "outlier": modes[out[0]][kind]["outlier"] if out else None,
                         "outlier_mode": out[0] if out else None}
    within = {kind: {"p10": min(w["p10"] for w in ws), "p90": max(w["p90"] for w in ws),
                     "first": max(w["first"] for w in ws), "windows": len(ws)}
              for kind, ws in windows.items()}
    return {"modes": modes, "between": between, "within": within, "steps": steps}


def placement_facts(placement: str, pinned: str) -> dict[str, Any]:
    """Facts of a ``benchmarks.cpu_placement`` record and an ``inflation_spread --pin`` one.

    ``sweep[W:M]`` (the pinned sweep of one process): ``readings``, ``unprofiled_ms`` and, for
    ``:profile`` cells, ``inflation`` as ``[min, max]``, ``levels`` (:func:`_levels`) and
    ``by_cpu`` (per CPU, its readings in pass order). ``fresh[W:M]``: the unpinned processes
    (``adjacent_ms``, ``inflation``, ``main_thread_cpus``: the CPUs the sampler found the main
    thread on, most samples first) and ``adjacent_ms`` as ``[min, max]``. ``pinned[W:M]`` and
    ``unpinned[W:M]``: ``rounds``, ``lean_lower``; for both together ``both[W:M]``:
    ``rounds``, ``stacked_slower`` (rounds whose stacked profiled step is the slower), the
    ``lean_profiled_ms``, ``stacked_profiled_ms`` and ``unprofiled_ms`` ranges.
    """
    doc = _read(placement)
    sweep: dict[str, Any] = {}
    fresh: dict[str, Any] = {}
    for cell in doc["cells"]:
        key = ":".join(cell["cell"].split(":")[:2])
        by_cpu: dict[int, list[float]] = {}
        for reading in sorted(cell["sweep"], key=lambda r: r["rep"]):
            by_cpu.setdefault(reading["cpu"], []).append(reading["adjacent_ms"])
        adjacent = [r["adjacent_ms"] for r in cell["sweep"]]
        sweep[key] = {"readings": len(adjacent), "unprofiled_ms": [min(adjacent), max(adjacent)],
                      "levels": _levels(adjacent),
                      "by_cpu": [by_cpu[c] for c in range(max(by_cpu) + 1)]}
        if "inflation" in cell["sweep"][0]:
            infl = [r["inflation"] for r in cell["sweep"]]
            sweep[key]["inflation"] = [min(infl), max(infl)]
        if cell.get("fresh"):
            procs = [{"adjacent_ms": f["adjacent_ms"], "inflation": f["inflation"],
                      "main_thread_cpus": sorted(f["main_thread_cpus"], key=lambda c: (
                          -f["main_thread_cpus"][c], int(c)))} for f in cell["fresh"]]
            fresh[key] = {"processes": procs,
                          "adjacent_ms": [min(p["adjacent_ms"] for p in procs),
                                          max(p["adjacent_ms"] for p in procs)]}
    pins: dict[str, Any] = {}
    unpinned: dict[str, Any] = {}
    both: dict[str, list[dict[str, Any]]] = {}
    for cell in _read(pinned):
        key = cell["cell"]
        into = pins if cell.get("pin") is not None else unpinned
        summary = cell["summary"]["median step"]
        into[key] = {"rounds": summary["rounds"], "lean_lower": summary["rounds_lean_lower"]}
        both.setdefault(key, []).extend(
            {kind: _process(r[kind]) for kind in ("lean", "stacked")} for r in cell["rounds"])
    together = {}
    for key, rs in both.items():
        lean = [r["lean"]["profiled_ms"] for r in rs]
        stacked = [r["stacked"]["profiled_ms"] for r in rs]
        unprof = [r[k]["unprofiled_ms"] for r in rs for k in ("lean", "stacked")]
        together[key] = {"rounds": len(rs),
                         "stacked_slower": sum(s > le for le, s in zip(lean, stacked,
                                                                        strict=True)),
                         "lean_profiled_ms": [min(lean), max(lean)],
                         "stacked_profiled_ms": [min(stacked), max(stacked)],
                         "unprofiled_ms": [min(unprof), max(unprof)]}
    return {"sweep": sweep, "fresh": fresh, "pinned": pins, "unpinned": unpinned,
            "both": together}


def _change_point(times: list[float], values: list[float]) -> dict[str, float]:
    """The one split of a series into a before and an after that leaves the least squared
    deviation from each part's mean: when it happened (s) and each part's median."""
    def cost(part: list[float]) -> float:
        mean = statistics.fmean(part)
        return sum((v - mean) ** 2 for v in part)
    cut = min(range(1, len(values)), key=lambda i: cost(values[:i]) + cost(values[i:]))
    return {"at_s": times[cut], "before_ms": statistics.median(values[:cut]),
            "after_ms": statistics.median(values[cut:])}


def clocks_facts(path: str) -> dict[str, Any]:
    """Facts of a ``benchmarks.gpu_clocks`` record: ``processes``, the SM and CPU clocks seen in
    any window (``sm_mhz``, ``cpu_mhz``: sorted lists), and per ``WORKLOAD:MODE`` the list of
    its processes, each with ``windows``, ``window_median_ms`` (min, p10, median, p90, max of
    the windows' medians) and ``change`` (:func:`_change_point` over every 100th window)."""
    cells = _read(path)
    cpu = {c for cell in cells for c in cell["cpu_mhz_in_windows"]}
    out: dict[str, Any] = {"processes": len(cells),
                           "sm_mhz": sorted({c for cell in cells
                                             for c in cell["sm_mhz_in_windows"]}),
                           "cpu_mhz": sorted(cpu), "modes": {}}
    for cell in cells:
        sample = cell["every_100th_window"]
        out["modes"].setdefault(cell["cell"], []).append(
            {"windows": cell["windows"], "window_median_ms": cell["window_median_ms"],
             "change": _change_point([w["t_s"] for w in sample],
                                     [w["median_ms"] for w in sample])})
    return out


def mode_blocks(mode: str, runs: list[str]) -> dict[str, Any]:
    """A mode's paired blocks per run directory (``runs[RUN]``: ``median_ms``, ``fastest_ms``,
    ``issue_ms``: the median block, the fastest block and the median host issue time, ms per
    step), their ranges over the runs (``median_ms``, ``fastest_ms``), and the runs whose
    fastest block is within 1.2× the fastest of all (``usual``: their count and fastest-block
    range) or beyond it (``slow``: the run directories)."""
    per: dict[str, dict[str, float]] = {}
    for run in runs:
        paired = _read(str(Path(run) / "manifest.json"))["modes"][mode]["paired"]
        per[run] = {"median_ms": statistics.median(paired["mode_block_ms"]),
                    "fastest_ms": min(paired["mode_block_ms"]),
                    "issue_ms": statistics.median(paired["mode_issue_ms"])}
    floor = min(r["fastest_ms"] for r in per.values())
    usual = [r["fastest_ms"] for r in per.values() if r["fastest_ms"] <= 1.2 * floor]
    return {"runs": per, "count": len(per),
            **{f: [min(r[f] for r in per.values()), max(r[f] for r in per.values())]
               for f in ("median_ms", "fastest_ms")},
            "usual": {"count": len(usual), "fastest_ms": [min(usual), max(usual)]},
            "slow": [run for run, r in per.items() if r["fastest_ms"] > 1.2 * floor]}


def block_spreads(run: str, modes: list[str]) -> dict[str, float]:
    """Per mode of run directory ``run``: its paired blocks' p10–p90 over their median (a
    fraction; p10 and p90 the inclusive-method deciles of the blocks' ms per step)."""
    manifest = _read(str(Path(run) / "manifest.json"))
    out = {}
    for mode in modes:
        blocks = manifest["modes"][mode]["paired"]["mode_block_ms"]
        deciles = statistics.quantiles(blocks, n=10, method="inclusive")
        out[mode] = (deciles[-1] - deciles[0]) / statistics.median(blocks)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[0] == "json" and all("=" in a for a in args[1:]):
        print(json.dumps({name: with_spreads(_read(path))
                          for name, path in (a.split("=", 1) for a in args[1:])}))
    elif len(args) == 2 and args[0] == "run-table":
        print("\n".join(run_table(_read(args[1]))))
    elif len(args) >= 2 and args[0] == "inflation-table":
        print("\n".join(inflation_table(args[1:])))
    elif len(args) >= 2 and args[0] == "fuzz-table":
        print("\n".join(fuzz_table(args[1:])))
    elif len(args) == 2 and args[0] == "workers-table":
        print("\n".join(workers_table(_read(args[1]))))
    elif len(args) >= 2 and args[0] == "inflation-facts":
        print(json.dumps(inflation_facts(args[1:])))
    elif len(args) == 3 and args[0] == "placement-facts":
        print(json.dumps(placement_facts(args[1], args[2])))
    elif len(args) == 2 and args[0] == "clocks-facts":
        print(json.dumps(clocks_facts(args[1])))
    elif len(args) >= 3 and args[0] == "mode-blocks":
        print(json.dumps(mode_blocks(args[1], args[2:])))
    elif len(args) >= 3 and args[0] == "block-spreads":
        print(json.dumps(block_spreads(args[1], args[2:])))
    else:
        print("usage: python scripts/bench_facts.py json NAME=FILE… | run-table FILE | "
              "workers-table FILE | inflation-table FILE… | fuzz-table FILE… | "
              "inflation-facts FILE… | placement-facts PLACEMENT PINNED | clocks-facts FILE | "
              "mode-blocks MODE RUN… | block-spreads RUN MODE…", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

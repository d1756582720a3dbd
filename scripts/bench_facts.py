"""Facts from committed benchmark results files, for the docs' generated blocks.

``python scripts/bench_facts.py SUBCOMMAND FILE…`` reads results under ``benchmarks/results/``
and prints what a page states about them; ``scripts/docs_outputs.py`` regenerates the blocks,
so a page's benchmark numbers are the files' numbers. Subcommands:

* ``json NAME=FILE…``: one JSON object ``{NAME: the file's content}``, for the ``json-format``
  filter's prose templates (``{w[rows][0][wall_s_median]:.2f}``). Every list of two or more
  numbers under a key ``K`` also gets ``K_min``, ``K_max`` and ``K_median`` beside it (the
  spread a sentence quotes).
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
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any


def _numbers(value: object) -> bool:
    return (isinstance(value, list) and len(value) >= 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))


def with_spreads(value: Any) -> Any:
    """``value`` with ``K_min``, ``K_max``, ``K_median`` beside each numeric list ``K``."""
    if isinstance(value, list):
        return [with_spreads(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: with_spreads(v) for k, v in value.items()}
    for k, v in value.items():
        if _numbers(v):
            out.update({f"{k}_min": min(v), f"{k}_max": max(v),
                        f"{k}_median": statistics.median(v)})
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
    else:
        print("usage: python scripts/bench_facts.py json NAME=FILE… | run-table FILE | "
              "workers-table FILE | inflation-table FILE… | fuzz-table FILE…",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

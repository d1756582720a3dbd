"""Run the cases of every category on a thread pool (each case is child processes), summarise
per category and write the result file."""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from benchmarks.adversarial import manifests, options, outputs, traces
from benchmarks.adversarial.harness import CHECKS, REPO, Case, Outcome, run_case

CATEGORIES = (outputs, traces, manifests, options)
#: Summary columns: a check's failures counted per category.
COLUMNS = {"data-loss": "data loss", "traceback": "tracebacks", "hang": "hangs",
           "exit": "bad exit", "unnamed": "unnamed wrong", "output": "bad output",
           "harness": "harness"}


def all_cases() -> list[Case]:
    """Every case, in a fixed order (ids are unique)."""
    out = [c for mod in CATEGORIES for c in mod.cases()]
    ids = Counter(c.id for c in out)
    dup = [i for i, n in ids.items() if n > 1]
    if dup:
        raise ValueError(f"duplicate case ids: {dup[:5]}")
    return out


def select(cases: list[Case], only: list[str] | None) -> list[Case]:
    """The cases whose category or id prefix is in ``only`` (all when None)."""
    if not only:
        return cases
    return [c for c in cases if c.category in only or any(c.id.startswith(o) for o in only)]


def run_all(cases: list[Case], jobs: int, progress: bool = True) -> list[Outcome]:
    """Run ``cases`` on ``jobs`` threads; outcomes in the cases' order."""
    done = 0

    def one(case: Case) -> Outcome:
        nonlocal done
        o = run_case(case)
        done += 1
        if progress:
            mark = "skip" if o.skipped else ("ok" if o.ok else "FAIL " + ",".join(o.problems))
            print(f"[{done}/{len(cases)}] {case.id}: {mark} ({o.wall_s:.1f} s)",
                  file=sys.stderr, flush=True)
        return o

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, cases))


def summarise(outcomes: list[Outcome]) -> dict[str, dict[str, int]]:
    """Per category (and ``all``): cases, skipped, failed, and the failures of each check."""
    table: dict[str, dict[str, int]] = {}
    for key in [*dict.fromkeys(o.category for o in outcomes), "all"]:
        row = table[key] = {"cases": 0, "skipped": 0, "failed": 0, **dict.fromkeys(CHECKS, 0)}
        for o in outcomes:
            if key in (o.category, "all"):
                row["cases"] += 1
                row["skipped"] += o.skipped is not None
                row["failed"] += not o.ok
                for check in o.problems:
                    row[check] += 1
    return table


def render(table: dict[str, dict[str, int]], outcomes: list[Outcome]) -> str:
    """The summary table and the failing cases, one line each."""
    head = ["category", "cases", "skipped", "failed", *COLUMNS.values()]
    rows = [[k, *(str(v[c]) for c in ("cases", "skipped", "failed", *COLUMNS))]
            for k, v in table.items()]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(x.rjust(w) if i else x.ljust(w) for i, (x, w) in
                       enumerate(zip(r, widths, strict=True))) for r in [head, *rows]]
    failing = [o for o in outcomes if not o.ok]
    if failing:
        lines += ["", f"failing cases ({len(failing)}):"]
        for o in failing:
            for check, why in o.problems.items():
                lines.append(f"  {o.id}  [{check}] {why[:300]}")
    return "\n".join(lines)


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _dirty() -> bool | None:
    try:
        return bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                    "traceviz"], capture_output=True, text=True,
                                   check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.adversarial",
                                 description=__doc__)
    ap.add_argument("--out", type=Path, help="result file (JSON)")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    ap.add_argument("--only", action="append", help="a category or a case-id prefix "
                    "(repeatable); default: every case")
    ap.add_argument("--list", action="store_true", help="print the case ids and exit")
    args = ap.parse_args(argv)
    cases = select(all_cases(), args.only)
    if args.list:
        print("\n".join(c.id for c in cases))
        return 0
    if not cases:
        ap.error(f"no case matches {args.only}")
    t0 = time.perf_counter()
    outcomes = run_all(cases, args.jobs)
    wall = time.perf_counter() - t0
    table = summarise(outcomes)
    print(render(table, outcomes))
    print(f"\n{len(outcomes)} cases in {wall:.0f} s ({args.jobs} jobs)")
    if args.out:
        result = {
            "campaign": "traceviz adversarial (issue 37)",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git_commit(), "traceviz_dirty": _dirty(), "python": sys.version.split()[0],
            "machine": platform.platform(), "jobs": args.jobs, "only": args.only,
            "wall_s": round(wall, 1), "summary": table,
            "failures": [asdict(o) for o in outcomes if not o.ok],
            "cases": [{"id": o.id, "ok": o.ok, "skipped": o.skipped, "wall_s": o.wall_s,
                       "rc": [s["rc"] for s in o.steps], "problems": sorted(o.problems),
                       **({"new_paths": o.new_paths} if o.new_paths else {})}
                      for o in outcomes],
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 1 if any(not o.ok for o in outcomes) else 0

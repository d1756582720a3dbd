"""Snapshot `traceviz report --format json` of every committed trace and run dir.

Writes one JSON file per report into an output folder, so that two snapshots (before and
after a refactor) can be compared with `diff -r`:

    PYTHONPATH=$PWD .venv/bin/python scripts/outputs_snapshot.py /tmp/snap_before --workers 2
    ... change the code ...
    PYTHONPATH=$PWD .venv/bin/python scripts/outputs_snapshot.py /tmp/snap_after --workers 2
    diff -r /tmp/snap_before /tmp/snap_after

The reports covered: every `*.json.gz` trace under `reports/` (one single-trace report each),
every run dir (`reports/*/` and `reports/reviews/*/` holding a `manifest.json`: the
comparison report), each mode's rank traces of a distributed run dir together (the
multi-rank report), and every `../shared/cases/hta/*.json.gz` trace when that folder exists.
Each report runs as its own `python -P -m traceviz` process, in the repository root, with the
`PYTHONPATH` this script was given (`-P` keeps the root itself off `sys.path`), so the code
under test is whichever tree `PYTHONPATH` names: snapshot an untouched copy
(`git archive HEAD traceviz | tar -x -C /tmp/base`, `PYTHONPATH=/tmp/base`) while editing.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTA_CASES = ROOT.parent / "shared" / "cases" / "hta"
_RANK_TRACE = re.compile(r"^(?P<mode>.+)\.rank\d+\.pt\.trace\.json\.gz$")


def report_targets() -> dict[str, list[str]]:
    """Snapshot file name → the `traceviz report` targets (paths relative to the repo root)."""
    reports = ROOT / "reports"
    targets: dict[str, list[str]] = {}
    for trace in sorted(reports.rglob("*.json.gz")):
        rel = trace.relative_to(ROOT).as_posix()
        targets["trace__" + rel.replace("/", "__") + ".json"] = [rel]
    for manifest in sorted(reports.rglob("manifest.json")):
        run_dir = manifest.parent
        rel = run_dir.relative_to(ROOT).as_posix()
        targets["run__" + rel.replace("/", "__") + ".json"] = [rel]
        ranks: dict[str, list[str]] = defaultdict(list)
        for trace in sorted(run_dir.glob("*.json.gz")):
            match = _RANK_TRACE.match(trace.name)
            if match:
                ranks[match["mode"]].append(trace.relative_to(ROOT).as_posix())
        for mode, files in sorted(ranks.items()):
            if len(files) > 1:
                targets["ranks__" + rel.replace("/", "__") + f"__{mode}.json"] = files
    if HTA_CASES.is_dir():
        for trace in sorted(HTA_CASES.glob("*.json.gz")):
            targets["hta__" + trace.name + ".json"] = [str(trace)]
    return targets


def snapshot_one(name: str, files: list[str], out_dir: Path) -> str | None:
    """Write one report's JSON (or its failure: exit code and stderr); None, or an error line."""
    # -P: the repo root (the cwd) is not put on sys.path, so PYTHONPATH picks the tree under test.
    cmd = [sys.executable, "-P", "-m", "traceviz", "report", *files, "--format", "json", "-j", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=os.environ.copy())
    if proc.returncode != 0:
        (out_dir / (name + ".failed")).write_text(f"exit {proc.returncode}\n{proc.stderr}")
        return f"{name}: exit {proc.returncode}"
    (out_dir / name).write_text(proc.stdout)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the JSON files into")
    parser.add_argument("--workers", type=int, default=1, help="reports run at once")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    targets = report_targets()
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        errors = [
            e
            for e in pool.map(lambda item: snapshot_one(*item, args.out_dir), targets.items())
            if e
        ]
    print(f"{len(targets)} reports, {len(targets) - len(errors)} written, {len(errors)} failed")
    for line in errors:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

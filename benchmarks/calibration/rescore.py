"""Score stored calibration results again with the current scorer (no profiling).

``python -m benchmarks.calibration.rescore RESULTS... [--runs DIR | --reports DIR]
[--manifests DIR]`` rewrites each results file of :mod:`benchmarks.calibration.run` in place:
every cell × mode is scored by :func:`benchmarks.calibration.score.score` and the summary is
recomputed. Without options the stored ``recovered`` values are scored. With ``--runs`` each
cell's report is first rendered again by the current traceviz from its run directory
``DIR/<cell>`` and its old version's ``DIR/<cell>/old`` (``traceviz report … -f json``), so a
change to the analysis is scored on the same measurements. With ``--reports DIR`` the stored
JSON reports ``DIR/<cell>.json`` and ``DIR/<cell>.old.json`` (written by the run) are read
again. With ``--manifests DIR`` (run directories whose traces were not kept:
``DIR/<cell>/manifest.json``) the Δ host issue and the old → new verdict of every ``--against``
cell are taken from the paired blocks of the run's manifest by
:func:`traceviz.analyze.review.version_diff.paired_issue` and ``version_speed``, as the
current report does. The cells' truths are built again from the stored probe by the
current :mod:`benchmarks.calibration.cells`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.calibration.cells import rebuilt
from benchmarks.calibration.run import write_results
from benchmarks.calibration.score import recovered_against, score
from traceviz.analyze.review.version_diff import (
    entry_capture_spread_ns,
    paired_issue,
    version_speed,
)
from traceviz.analyze.verdicts import Thresholds
from traceviz.collect.run_files import OLD_DIR


def _report_again(run_dir: Path) -> dict[str, Any] | None:
    """The JSON report of ``run_dir`` as the current traceviz renders it."""
    done = subprocess.run([sys.executable, "-m", "traceviz", "report", str(run_dir), "-f",
                           "json"], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout else None


def _entry(manifest: Path, mode: str) -> dict[str, Any]:
    if not manifest.is_file():
        return {}
    return (json.loads(manifest.read_text()).get("modes") or {}).get(mode) or {}


def paired_issue_ns(entry: dict[str, Any]) -> tuple[float, float] | None:
    """OLD's and NEW's unprofiled host issue per step (ns) from the paired blocks of a
    ``profile --against`` run's manifest mode ``entry`` (``None``: absent)."""
    pair = paired_issue(entry.get("against"))
    return None if pair is None else (pair.a * 1e6, pair.b * 1e6)


def paired_verdict(entry: dict[str, Any], min_speedup: float) -> str | None:
    """The old → new verdict as the current traceviz gives it from the paired blocks of a
    ``profile --against`` run's manifest mode ``entry`` (its band widened where the mode
    replays CUDA graphs: :func:`traceviz.analyze.review.version_diff.entry_capture_spread_ns`);
    ``None``: no usable blocks."""
    speed = version_speed(entry.get("against"), min_speedup, entry_capture_spread_ns(entry))
    return None if speed is None else speed.status


def rescore(path: Path, runs: Path | None = None, manifests: Path | None = None,
            reports: Path | None = None) -> None:
    """Score the results file at ``path`` again, in place (``runs``: report again first). The
    cells are built again from the stored probe (:func:`benchmarks.calibration.cells.rebuilt`),
    so the current truth models are scored."""
    record = json.loads(path.read_text())
    cells = {c.name: c for c in rebuilt(record["cells"], record.get("probe"), record["device"])}
    record["cells"] = [c.to_dict() for c in cells.values()]
    docs = {name: (_report_again(runs / name), _report_again(runs / name / OLD_DIR))
            for name in cells if runs is not None and cells[name].nproc == 1}
    scores = []
    for s in record["scores"]:
        rec = s["recovered"]
        if s["cell"] in docs:
            doc, old_doc = docs[s["cell"]]
            rec = recovered_against(doc, s["mode"], old_doc) if doc is not None else None
        if reports is not None and (reports / f"{s['cell']}.json").is_file():
            doc = json.loads((reports / f"{s['cell']}.json").read_text())
            old_path = reports / f"{s['cell']}.old.json"
            old_doc = json.loads(old_path.read_text()) if old_path.is_file() else None
            rec = recovered_against(doc, s["mode"], old_doc)
        if manifests is not None and rec is not None and cells[s["cell"]].nproc == 1:
            entry = _entry(manifests / s["cell"] / "manifest.json", s["mode"])
            if issue := paired_issue_ns(entry):
                rec = {**rec, "old_host_issue_ns": issue[0],
                       "host_issue_ns": issue[1] - issue[0]}
            if verdict := paired_verdict(entry, rec.get("min_speedup") or
                                         Thresholds().min_speedup):
                rec = {**rec, "verdict": verdict}
        kept = {k: s[k] for k in ("load_start_1m", "loadavg_1m", "waited_s") if k in s}
        scores.append({**score(cells[s["cell"]], s["mode"], record["device"], rec).to_dict(),
                       **kept})
    record["scores"] = scores
    write_results(record, [path])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--runs", type=Path, help="report each cell's run directory again")
    parser.add_argument("--manifests", type=Path,
                        help="take Δ host issue and the verdict from the paired blocks of "
                        "DIR/<cell>/manifest.json")
    parser.add_argument("--reports", type=Path,
                        help="score the stored reports DIR/<cell>.json and DIR/<cell>.old.json")
    args = parser.parse_args(argv)
    for p in args.results:
        rescore(p, args.runs, args.manifests, args.reports)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

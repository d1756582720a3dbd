"""Score stored calibration results again with the current scorer (no profiling).

``python -m benchmarks.calibration.rescore RESULTS... [--runs DIR]`` rewrites each results file of
:mod:`benchmarks.calibration.run` in place: every cell × mode is scored by
:func:`benchmarks.calibration.score.score` and the summary is recomputed. Without ``--runs`` the
stored ``recovered`` values are scored; with it, each cell's report is first rendered again by
the current traceviz from its run directory ``DIR/<cell>`` and its old version's ``DIR/<cell>/old``
(``traceviz report … -f json``), so a change to the analysis is scored on the same measurements.
The cells' truths are built again from the stored probe by the current
:mod:`benchmarks.calibration.cells`.
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
from traceviz.collect.run_files import OLD_DIR


def _report_again(run_dir: Path) -> dict[str, Any] | None:
    """The JSON report of ``run_dir`` as the current traceviz renders it."""
    done = subprocess.run([sys.executable, "-m", "traceviz", "report", str(run_dir), "-f",
                           "json"], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout else None


def rescore(path: Path, runs: Path | None = None) -> None:
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
        kept = {k: s[k] for k in ("load_start_1m", "loadavg_1m", "waited_s") if k in s}
        scores.append({**score(cells[s["cell"]], s["mode"], record["device"], rec).to_dict(),
                       **kept})
    record["scores"] = scores
    write_results(record, [path])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--runs", type=Path, help="report each cell's run directory again")
    args = parser.parse_args(argv)
    for p in args.results:
        rescore(p, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""docs/calibration.md is what the committed results render: the page is generated from the
files :data:`benchmarks.calibration.table.STANDING` lists, in that order."""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.calibration.table import STANDING, listed, render

ROOT = Path(__file__).resolve().parent.parent


def test_the_calibration_page_is_generated_from_the_listed_results(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    paths = listed(STANDING)
    assert paths and all(p.is_file() for p in paths), paths
    assert render(paths) == (ROOT / "docs" / "calibration.md").read_text(), (
        "stale: python -m benchmarks.calibration.table --list "
        f"{os.path.relpath(STANDING, ROOT)} > docs/calibration.md")

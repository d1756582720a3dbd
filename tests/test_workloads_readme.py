"""``workloads/README.md`` names every bundled workload file (issue 38: three were missing)."""

from __future__ import annotations

from pathlib import Path

WORKLOADS = Path(__file__).resolve().parents[1] / "workloads"


def test_the_workloads_readme_names_every_workload_file() -> None:
    text = (WORKLOADS / "README.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in WORKLOADS.glob("*.py"))
    assert len(files) >= 10
    assert [f for f in files if f"`{f}`" not in text] == []

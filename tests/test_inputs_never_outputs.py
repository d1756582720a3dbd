"""Inputs are never outputs: every command that writes refuses an output that is one of its
inputs — by the same name, a symbolic link, ``..`` or a hard link — with ``--force`` or
without, in a real subprocess, and the input is left byte for byte as it was."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synthetic_runs import standard_run


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    return standard_run(tmp_path / "run")


def aliases(target: Path, tmp: Path) -> list[Path]:
    """The same file by its name, through ``..``, a symbolic link and a hard link."""
    link = tmp / "link.json.gz"
    link.symlink_to(target)
    hard = tmp / "hard.json.gz"
    os.link(target, hard)
    return [target, target.parent / ".." / target.parent.name / target.name, link, hard]


def refused(proc: subprocess.CompletedProcess[str], victim: Path, before: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "inputs are never overwritten" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert digest(victim) == before


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_report_refuses_to_write_over_the_trace_it_reads(run_dir, tmp_path, force):
    trace = run_dir / "eager.pt.trace.json.gz"
    before = digest(trace)
    for out in aliases(trace, tmp_path):
        proc = traceviz("report", str(out if out.is_symlink() else trace), "--format", "json",
                        "-o", str(trace if out.is_symlink() else out), *force)
        refused(proc, trace, before)


@pytest.mark.parametrize("name", ["manifest.json", "compile.pt.trace.json.gz", "logs/x.log"])
def test_report_of_a_run_directory_refuses_to_write_over_its_files(run_dir, name):
    victim = run_dir / name
    if not victim.exists():
        victim.parent.mkdir(exist_ok=True)
        victim.write_text("a mode's log\n")
    before = digest(victim)
    refused(traceviz("report", str(run_dir), "--format", "md", "-o", str(victim), "--force"),
            victim, before)


def test_report_of_a_run_directory_may_still_replace_its_own_report(run_dir):
    (run_dir / "report.html").write_text("an older report")
    proc = traceviz("report", str(run_dir), "--plotlyjs", "cdn", "--force")
    assert proc.returncode == 0, proc.stderr
    assert "<html" in (run_dir / "report.html").read_text()[:200].lower()


def test_compare_refuses_to_write_over_either_trace(run_dir, tmp_path):
    a, b = run_dir / "eager.pt.trace.json.gz", run_dir / "compile.pt.trace.json.gz"
    before = digest(b)
    for out in aliases(b, tmp_path):
        refused(traceviz("compare", str(a), str(b), "--format", "json", "-o", str(out),
                         "--force"), b, before)


def test_export_refuses_to_write_over_the_trace_it_exports(run_dir, tmp_path):
    trace = run_dir / "eager.pt.trace.json.gz"
    before = digest(trace)
    for out in aliases(trace, tmp_path):
        refused(traceviz("export", str(trace), "-o", str(out), "--force"), trace, before)


def test_profile_refuses_a_run_directory_that_holds_its_workload(tmp_path):
    out = tmp_path / "old-run"
    out.mkdir()
    (out / "manifest.json").write_text("{}")  # an earlier run directory: --force may replace it
    workload = out / "mine.py"
    workload.write_text("DESCRIPTION = 'x'\n")
    before = digest(workload)
    proc = traceviz("profile", str(workload), "--out", str(out), "--force")
    refused(proc, workload, before)

"""`traceviz compare` / `report RUN_DIR` / `check` end to end, in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synthetic_runs import standard_run


def traceviz(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return standard_run(tmp_path_factory.mktemp("run"))


def test_report_on_a_run_dir_writes_its_html_there_and_says_what_to_open(run_dir: Path) -> None:
    r = traceviz("report", str(run_dir), "--plotlyjs", "cdn", "--force")
    assert r.returncode == 0, r.stderr
    out = run_dir / "report.html"
    assert out.is_file() and "open it in a browser" in r.stderr and out.as_uri() in r.stderr


def test_compare_refuses_an_existing_output_before_reading_the_traces(tmp_path: Path) -> None:
    broken = tmp_path / "eager.pt.trace.json"
    broken.write_text("not json")
    out = tmp_path / "c.json"
    out.write_text("keep")
    r = traceviz("compare", str(broken), str(broken), "-f", "json", "-o", str(out))
    assert r.returncode == 1 and "exists; use --force" in r.stderr, r.stderr
    assert out.read_text() == "keep"


def test_compare_traces_refuses_to_overwrite_without_force(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    out.write_text("keep")
    args = ["compare", str(run_dir / "eager.pt.trace.json.gz"),
            str(run_dir / "compile.pt.trace.json.gz"), "-f", "json", "-o", str(out)]
    r = traceviz(*args)
    assert r.returncode == 1 and "--force" in r.stderr and out.read_text() == "keep"
    assert traceviz(*args, "--force").returncode == 0
    doc = json.loads(out.read_text())
    assert doc["baseline"] == "eager" and [r["mode"] for r in doc["rows"]] == ["eager", "compile"]


def test_compare_threshold_option_reaches_the_verdicts(run_dir: Path) -> None:
    r = traceviz("compare", str(run_dir), "-f", "json", "-t", "launch_min_wait_share=0.99")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    launch = next(v for v in doc["verdicts"] if (v["mode"], v["kind"]) == ("compile", "launch"))
    assert launch["status"] == "NO_WIN" and launch["thresholds"]["launch_min_wait_share"] == 0.99
    assert "host + sync wait explain only 66% of the period saved" in launch["explanation"]


def test_check_passes_when_expectations_hold(run_dir: Path) -> None:
    r = traceviz("check", str(run_dir), "--expect", "compile:fusion=WIN",
                 "--expect", "cudagraph:launch=WIN", "-e", "broken:launch!=WIN",
                 "-e", "compile:speed=WIN")
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_exits_nonzero_on_an_unmet_expectation(run_dir: Path) -> None:
    r = traceviz("check", str(run_dir), "--expect", "compile:fusion=WIN",
                 "--expect", "compile:launch=REGRESSION")
    assert r.returncode == 3
    assert "UNMET" in r.stdout and "1 of 2 expectation(s) not met" in r.stderr


@pytest.mark.parametrize("expect", ["compile-fusion-WIN", "compile:speedup=WIN",
                                    "compile:fusion=GREAT", "nosuchmode:fusion=WIN"])
def test_check_rejects_malformed_or_unknown_expectations(run_dir: Path, expect: str) -> None:
    r = traceviz("check", str(run_dir), "--expect", expect)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_write_run_report_puts_the_comparison_in_the_run_dir(tmp_path: Path) -> None:
    from traceviz.report.compare_report import write_run_report

    run = standard_run(tmp_path)
    out, comparison = write_run_report(run, plotlyjs="cdn")
    assert {h.mode for h in comparison.headlines} == set(comparison.rows[i].mode
                                                         for i in range(1, len(comparison.rows)))
    assert out == run / "report.html"
    page = out.read_text()
    assert "traceviz comparison: synthetic" in page and 'id="tbl-verdicts"' in page

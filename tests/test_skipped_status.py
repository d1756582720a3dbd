"""One name for a mode the run skipped: its verdicts' status is SKIPPED in the data, the API,
every format and ``check``; ``--expect M:K=SKIPPED`` is a valid expectation, and any other
expectation on a skipped mode fails, naming SKIPPED, unless ``--allow-skipped``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synthetic_runs import COMPILED, EAGER, FAILED, ModeSpec, write_run_dir
from traceviz.cli.compare_cmd import OK, SKIPPED_OK, UNMET, expectation_result, parse_expectation

SKIP = ModeSpec(kernels=(), status="skipped", reason="cudagraph needs a CUDA device",
                correct=None)


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run_dir(tmp_path_factory.mktemp("skipped"),
                         {"eager": EAGER, "compile": COMPILED, "cudagraph": SKIP,
                          "broken": FAILED})


def test_skipped_is_an_expectation_status_in_any_case() -> None:
    assert parse_expectation("cudagraph:launch=skipped") == ("cudagraph", "launch", "=",
                                                             "SKIPPED")
    assert parse_expectation("cudagraph:launch!=SKIPPED")[2:] == ("!=", "SKIPPED")


@pytest.mark.parametrize(("actual", "op", "status", "allow", "result"), [
    ("SKIPPED", "=", "WIN", False, UNMET),
    ("SKIPPED", "!=", "REGRESSION", False, UNMET),  # a skip vouches for nothing
    ("SKIPPED", "=", "WIN", True, SKIPPED_OK),
    ("SKIPPED", "!=", "REGRESSION", True, SKIPPED_OK),
    ("SKIPPED", "=", "SKIPPED", False, OK),
    ("SKIPPED", "!=", "SKIPPED", True, UNMET),
    ("WIN", "=", "SKIPPED", False, UNMET),
    ("WIN", "=", "WIN", True, OK),
    ("INCONCLUSIVE", "=", "WIN", True, UNMET),  # --allow-skipped lets skips through only
])
def test_an_expectation_on_a_skipped_mode_fails_unless_skips_are_allowed(
        actual: str, op: str, status: str, allow: bool, result: str) -> None:
    assert expectation_result(actual, op, status, allow) == result


def test_check_names_the_skipped_mode_skipped_and_fails_on_it(run: Path) -> None:
    r = traceviz("check", str(run), "--expect", "compile:speed=WIN",
                 "--expect", "cudagraph:launch=WIN")
    assert r.returncode == 3, r.stderr
    row = next(line for line in r.stdout.splitlines() if "cudagraph:launch=WIN" in line)
    assert "SKIPPED" in row and "UNMET" in row and "INCONCLUSIVE" not in row
    assert "1 on a skipped mode: --allow-skipped" in r.stderr


def test_allow_skipped_lets_expectations_on_skipped_modes_pass(run: Path) -> None:
    r = traceviz("check", str(run), "--expect", "compile:speed=WIN",
                 "--expect", "cudagraph:launch=WIN", "--allow-skipped")
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(line for line in r.stdout.splitlines() if "cudagraph:launch=WIN" in line)
    assert "SKIPPED" in row and "skipped" in row.replace("SKIPPED", "")


def test_expecting_skipped_holds_on_a_skipped_mode(run: Path) -> None:
    r = traceviz("check", str(run), "--expect", "cudagraph:launch=SKIPPED")
    assert r.returncode == 0, r.stdout + r.stderr


def test_allow_skipped_with_against_is_a_usage_error(run: Path) -> None:
    r = traceviz("check", str(run), "--against", str(run), "--allow-skipped")
    assert r.returncode == 2 and "--allow-skipped applies to --expect" in r.stderr


def test_every_format_and_the_api_say_skipped(run: Path) -> None:
    from traceviz.api import load_run

    comparison = load_run(run).compare()
    assert {v.status for v in comparison.result.verdicts if v.mode == "cudagraph"} == {"SKIPPED"}
    assert {v.status for v in comparison.result.verdicts if v.mode == "broken"} == {
        "INCONCLUSIVE"}  # a failed mode: INCONCLUSIVE data, FAILED badge
    said = repr(comparison)
    assert "3 SKIPPED" in said and "3 FAILED" in said, said
    doc = json.loads(comparison.render("json"))
    assert {v["status"] for v in doc["verdicts"] if v["mode"] == "cudagraph"} == {"SKIPPED"}
    assert doc["headline"]["cudagraph"]["speed_status"] == "SKIPPED"
    for fmt in ("text", "md"):
        out = comparison.render(fmt)
        rows = [line for line in out.splitlines() if "cudagraph" in line and "SKIPPED" in line]
        assert rows and not any("INCONCLUSIVE" in line for line in rows), (fmt, out)
    assert '<span class="status st-SKIPPED">SKIPPED</span>' in comparison.render("html", "cdn")


def test_a_skipped_modes_headline_says_skipped_once(run: Path) -> None:
    from traceviz.api import load_run

    heads = {h.mode: h.text for h in load_run(run).compare().result.headlines}
    assert heads["cudagraph"] == "skipped: cudagraph needs a CUDA device"
    assert heads["broken"].startswith("not measured: failed: ")

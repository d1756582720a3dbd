"""Run manifests are checked before anything reads them (issue 37, item 6): an edited speed-up
or CI, block times that are zero, negative, NaN or strings, missing keys and wrong types each
stop every reader with one line naming the file and the field (exit 1); every committed run and
every run the test helpers build validates; informational fields out of range are warnings."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import traceviz
from tests.synthetic_runs import COMPILED, CUDAGRAPH, EAGER, paired, paired_split, write_run_dir
from traceviz.analyze.review.manifest_check import (
    SUPPORTED_SCHEMAS,
    ManifestError,
    check_manifest,
    manifest_warnings,
)
from traceviz.collect.manifest import SCHEMA_VERSION
from traceviz.errors import TracevizError
from traceviz.report.compare_report import build, load_run_dir

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted([*ROOT.glob("reports/**/manifest.json"),
                    *ROOT.glob("tests/data/*/*/manifest.json")])
RMS = ROOT / "reports" / "rmsnorm_residual"
TP = ROOT / "reports" / "tp_mlp"
needs_runs = pytest.mark.skipif(not RMS.is_dir() or not TP.is_dir(),
                                reason="committed runs absent")

Edit = Callable[[dict[str, Any]], None]


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _compile_paired(m: dict[str, Any]) -> dict[str, Any]:
    return m["modes"]["compile"]["paired"]


def _set(key: str, value: Any) -> Edit:
    return lambda m: _compile_paired(m).__setitem__(key, value)


def _block(key: str, i: int, value: Any) -> Edit:
    return lambda m: _compile_paired(m)[key].__setitem__(i, value)


def _swap(m: dict[str, Any]) -> None:
    p = _compile_paired(m)
    p["ci_low"], p["ci_high"] = p["ci_high"], p["ci_low"]


def test_every_committed_manifest_validates_without_warnings() -> None:
    assert len(COMMITTED) >= 22, COMMITTED  # reports/ and tests/data/: not a vacuous pass
    for path in COMMITTED:
        m = _read(path)
        check_manifest(m, str(path))
        assert manifest_warnings(m) == (), path


def test_the_schemas_read_are_those_the_runner_has_written() -> None:
    assert tuple(range(1, SCHEMA_VERSION + 1)) == SUPPORTED_SCHEMAS
    assert {_read(p)["schema"] for p in COMMITTED} == {1, 2, 3}  # each one is exercised


def test_runs_the_test_helpers_build_validate(tmp_path: Path) -> None:
    split = paired_split([1.0, 1.1, 0.9], [0.5, 0.6, 0.45], [0.8, 0.9, 0.7], [0.3] * 3)
    runs = {
        "schema1": {"eager": EAGER, "compile": COMPILED, "cudagraph": CUDAGRAPH},
        "schema2": {"eager": EAGER, "compile": replace(COMPILED, paired=paired(2.0, 1.9, 2.1)),
                    "slow": replace(COMPILED, paired=paired(0.8, 0.78, 0.82, pairs=16))},
        "schema3": {"eager": EAGER, "compile": replace(COMPILED, paired=split)},
        "failed": {"eager": EAGER, "compile": replace(COMPILED, status="failed",
                                                      reason="boom",
                                                      paired={"error": "eager raised"})},
    }
    for name, modes in runs.items():
        m = _read(write_run_dir(tmp_path / name, modes) / "manifest.json")
        check_manifest(m, name)
        assert manifest_warnings(m) == ()


def test_the_helpers_paired_block_records_the_estimate_it_was_asked_for() -> None:
    p = paired(1.71, 1.62, 1.80)
    assert (p["speedup"], p["ci_low"], p["ci_high"]) == (1.71, 1.62, 1.80)


P = "modes.compile.paired"


@needs_runs
@pytest.mark.parametrize(("edit", "message"), [
    (_set("speedup", 5.0), f"{P}.speedup is 5.0 but its blocks give 2.42837"),
    (_set("ci_low", 2.2), f"{P}.ci_low is 2.2 but its blocks give 2.4073"),
    (_set("ci_high", 2.9), f"{P}.ci_high is 2.9 but its blocks give 2.47453"),
    (_swap, f"{P}.ci_low is 2.47452580443441, above ci_high 2.4072982303814903 "
     "(bounds swapped?)"),
    (_block("baseline_block_ms", 3, 0), f"{P}.baseline_block_ms[3] is 0; it must be positive"),
    (_block("mode_block_ms", 0, -0.05), f"{P}.mode_block_ms[0] is -0.05; it must be positive"),
    (_block("mode_block_ms", 2, math.nan), f"{P}.mode_block_ms[2] is NaN, not a finite number"),
    (_block("mode_block_ms", 2, math.inf),
     f"{P}.mode_block_ms[2] is Infinity, not a finite number"),
    (_block("baseline_block_ms", 1, "0.16"), f'{P}.baseline_block_ms[1] is "0.16", not a number'),
    (_block("baseline_block_ms", 1, True), f"{P}.baseline_block_ms[1] is true, not a number"),
    (_block("baseline_issue_ms", 4, -1.0),
     f"{P}.baseline_issue_ms[4] is -1.0; it must not be negative"),
    (lambda m: _compile_paired(m)["mode_block_ms"].pop(),
     f"{P}.mode_block_ms has 14 values but baseline_block_ms has 15"),
    (lambda m: _compile_paired(m).pop("ci_high"), f"{P}.ci_high is missing"),
    (lambda m: _compile_paired(m).pop("baseline_block_ms"), f"{P}.baseline_block_ms is missing"),
    (_set("speedup", "2.43"), f'{P}.speedup is "2.43", not a number'),
    (_set("pairs", "15"), f'{P}.pairs is "15", not an integer'),
    (_set("pairs", 16), f"{P}.pairs is 16 but baseline_block_ms has 15 blocks"),
    (_set("iters_mode", 0), f"{P}.iters_mode is 0; it must be at least 1"),
    (_set("level", 95), f"{P}.level is 95; it must be between 0 and 1"),
    (_set("seed", 1), f"{P}.ci_low is"),  # another seed: other resamples, another CI
    (_set("half_width", 0.5), f"{P}.half_width is 0.5 but its blocks give"),
    (_set("stopped", "bored"), f'{P}.stopped is "bored", not one of converged, budget, '
     "max_pairs"),
    (_set("baseline_block_ms", "1,2,3"), f'{P}.baseline_block_ms is "1,2,3", not a list'),
    (lambda m: m["modes"]["compile"].__setitem__("paired", [1.0]),
     f"{P} is [1.0], not a JSON object"),
    (lambda m: m["modes"]["compile"].__setitem__("status", "great"),
     'modes.compile.status is "great", not one of ok, failed'),
    (lambda m: m["modes"]["compile"].pop("status"), "modes.compile.status is missing"),
    (lambda m: m["modes"]["compile"]["timing"].__setitem__("median_ms", 9.0),
     "modes.compile.timing.median_ms is 9.0, outside its p10–p90"),
    (lambda m: m["modes"]["compile"]["timing"].__setitem__("p10_ms", None),
     "modes.compile.timing.p10_ms is null"),
    (lambda m: m["modes"]["compile"]["profiled"].__setitem__("inflation", 1.0),
     "modes.compile.profiled.inflation is 1.0 but step_ms / adjacent_unprofiled_ms is"),
    (lambda m: m["modes"]["compile"]["correctness"].__setitem__("ok", "yes"),
     'modes.compile.correctness.ok is "yes", not true, false or null'),
    (lambda m: m["modes"]["compile"]["compile"].__setitem__("graph_breaks", -1),
     "modes.compile.compile.graph_breaks is -1; it must be at least 0"),
    (lambda m: m["modes"].__setitem__("compile", "ok"), 'modes.compile is "ok", not a JSON'),
    (lambda m: m.__setitem__("schema", 4), "schema is 4; this traceviz reads schema 1, 2, 3"),
    (lambda m: m.__setitem__("schema", "3"), 'schema is "3"; this traceviz reads'),
    (lambda m: m.pop("schema"), "schema is missing"),
    (lambda m: m.__setitem__("workload", "rmsnorm"), 'workload is "rmsnorm", not a JSON object'),
])
def test_each_tampering_is_an_error_naming_the_file_and_the_field(edit: Edit,
                                                                  message: str) -> None:
    m = _read(RMS / "manifest.json")
    edit(m)
    with pytest.raises(ManifestError) as err:
        check_manifest(m, "run/manifest.json")
    assert str(err.value).startswith(f"run/manifest.json: {message}"), str(err.value)
    assert isinstance(err.value, TracevizError) and err.value.exit_code == 1
    assert "\n" not in str(err.value)


@needs_runs
def test_swapped_bounds_are_named_as_such() -> None:
    m = _read(RMS / "manifest.json")
    _swap(m)
    with pytest.raises(ManifestError, match=r"ci_low is .*, above ci_high .* \(bounds swapped\?\)"):
        check_manifest(m, "manifest.json")


@needs_runs
@pytest.mark.parametrize("edit", [
    lambda p: p["rank_mode_block_ms"][2].__setitem__(1, p["mode_block_ms"][2] * 2),
    lambda p: p["rank_baseline_issue_ms"][0].__setitem__(0, math.nan),
    lambda p: p.__setitem__("ranks", 3),
])
def test_a_tampered_rank_block_is_an_error(edit: Callable[[dict[str, Any]], None]) -> None:
    m = _read(TP / "manifest.json")
    p = _compile_paired(m)
    check_manifest(m, "tp")  # sound as committed (per-rank blocks, slowest rank's times)
    edit(p)
    with pytest.raises(ManifestError, match=r"tp: modes\.compile\.paired\.(rank_|mode_block)"):
        check_manifest(m, "tp")


@needs_runs
def test_an_against_record_is_checked_too() -> None:
    path = ROOT / "reports" / "reviews" / "rmsnorm_scaled_vs_base" / "manifest.json"
    m = _read(path)
    m["modes"]["compile"]["against"]["paired"]["speedup"] = 5.0
    with pytest.raises(ManifestError, match=r"modes\.compile\.against\.paired\.speedup is 5\.0 "
                       r"but its blocks give 1\.00364"):
        check_manifest(m, str(path))


def test_older_forms_stay_readable() -> None:
    """A paired block without its estimate (readers estimate it from the blocks), without
    ``baseline``, and a baseline that could not run."""
    base = [1.0, 1.1, 0.9, 1.05, 0.95]
    mode = {"status": "ok", "paired": {"baseline_block_ms": base, "mode_block_ms": [0.5] * 5}}
    failed = {"status": "ok", "paired": {"error": "eager step raised RuntimeError"}}
    check_manifest({"schema": 2, "modes": {"compile": mode, "x": failed}}, "m")


def test_informational_fields_out_of_range_are_warnings_not_errors(tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "run", {"eager": EAGER, "compile": replace(
        COMPILED, paired=paired(2.0, 1.9, 2.1), extra={"wall_s": -3.0})})
    m = _read(run / "manifest.json")
    m["modes"]["eager"]["peak_mem_bytes"] = "lots"
    (run / "manifest.json").write_text(json.dumps(m))
    want = ('manifest.json: modes.eager.peak_mem_bytes is "lots", not a whole number of bytes '
            "(informational: no verdict rests on it)",
            "manifest.json: modes.compile.wall_s is -3.0, not a number of seconds "
            "(informational: no verdict rests on it)")
    assert manifest_warnings(m) == want
    _, report = build(load_run_dir(run))
    assert all(w in report.warnings for w in want)
    compared = traceviz.compare(run)
    assert all(w in compared.report.warnings for w in want)


def _tampered_copy(tmp: Path, name: str, edit: Edit) -> Path:
    """``rmsnorm_residual``'s manifest alone (no traces) in ``tmp / name``, edited."""
    m = _read(RMS / "manifest.json")
    edit(m)
    run = tmp / name
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps(m))
    return run


def traceviz_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300)


@needs_runs
def test_every_reader_refuses_an_edited_speed_up(tmp_path: Path) -> None:
    good = _tampered_copy(tmp_path, "good", lambda m: None)
    bad = _tampered_copy(tmp_path, "bad", _set("speedup", 5.0))
    line = (f"traceviz: error: {bad / 'manifest.json'}: {P}.speedup is 5.0 but its blocks "
            "give 2.42837")
    out = tmp_path / "out.json"
    for args in (["report", str(bad), "-f", "json", "-o", str(out)],
                 ["compare", str(good), str(bad), "-f", "json", "-o", str(out)],
                 ["compare", str(bad), str(good), "-f", "json", "-o", str(out)],
                 ["check", str(bad), "--against", str(good)],
                 ["check", str(good), "--against", str(bad)],
                 ["check", str(bad), "--expect", "compile:speed=WIN"],
                 ["kernel-diff", str(bad), str(good), "--mode", "compile"]):
        r = traceviz_cli(*args)
        assert (r.returncode, r.stderr.splitlines(), r.stdout) == (1, [line], ""), args
        assert not out.exists()
    with pytest.raises(ManifestError, match=r"paired\.speedup is 5\.0 but its blocks give"):
        traceviz.load_run(bad)
    with pytest.raises(ManifestError, match=r"paired\.speedup is 5\.0 but its blocks give"):
        traceviz.compare(bad)

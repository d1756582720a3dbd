"""Every verdict threshold has one valid range (``THRESHOLD_RANGES``), checked by ``Thresholds``
itself: the edges are pinned here, and the CLI (``-t`` and ``--thresholds-file``) and the
Python API refuse the same values (issue 27, item 3)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import pytest

import traceviz
from tests.synthetic_runs import standard_run
from traceviz.analyze.verdicts import (
    THRESHOLD_RANGES,
    ThresholdRangeError,
    Thresholds,
    parse_thresholds,
    threshold_names,
)
from traceviz.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "reports" / "gemm_mlp"

#: The documented ranges (docs/comparison.md, "Thresholds"), pinned.
DOCUMENTED = {
    "min_speedup": "[0, 1)",
    "fusion_min_kernel_drop": "(0, 1]",
    "launch_min_wait_share": "[0, 1]",
    "gpu_bound_busy_share": "(0, 1]",
    "max_profiler_inflation": "[1, ∞)",
    "host_bound_max_lag_steps": "[0, ∞)",
    "fusion_min_busy_share": "[0, 1]",
    "baseline_drift_margin": "[0, 1]",
    "block_tail_allowance_us": "[0, ∞)",
    "gpu_bound_min_compute_share": "[0, 1]",
    "straggler_min_share": "[0, 1]",
    "straggler_min_host_share": "[0, 1]",
}


def _edges() -> list[tuple[str, float, bool]]:
    """(threshold, value, accepted) at and just beyond both edges of every range."""
    out = []
    for name, r in THRESHOLD_RANGES.items():
        below, above = math.nextafter(r.low, -math.inf), math.nextafter(r.low, math.inf)
        out += [(name, r.low, r.low_inclusive), (name, below, False), (name, above, True)]
        if math.isinf(r.high):
            out += [(name, 1e12, True), (name, math.inf, False)]
        else:
            below, above = math.nextafter(r.high, -math.inf), math.nextafter(r.high, math.inf)
            out += [(name, r.high, r.high_inclusive), (name, above, False), (name, below, True)]
        out.append((name, math.nan, False))
    return out


def test_every_threshold_has_its_documented_range_and_the_defaults_lie_inside() -> None:
    assert set(THRESHOLD_RANGES) == set(threshold_names()) == set(DOCUMENTED)
    assert {n: str(r) for n, r in THRESHOLD_RANGES.items()} == DOCUMENTED
    defaults = Thresholds()
    assert all(getattr(defaults, n) in r for n, r in THRESHOLD_RANGES.items())


def test_the_docs_table_lists_every_range() -> None:
    table = (ROOT / "docs" / "comparison.md").read_text(encoding="utf-8")
    for name, rng in DOCUMENTED.items():
        default = getattr(Thresholds(), name)
        assert f"| `{name}` | {default:g} | {rng} |" in table.replace(".0 |", " |"), name


@pytest.mark.parametrize(("name", "value", "accepted"), _edges(),
                         ids=lambda x: x if isinstance(x, str) else repr(x))
def test_edges(name: str, value: float, accepted: bool) -> None:
    if accepted:
        assert getattr(Thresholds(**{name: value}), name) == value
        assert getattr(parse_thresholds([f"{name}={value!r}"]), name) == value
        return
    with pytest.raises(ThresholdRangeError, match=rf"^threshold {name} = "):
        Thresholds(**{name: value})
    with pytest.raises(ThresholdRangeError):
        dataclasses.replace(Thresholds(), **{name: value})
    with pytest.raises(ThresholdRangeError):
        parse_thresholds([f"{name}={value!r}"])


def test_the_error_is_one_line_with_the_name_the_value_and_the_range() -> None:
    with pytest.raises(ThresholdRangeError) as info:
        Thresholds(min_speedup=-1)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, UsageError) and err.exit_code == 2
    text = str(err)
    assert "\n" not in text
    assert text.startswith("threshold min_speedup = -1 is outside its valid range [0, 1) (")


@pytest.mark.parametrize("value", [True, "0.1", None])
def test_a_value_that_is_not_a_number_is_refused(value: object) -> None:
    with pytest.raises(ThresholdRangeError, match="is not a number"):
        Thresholds(min_speedup=value)  # type: ignore[arg-type]


def traceviz_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


def _one_line_usage_error(r: subprocess.CompletedProcess[str], name: str, shown: str) -> None:
    assert r.returncode == UsageError.exit_code == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"traceviz: error: threshold {name} = {shown} is outside its "
                               f"valid range {DOCUMENTED[name]}")


def test_cli_threshold_option_out_of_range_is_a_one_line_usage_error() -> None:
    """Unchecked, ``-t min_speedup=-1`` would turn a slower mode into a WIN."""
    r = traceviz_cli("report", str(RUN), "-t", "min_speedup=-1")
    _one_line_usage_error(r, "min_speedup", "-1")


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_cli_thresholds_file_out_of_range_is_refused_the_same_way(tmp_path: Path,
                                                                   suffix: str) -> None:
    config = tmp_path / f"t{suffix}"
    config.write_text("[thresholds]\nmax_profiler_inflation = 0.5\n" if suffix == ".toml"
                      else '{"max_profiler_inflation": 0.5}')
    for command in ("report", "compare"):
        r = traceviz_cli(command, str(RUN), "--thresholds-file", str(config))
        _one_line_usage_error(r, "max_profiler_inflation", "0.5")
    r = traceviz_cli("check", str(RUN), "-e", "compile:speed=WIN",
                     "--thresholds-file", str(config))
    _one_line_usage_error(r, "max_profiler_inflation", "0.5")


def test_api_refuses_out_of_range_thresholds(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    with pytest.raises(ThresholdRangeError, match=r"min_speedup = -1 .*\[0, 1\)"):
        traceviz.compare(run, thresholds={"min_speedup": -1})
    with pytest.raises(ValueError, match=r"baseline_drift_margin = 1\.5"):
        traceviz.compare(run, thresholds={"baseline_drift_margin": 1.5})
    assert traceviz.compare(run, thresholds={"min_speedup": 0}).result.thresholds.min_speedup == 0

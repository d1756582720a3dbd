"""Bounded reports (issue 23): per-step rows up to ``max_step_rows``, statistics over all steps.

The trace: 50 steps 100 µs apart (CPU windows of 90 µs); step ``k`` (0-based) launches one
kernel of ``(k + 1) × 1000`` ns 5 µs into the step, so its GPU busy time is ``k + 1`` µs, its
GPU period runs to the next step's first kernel (100 µs; the last step's: its own 50 µs) and the
rest of it is host wait (``99 - k`` µs; the last step: 0): every per-step statistic is known in
closed form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import traceviz
from tests.kineto import TraceBuilder
from traceviz.cli.app import app
from traceviz.report.step_rows import DEFAULT_MAX_STEP_ROWS, shown_steps

STEPS = 50
STEP_NS = 100_000


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = TraceBuilder()
    for k in range(STEPS):
        t0 = k * STEP_NS
        b.step(k, t0, 90_000)
        b.kernel(t0 + 1_000, t0 + 5_000, (k + 1) * 1_000)
    return b.write(tmp_path_factory.mktemp("bounded") / "steps50.json")


@pytest.fixture(scope="module")
def analysis(trace_path: Path) -> traceviz.Analysis:
    return traceviz.analyze(trace_path)


def test_shown_steps_first_and_last_halves() -> None:
    assert shown_steps(50, 10) == [0, 1, 2, 3, 4, 45, 46, 47, 48, 49]
    assert shown_steps(50, 7) == [0, 1, 2, 3, 47, 48, 49]
    assert shown_steps(50, 0) == []
    assert shown_steps(50, 50) == list(range(50))
    assert shown_steps(50, None) == list(range(50))
    assert DEFAULT_MAX_STEP_ROWS == 1000
    with pytest.raises(ValueError):
        shown_steps(5, -1)


def test_json_capped_rows_and_summary(analysis: traceviz.Analysis) -> None:
    doc = json.loads(analysis.to_json(max_step_rows=10))
    assert doc["steps_total"] == STEPS
    assert doc["steps_shown"] == 10
    assert doc["max_step_rows"] == 10
    names = [s["name"] for s in doc["steps"]]
    assert names == [f"ProfilerStep#{k}" for k in (0, 1, 2, 3, 4, 45, 46, 47, 48, 49)]
    assert [s["gpu_busy_us"] for s in doc["steps"]] == [1.0, 2.0, 3.0, 4.0, 5.0,
                                                       46.0, 47.0, 48.0, 49.0, 50.0]
    summary = doc["step_summary"]
    # busy = k + 1 µs for k in 0..49: nearest-rank p10 = 5, median = 25, p90 = 45
    assert summary["gpu_busy_us"] == {"count": 50, "min": 1.0, "p10": 5.0, "median": 25.0,
                                      "p90": 45.0, "max": 50.0, "mean": 25.5}
    assert summary["period_us"] == {"count": 50, "min": 50.0, "p10": 100.0, "median": 100.0,
                                    "p90": 100.0, "max": 100.0, "mean": 99.0}
    # host wait: 99 - k for k in 0..48, and 0: sorted 0, 51, 52, …, 99
    assert summary["host_wait_us"] == {"count": 50, "min": 0.0, "p10": 54.0, "median": 74.0,
                                       "p90": 94.0, "max": 99.0, "mean": 73.5}
    assert summary["kernels"] == {"count": 50, "min": 1, "p10": 1, "median": 1, "p90": 1,
                                  "max": 1, "mean": 1.0}
    assert summary["launches"]["median"] == 1
    assert summary["cpu_us"]["median"] == 90.0
    assert summary["cpu_bound_share"] == {"count": 50, "min": 0.0, "p10": 0.54, "median": 0.74,
                                          "p90": 0.94, "max": 0.99, "mean": 0.735}
    # the same numbers computed from the analysis over all 50 steps
    for key, attr in (("period_us", "period_ns"), ("gpu_busy_us", "gpu_busy_ns"),
                      ("host_wait_us", "host_wait_ns")):
        values = sorted(getattr(s, attr) / 1000 for s in analysis.result.steps)
        assert summary[key]["min"] == values[0]
        assert summary[key]["max"] == values[-1]
        assert summary[key]["mean"] == pytest.approx(sum(values) / len(values))
        assert summary[key]["median"] == values[24]


def test_json_per_step_lists_follow_the_cap(analysis: traceviz.Analysis) -> None:
    doc = json.loads(analysis.to_json(max_step_rows=10))
    shown = {s["name"] for s in doc["steps"]}
    step_gaps = {g["key"] for g in doc["gap_stats"] if g["scope"] == "step"}
    assert step_gaps <= shown
    assert {c["step"] for c in doc["compile"]["steps"]} <= shown
    hw = doc["host_wait_sources"]
    if hw is not None:
        assert {s["step"] for s in hw["steps"]} <= shown


def test_json_cap_zero_and_cap_at_least_steps(analysis: traceviz.Analysis) -> None:
    none = json.loads(analysis.to_json(max_step_rows=0))
    assert none["steps"] == [] and none["steps_shown"] == 0 and none["steps_total"] == STEPS
    assert none["step_summary"]["period_us"]["count"] == STEPS
    for cap in (STEPS, STEPS + 1):
        full = json.loads(analysis.to_json(max_step_rows=cap))
        assert full["steps_shown"] == full["steps_total"] == STEPS
        assert len(full["steps"]) == STEPS


def test_default_cap_applies(analysis: traceviz.Analysis) -> None:
    doc = json.loads(analysis.to_json())
    assert doc["max_step_rows"] == DEFAULT_MAX_STEP_ROWS
    assert doc["steps_shown"] == STEPS  # 50 <= 1000
    assert doc == analysis.to_dict()
    assert analysis.to_dict(max_step_rows=10)["steps_shown"] == 10


def test_html_md_text_say_capped(analysis: traceviz.Analysis) -> None:
    note = "Showing 10 of 50 steps: the first 5 and the last 5 (--max-step-rows 10)"
    html = analysis.render("html", "cdn", max_step_rows=10)
    assert note in html and "Per-step statistics over all 50 steps" in html
    assert "ProfilerStep#45" in html and "ProfilerStep#44" not in html
    md = analysis.render("md", max_step_rows=10)
    assert note in md and "Per-step statistics over all 50 steps" in md
    text = analysis.render("text", max_step_rows=10)
    assert note in text and "ProfilerStep#44" not in text
    assert "Per-step statistics over all 50 steps" in text
    # uncapped: no note, no statistics table
    for fmt in ("html", "md", "text"):
        out = analysis.render(fmt, "cdn")
        assert "--max-step-rows" not in out and "Per-step statistics" not in out


def test_dataframe_stays_complete(analysis: traceviz.Analysis) -> None:
    analysis.to_json(max_step_rows=10)
    assert len(analysis.steps) == STEPS
    assert len(analysis.result.steps) == STEPS


def test_cli_max_step_rows(trace_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["report", str(trace_path), "--format", "json", "-o", str(out),
                                   "--max-step-rows", "10"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["steps_shown"] == 10 and doc["steps_total"] == STEPS
    assert len(doc["steps"]) == 10
    res = CliRunner().invoke(app, ["report", str(trace_path), "--format", "json", "-o",
                                   str(out), "--force"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["steps_shown"] == STEPS
    res = CliRunner().invoke(app, ["report", str(trace_path), "--format", "json",
                                   "--max-step-rows", "-1"])
    assert res.exit_code != 0

"""The prose-filling pieces of the docs pipeline: ``docs_outputs``' ``json-format`` filter,
``scripts/suite_facts.py``'s rendering of the recorded test-suite timings and the facts
``scripts/bench_facts.py`` and ``scripts/hta_facts.py`` derive from benchmark records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import bench_facts as bench
from scripts import docs_outputs as d
from scripts import hta_facts as hta
from scripts import suite_facts as tiers

DOC = json.dumps({
    "rows": [{"mode": "eager", "gpu_busy_ms": 0.2112}, {"mode": "compile", "kernels": 31.0}],
    "verdicts": [{"mode": "compile", "kind": "speed", "status": "WIN",
                  "evidence": {"speedup": 1.398, "host_issue_ms": [1.146, 0.816]}}],
})


def test_json_format_finds_items_by_mode_and_kind_and_scales_before_formatting() -> None:
    template = ("- `compile` is {verdicts[compile/speed][evidence][speedup]:.2f}×, a "
                "{verdicts[compile/speed][status]}: busy {rows[eager][gpu_busy_ms]:*1000;.1f} "
                "µs, issue {verdicts[0][evidence][host_issue_ms][1]:.3f} ms, "
                "{rows[compile][kernels]:.0f} kernels.")
    assert d.apply_filter(DOC.splitlines(), ["json-format", template]) == [
        "- `compile` is 1.40×, a WIN: busy 211.2 µs, issue 0.816 ms, 31 kernels."]


def test_json_format_wraps_a_list_item_with_an_indent_and_keeps_paragraphs() -> None:
    lines = d.apply_filter(DOC.splitlines(), ["json-format", "- " + "word " * 40 + "\n\nnext"])
    assert lines[0].startswith("- word") and len(lines[0]) <= d.WRAP
    assert all(s.startswith("  word") for s in lines[1:-2]) and lines[-2:] == ["", "next"]


def test_json_format_indents_a_list_item_whose_dash_ends_the_template_line() -> None:
    lines = d.apply_filter(DOC.splitlines(), ["json-format", "-\n" + "word " * 40])
    assert lines[0].startswith("- word") and all(s.startswith("  word") for s in lines[1:])


def test_json_format_scales_by_a_negative_factor() -> None:
    assert d.apply_filter(DOC.splitlines(), [
        "json-format", "{rows[eager][gpu_busy_ms]:*-1000;.1f} µs saved"]) == ["-211.2 µs saved"]


def test_spreads_of_a_list_of_records_are_per_numeric_field() -> None:
    doc = bench.with_spreads({"runs": [{"us": 10.0, "gpu": "H100"}, {"us": 12.0, "gpu": "H100"},
                                       {"us": 11.0, "gpu": "H100"}]})
    assert (doc["runs_min"], doc["runs_max"], doc["runs_median"]) == (
        {"us": 10.0}, {"us": 12.0}, {"us": 11.0})


def test_levels_split_at_the_largest_ratio_between_neighbours() -> None:
    levels = bench._levels([0.05, 0.04, 0.2, 0.06, 0.23])
    assert (levels["low"], levels["low_count"], levels["high"], levels["high_count"]) == (
        [0.04, 0.06], 3, [0.2, 0.23], 2)


def test_a_change_point_finds_when_a_series_moves_to_another_level() -> None:
    change = bench._change_point([0.0, 1.0, 2.0, 3.0, 4.0], [0.07, 0.071, 0.069, 0.04, 0.041])
    assert change["at_s"] == 3.0 and round(change["before_ms"], 3) == 0.07
    assert round(change["after_ms"], 4) == 0.0405


def test_a_lone_outlier_is_set_apart_from_the_spread() -> None:
    assert bench._lone_outlier([2.1, 26.3, 4.3, 3.0]) == ([2.1, 3.0, 4.3], 26.3)
    assert bench._lone_outlier([2.1, 4.3, 3.0]) == ([2.1, 3.0, 4.3], None)


def test_json_format_names_a_missing_item() -> None:
    with pytest.raises(d.SpecError, match="no item 'triton'"):
        d.apply_filter(DOC.splitlines(), ["json-format", "{rows[triton][kernels]}"])


def test_the_test_tiers_record_renders_as_pytest_summaries() -> None:
    record = {"date": "2026-11-27", "machine": "a 2-core VM", "runs": [
        {"command": "scripts/test -q", "tier": "fast", "passed": 1932, "skipped": 13,
         "seconds": 135.38},
        {"command": None, "tier": "calibration", "passed": 1, "skipped": 0, "seconds": 321.16}]}
    assert tiers.transcript(record) == [
        "# 2026-11-27, a 2-core VM", "$ scripts/test -q",
        "1932 passed, 13 skipped in 135.38s (0:02:15)",
        "[test] the calibration tier, alone on the machine", "1 passed in 321.16s (0:05:21)"]


def test_block_spreads_are_the_blocks_p10_to_p90_over_their_median(tmp_path: Path) -> None:
    blocks = [float(v) for v in range(1, 12)]  # deciles 2 … 10, median 6
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"modes": {"compile": {"paired": {"mode_block_ms": blocks}}}}), encoding="utf-8")
    assert bench.block_spreads(str(tmp_path), ["compile"]) == {"compile": (10 - 2) / 6}


def test_the_overlap_table_puts_htas_recorded_value_beside_traceviz_shares() -> None:
    comm = {"traces": [{"name": "r3", "overall": {"overlap_share": 0.470731,
                                                  "hta_overlap_share": 0.462372}}]}
    record = {"traces": [{"name": "other", "hta": {"comm_comp_overlap_pct": None}},
                         {"name": "r3", "hta": {"comm_comp_overlap_pct": 46.24}}]}
    assert hta.comm_table(comm, record)[2:] == ["| `r3` | 47.07 % | 46.24 % | 46.24 % |"]

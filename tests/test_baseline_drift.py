"""The baseline timed inside a mode's process (pair-level median) against its own process's
timing: flagged in the speed verdict (explanation, evidence, comparison notes) only when it lies
outside its own p10–p90 widened by ``baseline_drift_margin``; the status never changes
(issue 27, item 5; docs/comparison.md, "Baseline drift")."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.synthetic_runs import COMPILED, EAGER, paired, write_run_dir
from traceviz.analyze.compare.modes import Comparison, compare
from traceviz.analyze.compare.speed import Timing, baseline_drift
from traceviz.analyze.stats import paired_speedup
from traceviz.analyze.verdicts import Thresholds, Verdict
from traceviz.report.compare_report import build, load_run_dir

REPORTS = Path(__file__).resolve().parent.parent / "reports"

#: eager's own process: median 0.5, p10 0.45, p90 0.55 ms/step
OWN = dict(median_ms=0.5, spread_ms=0.1)
P10, P90 = 0.5 - 0.1 / 2, 0.5 + 0.1 / 2
MARGIN = Thresholds().baseline_drift_margin
LOW, HIGH = P10 * (1 - MARGIN), P90 * (1 + MARGIN)  # the band, as the rule computes it


def block(in_pairs_ms: float, pairs: int = 5) -> dict[str, Any]:
    """A paired block (speed-up 2) whose baseline blocks have this median; its estimate
    re-recorded from the blocks, as the runner records it."""
    p = paired(2.0, 1.9, 2.1, pairs=pairs)
    p["baseline_block_ms"] = [in_pairs_ms * f for f in (0.9, 0.95, 1.0, 1.1, 1.3)][:pairs]
    p["mode_block_ms"] = [b / 2 for b in p["baseline_block_ms"]]
    return {**p, **paired_speedup(p["baseline_block_ms"], p["mode_block_ms"]).as_dict()}


def run(tmp: Path, in_pairs_ms: float, **kw: Any) -> Comparison:
    eager, comp = replace(EAGER, **OWN), replace(COMPILED, paired=block(in_pairs_ms))
    root = write_run_dir(tmp / f"run_{in_pairs_ms!r}", {"eager": eager, "compile": comp})
    return compare(load_run_dir(root).modes, **kw)


def speed(c: Comparison) -> Verdict:
    return next(v for v in c.verdicts if v.mode == "compile" and v.kind == "speed")


@pytest.mark.parametrize(("in_pairs_ms", "flagged"), [
    (0.5, False),  # the own median
    (0.53, False),  # inside p10–p90
    (0.59, False),  # beyond p90, within the margin
    (HIGH, False),  # exactly at the upper edge
    (LOW, False),  # exactly at the lower edge
    (math.nextafter(HIGH, math.inf), True),
    (math.nextafter(LOW, 0.0), True),
    (0.7, True),  # +40 %: slowed
    (0.3, True),  # −40 %: faster
])
def test_flag_appears_only_outside_the_band(tmp_path: Path, in_pairs_ms: float,
                                            flagged: bool) -> None:
    c = run(tmp_path, in_pairs_ms)
    v = speed(c)
    d = v.evidence["baseline_drift"]
    assert d["in_pairs_ms"] == pytest.approx(in_pairs_ms, rel=1e-12)
    assert d["drifted"] is flagged
    assert (d["own_ms"], d["own_p10_ms"], d["own_p90_ms"], d["margin"]) == (0.5, P10, P90, MARGIN)
    assert d["band_ms"] == [pytest.approx(LOW), pytest.approx(HIGH)]
    assert d["change"] == pytest.approx(in_pairs_ms / 0.5 - 1)
    assert v.thresholds["baseline_drift_margin"] == MARGIN
    assert ("inside this mode's process" in v.explanation) is flagged
    assert any("inside this mode's process" in n for n in c.notes) is flagged


def test_slowed_baseline_says_both_numbers_and_keeps_the_status(tmp_path: Path) -> None:
    c = run(tmp_path, 0.7)
    v = speed(c)
    sentence = ("the eager baseline ran 0.700 ms/step inside this mode's process vs 0.500 in its "
                "own (+40 %), outside its own p10–p90 widened by 10 % (0.405–0.605): the "
                "speed-up is relative to a slowed baseline")
    assert sentence in v.explanation
    assert c.notes == (f"compile: {sentence}",)
    unflagged = speed(run(tmp_path / "loose", 0.7,
                          thresholds=Thresholds(baseline_drift_margin=1.0)))
    assert unflagged.evidence["baseline_drift"]["drifted"] is False
    assert v.status == unflagged.status == "WIN"
    assert v.explanation.startswith(unflagged.explanation)


@pytest.mark.parametrize(("in_pairs_ms", "clause"), [
    (0.7, "against eager as timed beside it, 0.700 ms/step (0.500 in its own process)"),
    (0.3, "against eager as timed beside it, 0.300 ms/step (0.500 in its own process)"),
    (HIGH, None),  # inside the band: the headline leaves the baseline out
])
def test_headline_says_which_baseline_number_a_drifted_speedup_rests_on(
        tmp_path: Path, in_pairs_ms: float, clause: str | None) -> None:
    headline = next(h for h in run(tmp_path, in_pairs_ms).headlines if h.mode == "compile")
    if clause is None:
        assert "timed beside it" not in headline.text
    else:  # right after the outcome, before where the time went
        assert re.match(r"2\.00× faster \(95 % CI [^)]*, 5 pairs\), " + re.escape(clause) + "[:;]",
                        headline.text), headline.text


def test_faster_baseline_is_flagged_as_faster(tmp_path: Path) -> None:
    v = speed(run(tmp_path, 0.3))
    assert ("the eager baseline ran 0.300 ms/step inside this mode's process vs 0.500 in its "
            "own (-40 %)") in v.explanation
    assert v.explanation.endswith("the speed-up is relative to a baseline faster than on its "
                                  "own")


def test_the_margin_is_a_threshold(tmp_path: Path) -> None:
    tight = speed(run(tmp_path, 0.56, thresholds=Thresholds(baseline_drift_margin=0.0)))
    assert tight.evidence["baseline_drift"]["drifted"] is True
    assert "widened by 0 % (0.450–0.550)" in tight.explanation
    assert speed(run(tmp_path / "default", 0.56)).evidence["baseline_drift"]["drifted"] is False


def test_no_check_without_paired_block_times_or_own_percentiles() -> None:
    own = Timing(0.5, P10, P90, None, None)
    assert baseline_drift(None, own, MARGIN) is None
    assert baseline_drift({"speedup": 2.0}, own, MARGIN) is None  # summary keys only
    assert baseline_drift({"baseline_block_ms": [1.0, "x"]}, own, MARGIN) is None
    assert baseline_drift({"baseline_block_ms": [1.0]}, Timing(0.5, None, P90, None, None),
                          MARGIN) is None
    found = baseline_drift({"baseline_block_ms": [0.4, 0.7, 0.6]}, own, MARGIN)
    assert found is not None and found.in_pairs_ms == 0.6 and not found.drifted


def test_unpaired_modes_carry_no_drift(tmp_path: Path) -> None:
    root = write_run_dir(tmp_path / "unpaired", {"eager": EAGER, "compile": COMPILED})
    c = compare(load_run_dir(root).modes)
    v = speed(c)
    assert v.evidence["evidence_source"] == "unpaired"
    assert "baseline_drift" not in v.evidence and "baseline_drift_margin" not in v.thresholds
    assert c.notes == ()


def test_committed_decode_loop_is_flagged_and_rmsnorm_is_not() -> None:
    """decode_loop (host-bound, 216 tiny launches) ran its eager baseline ~27 % faster inside
    the compile process than in its own (H100 run of 2026-11-25); rmsnorm_residual's baseline
    stayed within 2 % everywhere."""
    c = build(load_run_dir(REPORTS / "decode_loop"))[0]
    v = {x.mode: x for x in c.verdicts if x.kind == "speed"}
    drift = v["compile"].evidence["baseline_drift"]
    assert drift["drifted"] is True and drift["change"] < -0.1
    assert (f"the eager baseline ran {drift['in_pairs_ms']:.3f} ms/step inside this mode's "
            f"process vs {drift['own_ms']:.3f} in its own") in v["compile"].explanation
    assert "a baseline faster than on its own" in v["compile"].explanation
    assert v["compile"].status == "WIN"  # flagged, not overruled
    quiet = build(load_run_dir(REPORTS / "rmsnorm_residual"))[0]
    assert [x.mode for x in quiet.verdicts if x.kind == "speed"
            and (x.evidence.get("baseline_drift") or {}).get("drifted")] == []

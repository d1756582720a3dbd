"""Invariants of the explanations over every committed GPU run directory (issue 36).

* no part of an unprofiled waterfall is larger than the longer of its two unprofiled steps;
* no mode with a launch WIN has a host-overhead part that rises;
* the bound call and the straggler rule keep the committed launch verdicts, except the ones
  they were built to change (``reports/inplace_update``: a 36–53 µs step, compute busy 3–22 %
  of it, read GPU-bound from its block tail before).

Waterfalls in profiled units (manifests without host issue times: ``reports/ddp_mlp`` and
``reports/ddp_mlp_straggler``, recorded before schema 3) are checked against their own
profiled periods.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from traceviz.analyze.compare.modes import Comparison, compare
from traceviz.analyze.compare.waterfall import UNPROFILED
from traceviz.analyze.distributed.bounding import UNPROFILED_ISSUE
from traceviz.report.compare_report import load_run_dir

ROOT = Path(__file__).resolve().parent.parent
RUNS = sorted({p.parent for p in (ROOT / "reports").glob("*/manifest.json")}
              | {p.parent for p in (ROOT / "tests" / "data" / "h200").glob("*/manifest.json")})
needs_runs = pytest.mark.skipif(not RUNS, reason="the committed GPU runs are absent")


@cache
def comparison(run: Path) -> Comparison:
    return compare(load_run_dir(run, workers=1).modes)


def _id(run: Path) -> str:
    return str(run.relative_to(ROOT))


@needs_runs
@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_no_waterfall_part_is_larger_than_the_longer_step(run: Path) -> None:
    for w in comparison(run).waterfalls:
        longer = max(w.baseline_period_ns, w.period_ns)
        assert sum(w.parts.values()) == pytest.approx(w.delta_ns, abs=1.0)
        for name, delta in w.parts.items():
            assert abs(delta) <= longer * (1 + 1e-9), (w.mode, w.units, name, delta, longer)


@needs_runs
@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_no_launch_win_has_a_rising_host_overhead_part(run: Path) -> None:
    c = comparison(run)
    wins = {v.mode for v in c.verdicts if v.kind == "launch" and v.status == "WIN"}
    for w in c.waterfalls:
        if w.mode in wins and w.units == UNPROFILED:
            assert w.parts["host_overhead_ns"] <= 0, (w.mode, w.parts)


def test_the_unprofiled_waterfalls_are_checked_on_the_runs_that_have_them() -> None:
    units = {(_id(r), w.units) for r in RUNS for w in comparison(r).waterfalls}
    assert ("reports/tp_mlp", UNPROFILED) in units
    assert ("reports/inplace_update", UNPROFILED) in units


#: Launch verdicts of the committed runs with the unprofiled split, by run and mode; the
#: changes from the bound call (issue 36) are marked.
LAUNCH = {
    "reports/inplace_update": {
        "compile": "REGRESSION",  # was NO_WIN: host-bound (3 % compute), issue +2.6 µs/step
        "reduce-overhead": "REGRESSION",  # was NO_WIN, the same
        "max-autotune-no-cudagraphs": "INCONCLUSIVE",
        "max-autotune": "REGRESSION",  # was NO_WIN, the same
        "cudagraph": "WIN",  # was NO_WIN: issue −19.1 µs of −19.1 µs/step saved, host-bound
    },
    "reports/tp_mlp": {"compile": "WIN", "reduce-overhead": "WIN", "cudagraph": "WIN"},
    "reports/kv_cache_static": dict.fromkeys(
        ("compile", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune",
         "cudagraph"), "WIN"),
    "reports/elementwise": dict.fromkeys(
        ("compile", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune",
         "cudagraph", "triton"), "NO_WIN"),
    "reports/ddp_mlp_straggler": {"compile": "INCONCLUSIVE", "reduce-overhead": "INCONCLUSIVE",
                                  "cudagraph": "WIN"},
}


@needs_runs
@pytest.mark.parametrize("name", sorted(LAUNCH))
def test_the_committed_launch_verdicts(name: str) -> None:
    c = comparison(ROOT / name)
    got = {v.mode: v.status for v in c.verdicts if v.kind == "launch"}
    assert {m: got[m] for m in LAUNCH[name]} == LAUNCH[name]


@needs_runs
def test_the_injected_straggler_is_named_in_every_mode_and_alternating_noise_is_not() -> None:
    c = comparison(ROOT / "reports" / "ddp_mlp_straggler")
    measured = [h for h in c.headlines if h.speedup is not None]  # not the skipped triton
    assert len(measured) >= 4
    for h in measured:
        assert h.ranks is not None and h.ranks["bounding_rank"] == [1, 1], h.text
        assert h.ranks["bounding_rule"] == ["straggler", "straggler"]
        # confirmed without the profiler on both sides: rank 1's host 3.0–3.8 ms/step longer
        assert h.ranks["straggler_rule"] == [UNPROFILED_ISSUE, UNPROFILED_ISSUE]
        for check in h.ranks["straggler_check"]:
            assert check["confirmed"] and check["excess_ci_ms"][0] > 2.5, check
    tp = comparison(ROOT / "reports" / "tp_mlp")
    rules = {h.mode: h.ranks["bounding_rule"][1] for h in tp.headlines if h.ranks}
    assert rules["reduce-overhead"] == rules["cudagraph"] == "slowest period"
    for h in tp.headlines:  # one number for exposed communication: the waterfall's
        assert "exposed communication on it" not in h.text
        assert "the parts above are from its trace" in h.text


#: The stragglers the symmetric 2-GPU runs (no injection) name, (run, mode, side) → rank: none.
#: At a ``straggler_min_host_share`` of 0.05 two were confirmed (``reports/ddp_mlp``
#: max-autotune and ``reports/tp_mlp`` cudagraph, baseline side, rank 0: its host issue per
#: step above its peer's by 6.4 % and 14 % of the step, the CI above 0), which is what two
#: processes of identical code differ by; at 0.15 neither is. Every other profiled straggler of
#: these runs (e.g. ``reports/ddp_mlp`` rank 1 in compile and reduce-overhead: 1.5–5.4 ms late
#: per step under the profiler) is not confirmed either.
SYMMETRIC_NAMED: dict[tuple[str, str, int], int] = {}


@needs_runs
@pytest.mark.parametrize("name", ["reports/ddp_mlp", "reports/tp_mlp", "reports/tp_mlp_autotune"])
def test_symmetric_runs_name_a_straggler_only_where_the_unprofiled_times_confirm_it(name: str
                                                                                    ) -> None:
    named = {}
    for h in comparison(ROOT / name).headlines:
        if h.ranks is None:
            continue
        for side, (rule, by, check) in enumerate(zip(h.ranks["bounding_rule"],
                                                     h.ranks["straggler_rule"],
                                                     h.ranks["straggler_check"], strict=True)):
            if rule == "straggler":
                assert by == UNPROFILED_ISSUE and check["confirmed"], (h.mode, side, h.text)
                named[(name, h.mode, side)] = h.ranks["bounding_rank"][side]
            elif check is not None:  # a profiled straggler the unprofiled times did not confirm
                assert h.ranks["late_under_profiler_only"][side] == check["rank"]
                assert "no straggler without the profiler" in h.text or side == 0
    assert named == {k: v for k, v in SYMMETRIC_NAMED.items() if k[0] == name}

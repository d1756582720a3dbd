"""Where HTA's definitions differ, said with both numbers: the comm/compute overlap (whole NCCL
kernels vs traceviz's transfer after the last arrival) and the launch statistics (eager cuBLAS
``cuLaunchKernel`` and NCCL ``cuLaunchKernelEx`` launches skipped too)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from traceviz.analyze.distributed.model import RankStep
from traceviz.analyze.distributed.overlap import transfer_overlap_share
from traceviz.holistic import HtaResult
from traceviz.holistic.notes import definition_notes

DDP = Path(__file__).resolve().parents[1] / "reports" / "ddp_mlp"


def _result(**fields) -> HtaResult:
    base = dict(trace_path="rank1.json", hta_version="0.6.1", rank=1,
                rank_source="distributedInfo.rank", ns_rounding_disabled=True,
                include_last_profiler_step=True, seconds=1.0)
    return HtaResult(**{**base, **fields})


def _step(rank: int, step: int, transfer: int | None, exposed: int | None) -> RankStep:
    return RankStep(rank, step, 100_000, 50_000, 40_000, 0, 0, 0.0, 1, transfer is not None,
                    0 if transfer is not None else None, transfer, exposed, 0)


def test_overlap_note_names_both_numbers_and_both_definitions():
    (note,) = [n for n in definition_notes(_result(comm_comp_overlap_pct=7.53,
                                                  traceviz_overlap_pct=3.4825))
               if "overlap" in n]
    assert "7.53 % for rank 1" in note and "3.48 % of this rank's transfer time" in note
    assert "spin waiting for the other ranks" in note and "last rank's arrival" in note


def test_overlap_note_without_the_other_ranks_says_how_to_get_traceviz_s():
    (note,) = [n for n in definition_notes(_result(comm_comp_overlap_pct=9.32))
               if "overlap" in n]
    assert "9.32 %" in note and "traceviz report rank0 rank1 … --hta" in note


def test_no_overlap_note_without_nccl():
    assert not [n for n in definition_notes(_result()) if "overlap" in n]


def test_launch_note_names_the_eager_library_launches_it_skips():
    calls = {"cudaLaunchKernel": {"calls": 305, "in_launch_stats": 305},
             "cuLaunchKernel": {"calls": 85, "in_launch_stats": 0},
             "cuLaunchKernelEx": {"calls": 30, "in_launch_stats": 0}}
    notes = definition_notes(_result(launch_calls=calls, launch_stats={"launches": 305}))
    (note,) = [n for n in notes if "launch statistics cover" in n]
    assert "cover 305 of the 420" in note
    assert "cuLaunchKernel ×85 (Triton kernels, and cuBLAS kernels in eager mode)" in note
    assert "cuLaunchKernelEx ×30 (NCCL collectives" in note and "eager-mode" in note


def test_transfer_overlap_share_sums_over_matched_steps_only():
    from traceviz.analyze.distributed.model import RanksAnalysis

    steps = (_step(0, 1, 1_000, 1_000), _step(0, 2, 3_000, 1_000), _step(0, 3, None, None),
             _step(1, 1, 2_000, 2_000))
    fake = RanksAnalysis.__new__(RanksAnalysis)
    object.__setattr__(fake, "rank_steps", steps)
    # rank 0: transfer 4,000 ns, exposed 2,000 ns → half of it overlapped compute
    assert transfer_overlap_share(fake, 0) == 0.5
    assert transfer_overlap_share(fake, 1) == 0.0
    assert transfer_overlap_share(fake, 2) is None
    edge = replace(steps[0], comm_transfer_ns=0, exposed_comm_ns=0)
    object.__setattr__(fake, "rank_steps", (edge,))
    assert transfer_overlap_share(fake, 0) is None  # no transfer time: not 0 %


@pytest.mark.hta
def test_ddp_eager_ranks_hta_vs_traceviz_overlap_and_launches():
    pytest.importorskip("hta")
    if not (DDP / "eager.rank0.pt.trace.json.gz").is_file():
        pytest.skip("reports/ddp_mlp absent")
    import traceviz
    from traceviz.analyze.distributed.overlap import overlap_by_path

    paths = [DDP / f"eager.rank{r}.pt.trace.json.gz" for r in (0, 1)]
    ranks = traceviz.Ranks.from_paths(paths, workers=1)
    overlaps = {str(Path(k)): v for k, v in overlap_by_path(ranks.result).items()}
    got = {}
    for p in paths:
        r = traceviz.analyze(p).hta(overlaps[str(p)])
        got[p.name] = (r.comm_comp_overlap_pct, r.traceviz_overlap_pct, r)
    # measured on the committed H200 traces (HTA 0.6.1, ns rounding off)
    hta0, tv0, _ = got["eager.rank0.pt.trace.json.gz"]
    assert hta0 == pytest.approx(0.11, abs=0.005) and tv0 == pytest.approx(0.107, abs=0.0005)
    hta1, tv1, r1 = got["eager.rank1.pt.trace.json.gz"]
    assert hta1 == pytest.approx(7.33, abs=0.005) and tv1 == pytest.approx(0.0, abs=0.005)
    assert r1.launch_calls["cuLaunchKernel"] == {"calls": 85, "in_launch_stats": 0}
    assert r1.launch_calls["cuLaunchKernelEx"] == {"calls": 30, "in_launch_stats": 0}
    assert any("7.33 %" in n and "0.00 %" in n for n in r1.notes)

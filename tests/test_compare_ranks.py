"""``compare`` on distributed traces: single rank traces are named by folder and warned about
(with each one's NCCL share of GPU busy); directories of rank traces compare as rank sets
through the multi-rank analysis. Real traces: the committed ``reports/ddp_mlp`` run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kineto import TraceBuilder
from traceviz.analyze.analysis import analyze
from traceviz.analyze.distributed.rank_input import rank_facts
from traceviz.errors import UsageError
from traceviz.report.compare_report import build, load_inputs, render, trace_labels
from traceviz.trace import load

DDP = Path(__file__).resolve().parents[1] / "reports" / "ddp_mlp"


def ddp_rank_dirs(root: Path) -> tuple[Path, Path] | None:
    """Two directories under ``root``, eager and compile, each holding ``reports/ddp_mlp``'s two
    rank traces of that mode (symlinks named ``rank<r>.pt.trace.json.gz``); ``None`` when the
    committed run is absent."""
    if not (DDP / "eager.rank0.pt.trace.json.gz").is_file():
        return None
    out = []
    for mode in ("eager", "compile"):
        d = root / mode
        d.mkdir()
        for r in (0, 1):
            (d / f"rank{r}.pt.trace.json.gz").symlink_to(DDP / f"{mode}.rank{r}.pt.trace.json.gz")
        out.append(d)
    return out[0], out[1]


@pytest.fixture(scope="module")
def rank_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    dirs = ddp_rank_dirs(tmp_path_factory.mktemp("ddp"))
    if dirs is None:
        pytest.skip("reports/ddp_mlp absent")
    return dirs


def test_same_named_traces_are_named_by_their_folder():
    assert trace_labels([Path("a/eager/rank0.json"), Path("b/compile/rank0.json")]) == [
        "eager/rank0", "compile/rank0"]
    assert trace_labels([Path("x/rank0.json"), Path("y/x/rank0.json")]) == ["x/rank0",
                                                                          "x/rank0#2"]
    assert trace_labels([Path("eager.json"), Path("compile.json")]) == ["eager", "compile"]


def test_nccl_share_is_the_union_of_collective_kernels_over_gpu_busy(tmp_path: Path):
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=20_000, name="gemm")
    b.kernel(launch_ts=2_000, ts=30_000, dur=30_000,
             name="ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
    b.kernel(launch_ts=3_000, ts=50_000, dur=20_000,  # overlaps the first NCCL kernel by 10 µs
             name="ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
             stream=8)
    path = b.write(tmp_path / "rank0.json")
    trace = load(path)
    f = rank_facts(trace, analyze(trace))
    assert f is not None and f.nccl_busy_ns == 40_000 and f.gpu_busy_ns == 60_000
    assert f.nccl_share == pytest.approx(40_000 / 60_000)


def test_a_trace_without_collectives_or_world_is_not_a_rank(tmp_path: Path):
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=20_000, name="gemm")
    trace = load(b.write(tmp_path / "t.json"))
    assert rank_facts(trace, analyze(trace)) is None


def test_comparing_two_single_ranks_warns_and_names_the_nccl_share(rank_dirs):
    eager, compile_ = rank_dirs
    inputs = load_inputs([eager / "rank1.pt.trace.json.gz", compile_ / "rank1.pt.trace.json.gz"])
    comparison, report = build(inputs)
    assert [r.mode for r in comparison.rows] == ["eager/rank1", "compile/rank1"]
    (warning,) = [w for w in report.warnings if "ranks of a distributed run" in w]
    # eager rank 1 waits in NCCL for its straggler (rank 0): 92.6 % of its GPU busy (measured)
    assert "eager/rank1: rank 1 of 2, NCCL kernels 92.6 % of its GPU busy" in warning
    assert "communication, not compute" in warning and "RANKDIR_A RANKDIR_B" in warning


def test_two_rank_directories_compare_as_rank_sets(rank_dirs):
    eager, compile_ = rank_dirs
    inputs = load_inputs([eager, compile_])
    assert [m.mode for m in inputs.modes] == ["eager", "compile"]
    assert all(m.ranks is not None for m in inputs.modes)  # the multi-rank launch evidence
    assert [len(s.ranks.ranks) for s in inputs.rank_sets] == [2, 2]
    comparison, report = build(inputs)
    facts = dict(report.facts)
    assert facts["eager ranks"].startswith(f"2 rank traces in {eager}: rank 0 arrives")
    assert "rank0.pt.trace.json.gz's step time compared" in facts["eager ranks"]
    # compile's straggler is rank 1, its slowest rank (median period) rank 0, as eager's
    assert facts["compile ranks"].startswith(f"2 rank traces in {compile_}: rank 1 arrives")
    assert "rank0.pt.trace.json.gz's step time compared" in facts["compile ranks"]
    launch = next(v for v in comparison.verdicts if v.kind == "launch")
    assert "distributed: the straggler's (rank 0 → rank 1)" in launch.explanation
    doc = json.loads(render(comparison, report, "json"))
    assert doc["facts"]["compile ranks"] == facts["compile ranks"]


def test_a_plain_directory_is_still_refused_with_what_compare_takes(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(UsageError, match="directory of rank traces"):
        load_inputs([tmp_path / "a", tmp_path / "b"])

"""Communication kernels are counted apart from compute kernels: fusion's kernels/step, the
comparison row's kernels/step and the headline's counts read compute kernels only
(``docs/comparison.md``, "fusion"). Hand-built traces whose counts are known by construction;
which kernel is communication follows :data:`traceviz.vocab.COLLECTIVE_KERNEL`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import traceviz
from tests.kineto import NCCL_ALLREDUCE, TraceBuilder
from traceviz.analyze.compare.modes import ModeInput, compare, kernel_counts
from traceviz.analyze.model import Analysis
from traceviz.report.comparison_model import row_cells
from traceviz.report.jsonout import analysis_to_dict

#: Not a collective by the vocabulary (the prefix is anchored): a compute kernel.
NCCL_NAMED_COMPUTE = "fused_nccl_pack_kernel"
OLD_NCCL = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"


def trace(tmp_path: Path, name: str, compute: list[str], comm: list[str], steps: int = 4,
          empty_steps: int = 0) -> Path:
    """``steps`` steps, each as long as its GPU work plus 11 µs; in each, the ``compute``
    kernels back to back from 1 µs (8 µs each, stream 7), then the ``comm`` kernels back to
    back from the last compute kernel's end (5 µs each, stream 20); then ``empty_steps`` steps
    with no GPU work."""
    b = TraceBuilder()
    step_ns = 11_000 + len(compute) * 8_000 + len(comm) * 5_000
    for n in range(steps):
        s = n * step_ns
        b.step(n + 1, s, step_ns)
        for i, k in enumerate(compute):
            b.kernel(launch_ts=s + 100 + i * 10, ts=s + 1_000 + i * 8_000, dur=8_000, name=k)
        for i, k in enumerate(comm):
            b.collective(s + 500 + i * 10, s + 1_000 + len(compute) * 8_000 + i * 5_000, 5_000,
                         kernel=k)
    for n in range(steps, steps + empty_steps):
        b.step(n + 1, n * step_ns, step_ns)
    return b.write(tmp_path / f"{name}.json")


def analysis(path: Path) -> Analysis:
    return traceviz.analyze(path).result


def test_a_step_of_three_compute_kernels_and_one_allreduce_counts_three_and_one(tmp_path):
    a = analysis(trace(tmp_path, "t", ["gemm", "relu", "add"], [NCCL_ALLREDUCE]))
    assert a.comm is not None
    assert a.steps.column("kernels").tolist() == [4, 4, 4, 4]  # the step still has 4 kernels
    assert a.comm.steps.column("comm_kernels").tolist() == [1, 1, 1, 1]
    assert a.compute_kernels().tolist() == [3, 3, 3, 3]
    counts = kernel_counts(a)
    assert (counts.kernels, counts.activities, counts.comm_kernels) == (3.0, 3.0, 1.0)
    assert a.comm.sums().comm_kernels == 4


def test_a_kernel_merely_named_nccl_is_compute_and_an_old_style_nccl_kernel_is_not(tmp_path):
    a = analysis(trace(tmp_path, "t", ["gemm", NCCL_NAMED_COMPUTE], [OLD_NCCL, NCCL_ALLREDUCE]))
    assert a.comm is not None
    assert a.compute_kernels().tolist() == [2, 2, 2, 2]
    assert a.comm.steps.column("comm_kernels").tolist() == [2, 2, 2, 2]


def test_only_a_kernel_named_nccl_is_no_communication_at_all(tmp_path):
    a = analysis(trace(tmp_path, "t", ["gemm", NCCL_NAMED_COMPUTE], []))
    assert a.comm is None
    assert a.compute_kernels().tolist() == a.steps.column("kernels").tolist() == [2, 2, 2, 2]
    counts = kernel_counts(a)
    assert (counts.kernels, counts.comm_kernels) == (2.0, None)


def test_steps_without_gpu_work_are_left_out_of_the_medians(tmp_path):
    # 2 steps with 3 + 1 kernels, 3 empty steps: over all 5 the median would be 0
    a = analysis(trace(tmp_path, "t", ["a", "b", "c"], [NCCL_ALLREDUCE], steps=2,
                       empty_steps=3))
    counts = kernel_counts(a)
    assert (counts.kernels, counts.comm_kernels) == (3.0, 1.0)


def test_the_json_report_lists_each_steps_communication_kernels(tmp_path):
    an = traceviz.analyze(trace(tmp_path, "t", ["gemm", "relu", "add"], [NCCL_ALLREDUCE]))
    doc = analysis_to_dict(an.trace, an.result)["communication"]
    assert [s["comm_kernels"] for s in doc["steps"]] == [1, 1, 1, 1]
    assert doc["per_step"]["comm_kernels"] == 1.0


def fusion_of(tmp_path: Path, base: tuple[list[str], list[str]],
              mode: tuple[list[str], list[str]]):
    c = compare([ModeInput("eager", None, analysis(trace(tmp_path, "eager", *base))),
                 ModeInput("compile", None, analysis(trace(tmp_path, "compile", *mode)))])
    return c, next(v for v in c.verdicts if v.kind == "fusion")


def test_fewer_collectives_alone_is_not_fusion(tmp_path):
    # 4 compute + 4 all-reduces → 4 compute + 1 (bucketed): 8 → 5 kernels would be a 37.5 %
    # drop; compute kernels did not move
    c, v = fusion_of(tmp_path, (["a", "b", "c", "d"], [NCCL_ALLREDUCE] * 4),
                     (["a", "b", "c", "d"], [NCCL_ALLREDUCE]))
    assert v.evidence["kernels_per_step"] == [4.0, 4.0]
    assert v.evidence["comm_kernels_per_step"] == [4.0, 1.0]
    assert v.evidence["kernel_drop"] == 0.0
    assert v.evidence["kernels_basis"] == "compute kernels (communication kernels excluded)"
    assert v.status == "NO_WIN" and "kernel count unchanged, so nothing was fused" in v.explanation
    assert ("compute kernels/step 4 → 4 (±0%; communication kernels/step 4 → 1, not counted)"
            in v.explanation)
    row = {r.mode: r for r in c.rows}
    assert (row["eager"].kernels, row["eager"].comm_kernels) == (4.0, 4.0)
    assert (row["compile"].kernels, row["compile"].comm_kernels) == (4.0, 1.0)
    assert "4 → 4 kernels, 4 → 1 communication kernels per step" in c.headlines[0].text
    assert row_cells(row["compile"])[6] == "4 + 1 comm"  # the table's kernels/step cell


def test_a_twenty_percent_drop_of_compute_kernels_is_fused_despite_the_collectives(tmp_path):
    # 5 compute + 5 collectives → 4 + 5: all kernels 10 → 9 (10 %, short of 20 %); compute
    # kernels 5 → 4, exactly the 20 % fusion needs (the edge counts as reached)
    _, v = fusion_of(tmp_path, (list("abcde"), [NCCL_ALLREDUCE] * 5),
                     (list("abcd"), [NCCL_ALLREDUCE] * 5))
    assert v.evidence["kernels_per_step"] == [5.0, 4.0]
    assert np.isclose(v.evidence["kernel_drop"], 0.2)
    assert v.status == "WIN", v.explanation
    assert v.evidence["gpu_busy_us_per_step"] == [40.0, 32.0]  # compute busy: 5 / 4 × 8 µs


def test_a_trace_without_collectives_beside_one_with_them_counts_zero_of_them(tmp_path):
    c, v = fusion_of(tmp_path, (["a", "b"], [NCCL_ALLREDUCE]), (["a", "b"], []))
    assert v.evidence["comm_kernels_per_step"] == [1.0, 0.0]
    assert c.rows[1].comm_kernels is None
    assert "2 → 2 kernels, 1 → 0 communication kernels per step" in c.headlines[0].text


def test_traces_without_collectives_keep_their_counts_and_words(tmp_path):
    c, v = fusion_of(tmp_path, (["a", "b"], []), (["a"], []))
    assert "kernels_basis" not in v.evidence and "comm_kernels_per_step" not in v.evidence
    assert "medians over steps: kernels/step 2 → 1" in v.explanation
    assert "communication kernels" not in c.headlines[0].text
    assert c.rows[0].comm_kernels is None

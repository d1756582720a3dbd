"""The kernel diff on hand-built traces (answers known by construction) and real run traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.kineto import TraceBuilder
from traceviz.analyze.analysis import analyze
from traceviz.analyze.review.kernel_diff import (
    KernelDiff,
    KernelProfile,
    kernel_diff,
    kernel_profile,
    match_key,
)
from traceviz.cli.app import app
from traceviz.trace import load

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def _trace(tmp: Path, name: str, steps: list[list[tuple[str, int]]],
           outside: list[tuple[str, int]] = ()) -> Path:
    """Steps of 1 ms each; every kernel (name, duration ns) launched in its step, run back to
    back; ``outside``: kernels launched after the last step (attributed to no step)."""
    b = TraceBuilder()
    t = 0
    for i, kernels in enumerate(steps):
        b.step(i + 1, t, 1_000_000)
        gpu = t + 10_000
        for j, (k, dur) in enumerate(kernels):
            b.kernel(launch_ts=t + 1_000 * (j + 1), ts=gpu, dur=dur, name=k)
            gpu += dur
        t += 1_000_000
    for j, (k, dur) in enumerate(outside):
        b.kernel(launch_ts=t + 10_000 + 1_000 * j, ts=t + 50_000 + 10_000 * j, dur=dur, name=k)
    return b.write(tmp / name)


def _profile(path: Path) -> KernelProfile:
    trace = load(path)
    return kernel_profile(trace, analyze(trace))


def test_match_key_drops_only_an_inductor_kernels_trailing_index() -> None:
    assert match_key("triton_poi_fused_add_mul_3") == "triton_poi_fused_add_mul"
    assert match_key("triton_red_fused__softmax_12") == "triton_red_fused__softmax"
    assert match_key("triton_per_fused_native_layer_norm_0") == "triton_per_fused_native_layer_norm"
    assert match_key("my_triton_kernel_0") == "my_triton_kernel_0"  # user kernel: kept whole
    assert match_key("triton_poi_fused_add") == "triton_poi_fused_add"  # no index: as is
    assert match_key("sm90_xmma_gemm_1") == "sm90_xmma_gemm_1"


def test_profile_counts_only_activities_in_steps_per_step(tmp_path: Path) -> None:
    steps = [[("gemm_k", 4_000), ("triton_poi_fused_add_0", 1_000)],
             [("gemm_k", 6_000), ("triton_poi_fused_add_1", 3_000)]]
    p = _profile(_trace(tmp_path, "a.json", steps, outside=[("gemm_k", 99_000)]))
    assert p.steps == 2
    by = {g.key: g for g in p.groups}
    assert (by["gemm_k"].count, by["gemm_k"].total_ns) == (2, 10_000)  # the outside one left out
    tri = by["triton_poi_fused_add"]
    assert (tri.family, tri.names, tri.count, tri.total_ns) == (
        "triton", ("triton_poi_fused_add_0", "triton_poi_fused_add_1"), 2, 4_000)


def test_diff_matches_renamed_inductor_kernels_and_classifies_every_change(tmp_path: Path
                                                                          ) -> None:
    a = _profile(_trace(tmp_path, "a.json", [[
        ("gemm_k", 10_000), ("triton_poi_fused_add_mul_3", 2_000), ("old_k", 500),
        ("same_k", 1_000), ("edge_k", 2_000), ("twice_k", 1_000)]] * 2))
    b = _profile(_trace(tmp_path, "b.json", [[
        ("gemm_k", 12_000), ("triton_poi_fused_add_mul_0", 1_000), ("new_k", 700),
        ("same_k", 1_000), ("edge_k", 2_100), ("twice_k", 500), ("twice_k", 500)]] * 2))
    d = kernel_diff(a, b)
    by = {r.key: r for r in d.rows}
    assert by["gemm_k"].status == "slower" and by["gemm_k"].delta_ns == 2_000
    tri = by["triton_poi_fused_add_mul"]  # _3 in A, _0 in B: one group
    assert (tri.status, tri.names_a, tri.names_b, tri.delta_ns) == (
        "faster", ("triton_poi_fused_add_mul_3",), ("triton_poi_fused_add_mul_0",), -1_000)
    assert (by["old_k"].status, by["old_k"].delta_ns) == ("removed", -500)
    assert (by["new_k"].status, by["new_k"].count_b, by["new_k"].count_a) == ("added", 1.0, 0.0)
    assert by["same_k"].status == "unchanged"
    assert by["edge_k"].status == "unchanged"  # +5 % exactly: not more than min_change
    assert (by["twice_k"].status, by["twice_k"].count_b) == ("recounted", 2.0)
    assert [r.key for r in d.rows][:3] == ["gemm_k", "triton_poi_fused_add_mul", "new_k"]
    assert d.delta_ns == 2_000 - 1_000 - 500 + 700 + 100
    assert d.counts() == {"added": 1, "removed": 1, "slower": 1, "faster": 1, "recounted": 1,
                          "unchanged": 2}
    assert {r.key: r.status for r in kernel_diff(a, b, min_change=0.04).rows}["edge_k"] == "slower"


def test_different_step_counts_compare_per_step(tmp_path: Path) -> None:
    a = _profile(_trace(tmp_path, "a.json", [[("k", 1_000)]] * 2))
    b = _profile(_trace(tmp_path, "b.json", [[("k", 1_000)]] * 4))
    d = kernel_diff(a, b)
    assert (d.steps_a, d.steps_b, d.changes) == (2, 4, ())


def test_a_run_dirs_trace_diffed_with_itself_is_empty() -> None:
    path = REPORTS / "tiny_transformer" / "compile.pt.trace.json.gz"
    if not path.is_file():
        pytest.skip("committed run absent")
    p = _profile(path)
    d = kernel_diff(p, p)
    assert d.changes == () and d.delta_ns == 0 and len(d.rows) == len(p.groups) > 0


def test_real_eager_to_compile_replaces_aten_kernels_by_one_fused_triton_kernel() -> None:
    run = REPORTS / "rmsnorm_residual"
    if not run.is_dir():
        pytest.skip("committed run absent")
    d: KernelDiff = kernel_diff(_profile(run / "eager.pt.trace.json.gz"),
                                _profile(run / "compile.pt.trace.json.gz"))
    added = [r for r in d.rows if r.status == "added"]
    assert [r.key for r in added] == ["triton_red_fused_add_mean_mul_pow_rsqrt"]
    assert {r.status for r in d.rows} == {"added", "removed"}
    assert sum(r.count_a for r in d.rows) == 7.0  # the seven eager kernels per step, all removed


@pytest.mark.parametrize("fmt", ["text", "md", "json", "html"])
def test_cli_renders_every_format(tmp_path: Path, fmt: str) -> None:
    a = _trace(tmp_path, "a.json", [[("triton_poi_fused_add_7", 1_000), ("gone", 300)]])
    b = _trace(tmp_path, "b.json", [[("triton_poi_fused_add_2", 3_000)]])
    out = tmp_path / f"diff.{fmt}"
    res = CliRunner().invoke(app, ["kernel-diff", str(a), str(b), "-f", fmt, "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert ("triton\\_poi\\_fused\\_add" if fmt == "md" else "triton_poi_fused_add") in text
    if fmt == "json":
        doc = json.loads(text)
        assert doc["counts"]["slower"] == 1 and doc["counts"]["removed"] == 1
        assert doc["changes"][0]["delta_us_per_step"] == 2.0
    if fmt == "html":
        assert 'class="sortable"' in text and "table.sortable" in text


def test_cli_needs_a_mode_for_run_directories(tmp_path: Path) -> None:
    run = REPORTS / "rmsnorm_residual"
    if not run.is_dir():
        pytest.skip("committed run absent")
    res = CliRunner().invoke(app, ["kernel-diff", str(run), str(run), "-f", "json"])
    assert res.exit_code == 2 and "--mode" in res.output
    res = CliRunner().invoke(app, ["kernel-diff", str(run), str(run), "-m", "compile", "-f",
                                   "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["changes"] == []


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_side_without_gpu_work_is_named_instead_of_an_empty_diff(tmp_path: Path,
                                                                   fmt: str) -> None:
    cpu = TraceBuilder()
    cpu.step(1, 0, 10_000)
    cpu.cpu_op("aten::add", 1_000, 1_000)
    a = cpu.write(tmp_path / "cpu.json")
    b = _trace(tmp_path, "b.json", [[("triton_poi_fused_add_2", 3_000)]])
    res = CliRunner().invoke(app, ["kernel-diff", str(a), str(b), "-f", fmt])
    assert res.exit_code == 0, res.output
    said = "A: cpu.json has no step with GPU work, so no kernel of it is compared"
    if fmt == "json":
        warnings = json.loads(res.stdout)["warnings"]
        assert len(warnings) == 1 and warnings[0].startswith(said)
    else:
        assert said in res.stdout and "B: b.json has no step" not in res.stdout

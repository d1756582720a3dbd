"""Two versions of a step (``profile --against``): the paired old → new verdict and what the
report leads with, on hand-built records whose answer is known by construction."""

from __future__ import annotations

import pytest

from traceviz.analyze.review.kernel_diff import ADDED, KernelChange, KernelDiff
from traceviz.analyze.review.run_diff import RunData, RunModeData
from traceviz.analyze.review.version_diff import compare_versions, version_speed
from traceviz.collect.against import input_signature, signature_mismatch
from traceviz.report.version_report import added_first

MIN = 0.03


def against(speedup: float, low: float, high: float, old=(2.0, 2.0, 2.0)) -> dict:
    new = [o / speedup for o in old]
    return {"status": "ok", "paired": {
        "baseline": "old", "baseline_block_ms": list(old), "mode_block_ms": new,
        "speedup": speedup, "ci_low": low, "ci_high": high, "level": 0.95,
        "stopped": "converged"}}


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (1 + MIN, 1.2, "inconclusive"),       # low end exactly at 1 + min: not beyond it
    (1 + MIN + 1e-9, 1.2, "faster"),
    (0.8, 1 - MIN, "inconclusive"),       # high end exactly at 1 − min
    (0.8, 1 - MIN - 1e-9, "slower"),
    (1 - MIN, 1 + MIN, "unchanged"),      # both ends on the edges: within, edges included
    (1 - MIN - 1e-9, 1 + MIN, "inconclusive"),
])
def test_paired_verdict_edges(low, high, verdict):
    s = version_speed(against((low + high) / 2, low, high), MIN)
    assert s is not None and s.status == verdict


def test_new_step_time_is_old_over_the_paired_speedup():
    s = version_speed(against(0.8, 0.75, 0.85, old=(1.0, 3.0, 2.0)), MIN)
    assert s.old_ms == 2.0
    assert s.new_ms == pytest.approx(2.5)
    assert s.change == pytest.approx(0.25)
    assert s.pairs == 3 and s.stopped == "converged"


def test_speedup_is_recomputed_from_the_blocks_when_the_summary_is_missing():
    rec = {"status": "ok", "paired": {"baseline_block_ms": [2.0] * 6,
                                      "mode_block_ms": [1.0] * 6}}
    s = version_speed(rec, MIN)
    assert s.speedup.value == s.speedup.low == s.speedup.high == 2.0
    assert s.status == "faster"


@pytest.mark.parametrize("paired", [
    None, {}, {"baseline_block_ms": [1.0], "mode_block_ms": [1.0, 2.0]},
    {"baseline_block_ms": [1.0, 0.0], "mode_block_ms": [1.0, 2.0]},
    {"baseline_block_ms": [1.0, "x"], "mode_block_ms": [1.0, 2.0]},
])
def test_unusable_blocks_give_no_speed(paired):
    assert version_speed({"status": "ok", "paired": paired}, MIN) is None


def _run(path: str, modes: dict) -> RunData:
    manifest = {"workload": {"name": path, "path": f"/w/{path}.py"}, "modes": modes}
    return RunData(path, manifest, tuple(RunModeData(m, e) for m, e in modes.items()))


def test_each_mode_gets_the_paired_verdict_or_says_why_not():
    old = _run("old", {"eager": {"status": "ok"}, "compile": {"status": "ok"},
                       "cudagraph": {"status": "failed", "reason": "capture"}})
    new = _run("new", {
        "eager": {"status": "ok", "against": against(0.85, 0.83, 0.87)},
        "compile": {"status": "ok", "against": against(1.0, 0.99, 1.01)},
        "cudagraph": {"status": "ok", "against": {
            "status": "skipped", "reason": "the mode did not run for both versions"}},
    })
    vc = compare_versions(old, new)
    assert (vc.old, vc.new) == ("/w/old.py", "/w/new.py")
    assert [(m.mode, m.verdict) for m in vc.modes] == [
        ("eager", "slower"), ("compile", "unchanged"), ("cudagraph", "inconclusive")]
    cg = vc.mode("cudagraph")
    assert cg.speed is None and cg.note.startswith("skipped: the mode did not run")
    assert cg.why.status_a == "failed" and cg.why.status_b == "ok"


def test_host_issue_comes_from_the_paired_blocks_not_the_two_runs_own_processes():
    """OLD's and NEW's issue times of the one-process paired blocks (medians 0.5 and 0.8 ms)
    replace the runs' own processes' (0.2 → 0.9 ms); a record without them keeps the runs'."""
    def own(issue: float) -> dict:
        return {"status": "ok", "paired": {"baseline": "eager", "mode_issue_ms": [issue]}}

    rec = against(0.85, 0.83, 0.87)
    rec["paired"].update(baseline_issue_ms=[0.4, 0.5, 0.7], mode_issue_ms=[0.9, 0.8, 0.6])
    old = _run("old", {"eager": {"status": "ok"}, "compile": own(0.2)})
    new = _run("new", {"eager": {"status": "ok"}, "compile": {**own(0.9), "against": rec}})
    m = compare_versions(old, new).mode("compile")
    assert (m.why.host_issue_ms.a, m.why.host_issue_ms.b) == (0.5, 0.8)
    new = _run("new", {"eager": {"status": "ok"},
                       "compile": {**own(0.9), "against": against(0.85, 0.83, 0.87)}})
    m = compare_versions(old, new).mode("compile")
    assert (m.why.host_issue_ms.a, m.why.host_issue_ms.b) == (0.2, 0.9)


def test_a_mode_without_an_against_record_is_inconclusive_with_the_reason():
    vc = compare_versions(_run("old", {"eager": {"status": "ok"}}),
                          _run("new", {"eager": {"status": "ok"}}))
    (m,) = vc.modes
    assert m.verdict == "inconclusive" and m.against_status == "absent"
    assert "not timed against the old version" in m.note


def _change(key: str, status: str, a: float, b: float) -> KernelChange:
    return KernelChange(key, "aten", status, (key,), (key,), 1.0, 1.0, a, b)


def test_kernel_diff_lists_added_and_removed_groups_first():
    rows = (_change("big", "slower", 0.0, 9000.0), _change("new_mul", ADDED, 0.0, 20.0),
            _change("small", "faster", 50.0, 0.0), _change("gone", "removed", 10.0, 0.0))
    ordered = added_first(KernelDiff(10, 10, 0.05, rows))
    assert [r.key for r in ordered.rows] == ["new_mul", "gone", "big", "small"]


def test_input_signatures_name_dtype_and_shape():
    torch = pytest.importorskip("torch")
    sig = input_signature((torch.zeros(2, 3), torch.zeros(4, dtype=torch.int64)))
    assert sig == ["float32[2,3]", "int64[4]"]
    assert signature_mismatch(sig, list(sig)) is None
    assert signature_mismatch(sig, None) is None
    msg = signature_mismatch(sig, ["float32[2,4]", "int64[4]"])
    assert "float32[2,3], int64[4]" in msg and "float32[2,4], int64[4]" in msg


def test_kernel_labels_keep_the_functor_of_aten_elementwise_kernels():
    from traceviz.report.version_report import kernel_label

    aten = ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, "
            "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, "
            "2ul> >(int, at::native::AUnaryFunctor<float, float, float, "
            "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)")
    assert kernel_label(aten) == "vectorized_elementwise_kernel<MulFunctor>"
    assert kernel_label("triton_red_fused_add_mean_mul_pow_rsqrt") == (
        "triton_red_fused_add_mean_mul_pow_rsqrt")
    long = "x" * 100
    assert len(kernel_label(long, 20)) == 20 and "…" in kernel_label(long, 20)

"""The HTA bridge on small hand-made Kineto traces, run through the real ``hta`` package.

The trace has two ProfilerSteps on rank 2 and one GPU op per launch API that matters:
``cudaLaunchKernel`` (eager), ``cuLaunchKernel`` (Triton, with the launch ``cpu_op`` carrying
``args.stream`` as Inductor writes it), ``cudaGraphLaunch`` (one replay, two kernels) and
``cudaMemcpyAsync``. Times are µs, as Kineto writes them.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from traceviz.holistic import HtaResult, read_rank, run_hta
from traceviz.report.hta_section import hta_html, hta_markdown

pytestmark = pytest.mark.hta
pytest.importorskip("hta")

CPU, TID, GPU, STREAM = 100, 100, 0, 7
RANK = 2


def _x(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    gpu = cat in ("kernel", "gpu_memcpy", "gpu_memset")
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": GPU if gpu else CPU,
        "tid": STREAM if gpu else TID,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def _launch(api: str, cat: str, ts: float, corr: int) -> dict[str, Any]:
    return _x(cat, api, ts, 4.0, correlation=corr, **{"External id": corr})


def _events() -> list[dict[str, Any]]:
    gpu = {"stream": STREAM, "device": GPU}
    return [
        _x("user_annotation", "ProfilerStep#1", 0.0, 100.0, **{"External id": 1000}),
        _x("user_annotation", "ProfilerStep#2", 100.0, 100.0, **{"External id": 1001}),
        _x("cpu_op", "aten::add", 5.0, 20.0, **{"External id": 1}),
        _launch("cudaLaunchKernel", "cuda_runtime", 10.0, 1),
        _x("kernel", "add_kernel", 20.0, 10.0, correlation=1, **gpu),
        _x("cpu_op", "triton_poi_fused_add_0", 35.0, 15.0, stream=0, kernel_backend="triton"),
        _launch("cuLaunchKernel", "cuda_driver", 40.0, 2),
        _x("kernel", "triton_poi_fused_add_0", 50.0, 10.0, correlation=2, **gpu),
        _launch("cudaGraphLaunch", "cuda_runtime", 110.0, 3),
        _x("kernel", "graph_kernel_a", 120.0, 5.0, correlation=3, **gpu),
        _x("kernel", "graph_kernel_b", 126.0, 5.0, correlation=3, **gpu),
        _launch("cudaMemcpyAsync", "cuda_runtime", 140.0, 4),
        _x("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 150.0, 4.0, correlation=4, **gpu),
    ]


def write_trace(path: Path, *, rank: int | None = RANK, gz: bool = True) -> Path:
    """Write the hand-made trace (gzip unless ``gz`` is False) and return its path."""
    doc: dict[str, Any] = {"schemaVersion": 1, "traceEvents": _events()}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 4}
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> HtaResult:
    return run_hta(write_trace(tmp_path_factory.mktemp("hta") / "trace.json.gz"))


def test_rank_comes_from_distributed_info(result: HtaResult) -> None:
    assert (result.rank, result.rank_source) == (RANK, "distributedInfo.rank")


def test_every_analysis_runs_without_error(result: HtaResult) -> None:
    assert result.errors == {}
    assert result.temporal_breakdown is not None
    assert result.idle_time_breakdown
    assert result.launch_stats is not None
    assert result.critical_path is not None
    assert result.critical_path["window"] == "ProfilerStep#2"


def test_ns_rounding_is_disabled_and_version_is_recorded(result: HtaResult) -> None:
    import hta.version

    assert result.ns_rounding_disabled
    assert result.hta_version == hta.version.__version__


def test_launch_stats_skip_triton_and_graph_launches(result: HtaResult) -> None:
    assert result.launch_calls == {
        "cudaLaunchKernel": {"calls": 1, "in_launch_stats": 1},
        "cuLaunchKernel": {"calls": 1, "in_launch_stats": 0},
        "cudaGraphLaunch": {"calls": 1, "in_launch_stats": 0},
        "cudaMemcpyAsync": {"calls": 1, "in_launch_stats": 1},
    }
    assert result.launch_stats is not None and result.launch_stats["launches"] == 2
    skipped = [n for n in result.notes if "they skip" in n]
    assert skipped and "cuLaunchKernel ×1" in skipped[0] and "cudaGraphLaunch ×1" in skipped[0]


def test_temporal_breakdown_spans_the_triton_cpu_op_with_a_stream(result: HtaResult) -> None:
    # HTA spans every row with a stream: the Triton launch cpu_op (args.stream = 0) starts at
    # 35 µs, before the first GPU op at 20 µs ends, so kernel_time runs 20 → 154 µs either way,
    # but the cpu_op is listed and explained.
    assert result.temporal_events == {"kernel": 4, "cpu_op": 1, "gpu_memcpy": 1}
    assert result.temporal_breakdown is not None
    assert result.temporal_breakdown["kernel_time_us"] == pytest.approx(134.0)
    assert any("cpu_op ×1" in n for n in result.notes)


def test_all_gpu_ops_kept_with_last_step_included(result: HtaResult) -> None:
    assert result.include_last_profiler_step
    assert result.gpu_ops == {"kernel": 4, "gpu_memcpy": 1, "gpu_memset": 0}


def test_to_dict_is_strict_json(result: HtaResult) -> None:
    text = json.dumps(result.to_dict(), allow_nan=False)
    back = json.loads(text)
    assert back["rank"] == RANK and back["errors"] == {}
    assert isinstance(back["idle_time_breakdown"], list)


def test_run_is_silent_and_restores_logging_and_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hta.configs.env_options import HTAEnvOptions

    root = logging.getLogger()
    handlers, disabled = list(root.handlers), logging.getLogger("hta").disabled
    before = HTAEnvOptions.instance().disable_ns_rounding()
    run_hta(write_trace(tmp_path / "t.json.gz"))
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "")
    assert root.handlers == handlers and logging.getLogger("hta").disabled == disabled
    assert HTAEnvOptions.instance().disable_ns_rounding() == before


def test_trace_without_distributed_info_is_rank_0_with_a_note(tmp_path: Path) -> None:
    r = run_hta(write_trace(tmp_path / "t.json", rank=None, gz=False))
    assert (r.rank, r.errors) == (0, {})
    assert any("no distributedInfo" in n for n in r.notes)


def test_gzip_is_recognised_by_content_not_suffix(tmp_path: Path) -> None:
    r = run_hta(write_trace(tmp_path / "trace.json", gz=True))
    assert r.errors == {} and r.gpu_ops["kernel"] == 4


def test_explicit_rank_wins(tmp_path: Path) -> None:
    r = run_hta(write_trace(tmp_path / "t.json.gz"), rank=5)
    assert (r.rank, r.rank_source, r.errors) == (5, "argument", {})


def test_broken_trace_becomes_a_load_error_not_an_exception(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    r = run_hta(bad)
    assert set(r.errors) == {"load"}
    assert r.temporal_breakdown is None and r.launch_stats is None
    assert "HTA errors" in hta_markdown(r) and "load:" in hta_markdown(r)


def test_trace_with_no_events_for_hta_becomes_a_load_error(tmp_path: Path) -> None:
    meta_only = tmp_path / "meta.json"
    meta_only.write_text(
        json.dumps({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {}}]})
    )
    r = run_hta(meta_only)
    assert set(r.errors) == {"load"}


def test_missing_file_becomes_a_load_error(tmp_path: Path) -> None:
    r = run_hta(tmp_path / "absent.json.gz")
    assert (r.rank, set(r.errors)) == (0, {"load"})


def test_without_hta_installed_the_result_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import traceviz.holistic.run as bridge

    monkeypatch.setattr(bridge, "hta_available", lambda: False)
    r = run_hta(write_trace(tmp_path / "t.json.gz"))
    assert r.hta_version is None and "traceviz[hta]" in r.errors["load"]
    assert "HTA (not installed)" in hta_markdown(r)


def test_read_rank(tmp_path: Path) -> None:
    assert read_rank(write_trace(tmp_path / "a.json.gz", rank=3)) == 3
    assert read_rank(write_trace(tmp_path / "b.json.gz", rank=None)) is None
    (tmp_path / "c.json").write_text("[]")
    assert read_rank(tmp_path / "c.json") is None


def test_markdown_section_has_every_table(result: HtaResult) -> None:
    md = hta_markdown(result)
    for heading in (
        "## HTA (Holistic Trace Analysis)",
        "### Temporal breakdown (µs)",
        "### Idle time breakdown per stream (µs)",
        "### Launch calls by API",
        "### Kernel launch statistics (µs)",
        "### Critical path, ProfilerStep#2 (µs)",
        "### Where HTA's definitions differ from traceviz's",
    ):
        assert heading in md
    assert "| cuLaunchKernel | 1 | 0 |" in md


def test_html_escapes_strings_from_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "<img src=x onerror=alert(1)>.json.gz"
    r = run_hta(write_trace(path))
    fragment = hta_html(r)
    assert fragment.startswith('<section id="hta">')
    assert "<img" not in fragment and "<script" not in fragment
    assert "&lt;img src=x onerror=alert(1)&gt;.json.gz" in fragment


def test_notes_use_traceviz_totals_when_given(tmp_path: Path) -> None:
    from dataclasses import dataclass

    @dataclass
    class Totals:
        activities: int = 5
        unlinked: int = 0
        launches: int = 4
        kernel_launches: int = 2
        graph_launches: int = 1
        gpu_window_ns: int = 134_000
        gpu_busy_all_ns: int = 34_000

    r = run_hta(write_trace(tmp_path / "t.json.gz"), totals=Totals())
    assert any("traceviz counts 4 launch call(s) (2 kernel, 1 graph" in n for n in r.notes)
    assert any("both analysed all 5 GPU ops" in n for n in r.notes)
    assert not any(math.isnan(v) for v in (r.temporal_breakdown or {}).values())


def test_importing_the_bridge_does_not_import_hta() -> None:
    import subprocess

    code = "import sys, traceviz.holistic, traceviz.report.hta_section; print('hta' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_critical_path_runs_on_a_cpu_step_not_its_gpu_annotation_copy() -> None:
    """The DDP trace has each ProfilerStep twice with stream -1 in HTA's dataframe: the CPU
    step (``user_annotation``, 4.8-6.2 ms) and its GPU-timeline copy (``gpu_user_annotation``,
    97-128 µs). The second by start time was the copy of step #3 (a path of about 100 µs); the
    second CPU step is #4, 5.53 ms long."""
    trace = Path(__file__).resolve().parent.parent / "reports/ddp_mlp/eager.rank0.pt.trace.json.gz"
    cp = run_hta(trace).critical_path
    assert cp is not None and cp["window"] == "ProfilerStep#4"
    assert cp["length_us"] > 2_500  # most of the 5,532 µs CPU step, not a 108 µs copy

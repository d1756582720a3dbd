"""Keeps the benchmark machinery working (not timed): generator + report on a tiny trace.

A hand-made two-step Kineto trace (eager launches, a CUDA-graph replay, a sync, flows,
metadata, the profiler span) is replicated ×3 by :mod:`benchmarks.generate`; the replica must
stay internally consistent, and ``traceviz report --format json`` on it must give exactly 3×
the source's counts and identical per-step metrics (the runner's ``--check``).
"""

from __future__ import annotations

import collections
import gzip
import json
import py_compile
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.generate import replicate  # noqa: E402
from benchmarks.run import compare_reports  # noqa: E402

COPIES = 3
CPU_PID, MAIN_TID, GPU_PID, STREAM = 4242, 4242, 0, 7
BASE_US = 4_000_000_000  # ts are relative to baseTimeNanoseconds, in µs


def _x(
    cat: str,
    name: str,
    pid: int | str,
    tid: int | str,
    ts: float,
    dur: float,
    args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete (``ph: X``) event; ``ts``/``dur`` in µs."""
    ev: dict[str, Any] = {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
    }
    if args:
        ev["args"] = args
    return ev


def _launch(
    events: list[dict], t: float, corr: int, ext: int, kernels: int, graph: bool = False
) -> None:
    """A CPU op launching ``kernels`` GPU kernels (one cudaGraphLaunch when ``graph``)."""
    events.append(_x("cpu_op", "aten::mm", CPU_PID, MAIN_TID, t, 20.5, {"External id": ext}))
    api = "cudaGraphLaunch" if graph else "cudaLaunchKernel"
    events.append(
        _x(
            "cuda_runtime",
            api,
            CPU_PID,
            MAIN_TID,
            t + 2.25,
            6.125,
            {"External id": ext, "cbid": 211, "correlation": corr},
        )
    )
    events.append(
        {
            "ph": "s",
            "id": corr,
            "pid": CPU_PID,
            "tid": MAIN_TID,
            "ts": t + 2.25,
            "cat": "ac2g",
            "name": "ac2g",
        }
    )
    for i in range(kernels):
        k0 = t + 12.0 + i * 30.0
        args = {"External id": ext, "device": 0, "stream": STREAM, "correlation": corr}
        events.append(_x("kernel", f"kernel_{i}", GPU_PID, STREAM, k0, 25.75, args))
        events.append(
            {
                "ph": "f",
                "id": corr,
                "pid": GPU_PID,
                "tid": STREAM,
                "ts": k0,
                "cat": "ac2g",
                "name": "ac2g",
                "bp": "e",
            }
        )


def tiny_trace() -> dict[str, Any]:
    """Two 500 µs steps: step 3 eager (2 launches), step 4 one 3-kernel graph replay + sync."""
    ev: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": CPU_PID, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "python"}},
        {
            "ph": "M",
            "name": "process_labels",
            "pid": GPU_PID,
            "tid": 0,
            "args": {"labels": "GPU 0"},
        },
        {
            "ph": "M",
            "name": "thread_name",
            "pid": GPU_PID,
            "tid": STREAM,
            "args": {"name": "stream 7 "},
        },
        _x("Trace", "PyTorch Profiler (0)", "Spans", "PyTorch Profiler", BASE_US + 0.5, 1200.25),
        {
            "ph": "i",
            "s": "g",
            "name": "Iteration Start: PyTorch Profiler",
            "pid": "Traces",
            "tid": "Trace PyTorch Profiler",
            "ts": BASE_US + 0.5,
        },
    ]
    t3, t4 = BASE_US + 100.125, BASE_US + 600.125
    ev.append(
        _x("user_annotation", "ProfilerStep#3", CPU_PID, MAIN_TID, t3, 499.5, {"External id": 1})
    )
    _launch(ev, t3 + 10, corr=101, ext=2, kernels=1)
    _launch(ev, t3 + 200, corr=102, ext=3, kernels=1)
    ev.append(
        _x("user_annotation", "ProfilerStep#4", CPU_PID, MAIN_TID, t4, 499.5, {"External id": 4})
    )
    _launch(ev, t4 + 10, corr=103, ext=5, kernels=3, graph=True)
    ev.append(
        _x(
            "cuda_runtime",
            "cudaDeviceSynchronize",
            CPU_PID,
            MAIN_TID,
            t4 + 300,
            150.0,
            {"cbid": 165, "correlation": 104},
        )
    )
    ev.append(
        {
            "ph": "i",
            "s": "g",
            "name": "Record Window End",
            "pid": "",
            "tid": "",
            "ts": BASE_US + 1300.0,
        }
    )
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "distributedInfo": {"rank": 0},
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
        "traceEvents": ev,
        "traceName": "tiny.json",
    }


def _ns(ts: float | int) -> int:
    """A µs value as written in the JSON → exact integer ns."""
    return int(Decimal(repr(ts)) * 1000)


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    """(gzipped tiny source, its ×3 replica, the generator's record)."""
    d = tmp_path_factory.mktemp("bench")
    src = d / "tiny.json.gz"
    with gzip.open(src, "wt") as fh:
        json.dump(tiny_trace(), fh)
    out = d / "tiny-x3.json"
    gen = replicate(src, out, copies=COPIES, gzip_out=True)
    return src, out, gen


def test_replica_is_consistent(replicated: tuple[Path, Path, Any]) -> None:
    _, out, gen = replicated
    source = tiny_trace()["traceEvents"]
    doc = json.loads(out.read_text())
    assert json.loads(gzip.decompress(Path(gen.gz_path).read_bytes())) == doc
    assert doc["baseTimeNanoseconds"] == 1_700_000_000_000_000_000
    events = doc["traceEvents"]
    fixed = sum(1 for e in source if e["ph"] == "M") + 3  # Trace span + 2 instants
    assert gen.plan.n_template == len(source) - fixed
    assert len(events) == gen.events == fixed + COPIES * gen.plan.n_template
    assert gen.plan.graph_launches == 1

    steps = sorted(
        (e for e in events if e.get("cat") == "user_annotation"), key=lambda e: _ns(e["ts"])
    )
    assert [s["name"] for s in steps] == [f"ProfilerStep#{n}" for n in range(3, 3 + 2 * COPIES)]
    period = gen.plan.period_ns
    assert period == 1_000_000  # the 999.5 µs step window + the 0.5 µs gap between steps
    for k, s in enumerate(steps[::2]):
        assert _ns(s["ts"]) == _ns(BASE_US + 100.125) + k * period
    span = next(e for e in events if e.get("cat") == "Trace")
    assert _ns(span["dur"]) == _ns(1200.25) + (COPIES - 1) * period
    end = next(e for e in events if e["name"] == "Record Window End")
    assert _ns(end["ts"]) == _ns(BASE_US + 1300.0) + (COPIES - 1) * period

    runtime = collections.Counter(
        e["args"]["correlation"] for e in events if e.get("cat") == "cuda_runtime"
    )
    assert len(runtime) == 4 * COPIES and set(runtime.values()) == {1}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(kernels) == 5 * COPIES
    assert all(k["args"]["correlation"] in runtime for k in kernels)
    flows = [e for e in events if e["ph"] in "sf"]
    assert {e["id"] for e in flows} <= set(runtime)
    ext = collections.Counter(
        e["args"]["External id"] for e in events if e.get("cat") in ("cpu_op", "user_annotation")
    )
    assert set(ext.values()) == {1}
    # every kernel still starts 12 µs + 30 µs × i after its launching op, in every copy
    by_corr = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"}
    for k in kernels:
        assert _ns(k["ts"]) - _ns(by_corr[k["args"]["correlation"]]["ts"]) in {
            9_750,
            39_750,
            69_750,
        }


def _report(trace: Path, out: Path) -> dict[str, Any]:
    cli = Path(sys.executable).with_name("traceviz")
    subprocess.run(
        [str(cli), "report", str(trace), "--format", "json", "-o", str(out)], check=True, cwd=REPO
    )
    return json.loads(out.read_text())


def test_report_on_replica_scales_exactly(
    replicated: tuple[Path, Path, Any], tmp_path: Path
) -> None:
    traceviz = pytest.importorskip("traceviz")
    if not hasattr(traceviz, "analyze"):
        pytest.skip("traceviz.analyze has not landed yet (the lead's analyzer)")
    src, out, gen = replicated
    double = tmp_path / "tiny-x2.json"
    replicate(src, double, copies=2)
    source = _report(src, tmp_path / "src.json")
    replica = _report(out, tmp_path / "rep.json")
    result = compare_reports(
        source, replica, COPIES, gen.plan.period_ns, _report(double, tmp_path / "x2.json")
    )
    assert result["ok"], result
    assert not result["not_exact_multiple"]  # every counted event is inside the step window
    assert len(replica["steps"]) == COPIES * len(source["steps"]) == 2 * COPIES


def test_workers_benchmark_times_each_count_and_the_other_version_side_by_side(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks.workers`` on a small real trace, against this very tree: every output is
    identical, each count has its timed runs, the other version's runs and the memory run."""
    from benchmarks.workers import main

    trace = REPO / "tests" / "data" / "gpu" / "elementwise_eager.pt.trace.json.gz"
    out = tmp_path / "workers.json"
    main(["--trace", str(trace), "--workers", "1,2", "--repeat", "1", "--against", str(REPO),
          "-o", str(out)])
    result = json.loads(out.read_text())
    assert result["outputs_identical"] and result["against_outputs_identical"]
    assert [r["workers"] for r in result["rows"]] == [1, 2]
    for row in result["rows"]:
        assert len(row["wall_s"]) == len(row["against_wall_s"]) == 1
        assert row["speedup_vs_against"] > 0 and row["peak_tree_pss_bytes"] > 0
    assert "against s" in capsys.readouterr().out


def test_workers_benchmark_refuses_a_directory_without_traceviz(tmp_path: Path) -> None:
    from benchmarks.workers import main

    with pytest.raises(SystemExit):
        main(["--trace", "t.json", "--against", str(tmp_path)])


def test_workers_benchmark_names_packages_without_bytecode(tmp_path: Path) -> None:
    from benchmarks.workers import _uncompiled

    pkg = tmp_path / "fresh_pkg_no_pyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("X = 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert _uncompiled(("fresh_pkg_no_pyc",)) == {"fresh_pkg_no_pyc": str(pkg)}
        py_compile.compile(str(pkg / "__init__.py"))
        assert _uncompiled(("fresh_pkg_no_pyc",)) == {}
    finally:
        sys.path.remove(str(tmp_path))

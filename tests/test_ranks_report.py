"""`traceviz report` on rank traces: every format, the JSON `ranks` shape, CLI targets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_ranks_handbuilt import rank_trace

RANKS_KEYS = {"count", "world_size", "clock", "straggler", "per_rank", "collectives"}
PER_RANK_KEYS = {"rank", "steps", "period_us_median", "gpu_busy_us_median",
                 "effective_busy_us_median", "comm_wait_us_median", "comm_transfer_us_median",
                 "exposed_comm_us_median", "host_wait_us_median", "cpu_bound_share_median"}


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def rank_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ranks"
    d.mkdir()
    rank_trace(d, 0, 2, arrive=30_000)
    rank_trace(d, 1, 2, arrive=55_000, launch=50_000)
    return d


def test_json_of_a_rank_dir_has_the_documented_ranks_shape(rank_dir: Path) -> None:
    r = traceviz("report", str(rank_dir), "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    ranks = doc["ranks"]
    assert set(ranks) >= RANKS_KEYS
    assert (ranks["count"], ranks["world_size"]) == (2, 2)
    assert ranks["clock"]["aligned_by"] == "same_host"
    assert ranks["clock"]["offsets_us"] == {"0": 0.0, "1": 0.0}
    st = ranks["straggler"]
    assert (st["rank"], st["share_of_steps"], st["mean_lateness_us"], st["cause"]) == (
        1, 1.0, 25.0, "host")
    assert st["sentence"].startswith("rank 1 arrives 25.0 µs late at 1 of 1 allreduce")
    assert [set(p) >= PER_RANK_KEYS for p in ranks["per_rank"]] == [True, True]
    assert [p["comm_wait_us_median"] for p in ranks["per_rank"]] == [25.0, 0.0]
    assert ranks["collectives"] == [{"group": "0", "name": "allreduce", "bytes": 4096,
                                     "count": 3, "wait_us_p50": 0.0, "transfer_us_p50": 15.0}]
    assert [a["rank"] for a in doc["per_rank_analysis"]] == [0, 1]
    assert len(doc["per_rank_analysis"][0]["steps"]) == 3


def test_several_trace_files_give_the_same_report_as_their_dir(rank_dir: Path) -> None:
    files = sorted(str(p) for p in rank_dir.iterdir())
    a = json.loads(traceviz("report", *files, "--format", "json").stdout)
    b = json.loads(traceviz("report", str(rank_dir), "--format", "json").stdout)
    assert a["ranks"]["per_rank"] == b["ranks"]["per_rank"]


def test_text_md_and_html_carry_the_straggler_sentence(rank_dir: Path, tmp_path: Path) -> None:
    for fmt in ("text", "md"):
        r = traceviz("report", str(rank_dir), "--format", fmt)
        assert r.returncode == 0, r.stderr
        assert "rank 1 arrives 25.0 µs late" in r.stdout
    out = tmp_path / "r.html"
    r = traceviz("report", str(rank_dir), "-o", str(out), "--plotlyjs", "cdn")
    assert r.returncode == 0, r.stderr
    page = out.read_text(encoding="utf-8")
    for needle in ("rank 1 arrives 25.0 µs late", 'id="ranks-heatmap"', 'id="ranks-bars"',
                   'id="ranks-arrivals"', 'id="ranks-per-rank"'):
        assert needle in page


def test_a_single_trace_still_gives_the_single_trace_report(rank_dir: Path) -> None:
    r = traceviz("report", str(rank_dir / "t.rank0.json"), "--format", "json")
    doc = json.loads(r.stdout)
    assert "ranks" not in doc and len(doc["steps"]) == 3


def test_a_dir_among_several_targets_is_a_usage_error(rank_dir: Path) -> None:
    r = traceviz("report", str(rank_dir), str(rank_dir / "t.rank0.json"), "--format", "json")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_trace_without_any_rank_is_a_usage_error(rank_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "noinfo.json"
    other.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}))
    r = traceviz("report", str(rank_dir / "t.rank0.json"), str(other), "--format", "json")
    assert r.returncode == 2 and "cannot tell its rank" in r.stderr


@pytest.mark.parametrize(("fmt", "extra"), [("json", []), ("text", []),
                                           ("json", ["--workers", "2"])])
def test_rank_report_never_imports_torch_plotly_or_dask(rank_dir: Path, fmt: str,
                                                       extra: list[str]) -> None:
    code = (
        "import sys\nfrom traceviz.cli.app import app\n"
        "if __name__ == '__main__':\n"
        f" try:\n    app(['report', {str(rank_dir)!r}, '--format', {fmt!r}, *{extra!r}])\n"
        " except SystemExit:\n    pass\n"
        " heavy = [m for m in ('torch', 'triton', 'hta', 'plotly', 'dask', 'distributed')"
        " if m in sys.modules]\n"
        " sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stderr.split("HEAVY=")[1].strip() == ""


def test_arrival_spread_plots_each_ranks_lateness_per_kth_collective(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    from tests.test_ranks_handbuilt import analyze_paths
    from traceviz.report.ranks.figures import arrival_spread, rank_stacked_bars

    r = analyze_paths([rank_trace(tmp_path, 0, 2, arrive=30_000, extra={2: 80_000}),
                       rank_trace(tmp_path, 1, 2, arrive=55_000, launch=50_000,
                                  extra={2: 80_000})])
    fig = arrival_spread(r)
    assert [t.name for t in fig.data] == ["rank 0", "rank 1"]
    assert list(fig.data[1].x) == ["allreduce #0", "allreduce #0", "allreduce #1",
                                   "allreduce #0"]
    assert list(fig.data[1].y) == [25.0, 25.0, 0.0, 25.0]
    bars = {t.name: list(t.x) for t in rank_stacked_bars(r).data}
    assert bars["comm wait"] == [25.0, 0.0] and bars["compute"] == [20.0, 20.0]


def _rank_with_step(path: Path, rank: int, step_ns: int) -> Path:
    """A rank whose GPU work starts every ``step_ns`` (so its median period is ``step_ns``)."""
    from tests.kineto import TraceBuilder

    b = TraceBuilder()
    b.distributed(rank, 2, hostname="node0")
    for n in (1, 2, 3, 4):
        s = n * step_ns
        b.step(n, s, step_ns)
        b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=10_000)
    return b.write(path / f"m.rank{rank}.json")


def test_a_nproc_run_dir_mode_is_compared_through_its_slowest_rank(tmp_path: Path) -> None:
    from traceviz.report.compare_report import load_run_dir

    run = tmp_path / "run"
    run.mkdir()
    fast = _rank_with_step(run, 0, 100_000)
    slow = _rank_with_step(run, 1, 120_000)
    entry = {"status": "ok", "profiled": {"trace": fast.name, "traces": [fast.name, slow.name]}}
    (run / "manifest.json").write_text(json.dumps({"schema": 3, "modes": {"eager": entry}}))
    (mode,) = load_run_dir(run).modes
    assert Path(mode.trace_path).name == slow.name
    assert mode.analysis is not None and mode.analysis.per_step.period_ns == 120_000


def test_slowest_rank_is_the_largest_median_period_first_on_a_tie(tmp_path: Path) -> None:
    import traceviz
    from traceviz.analyze.distributed.slowest import slowest_rank_index

    analyses = []
    for i, step_ns in enumerate((100_000, 120_000, 120_000)):
        (tmp_path / str(i)).mkdir()
        trace = traceviz.load(_rank_with_step(tmp_path / str(i), i % 2, step_ns))
        analyses.append(traceviz.analyze(trace))
    assert slowest_rank_index(analyses) == 1
    assert slowest_rank_index(analyses[:1]) == 0

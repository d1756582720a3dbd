"""Many rank traces: one task per rank in-process, in a local worker pool and on Dask.

The three paths must give byte-identical reports in every format; a corrupt or missing rank is
listed with its reason while the others are analysed (exit 1 unless --allow-missing-ranks); a
worker killed mid-task costs its rank only, after one retry, and never hangs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_ranks_handbuilt import rank_trace
from traceviz.analyze.distributed.model import FailedRank
from traceviz.scale import analyze_rank_paths
from traceviz.scale.task import RankResult

ROOT = Path(__file__).resolve().parent.parent


def traceviz(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=env)


def make_ranks(d: Path, n: int) -> list[Path]:
    """``n`` ranks on one host; rank r arrives r µs after rank 0 (the last one is late)."""
    d.mkdir(exist_ok=True)
    return [rank_trace(d, r, n, arrive=30_000 + 1_000 * r, launch=26_000 + 1_000 * r)
            for r in range(n)]


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("four")
    make_ranks(d, 4)
    return d


def test_the_pool_gives_the_same_bytes_as_in_process_in_every_format(four: Path) -> None:
    paths = sorted(four.glob("*.json"))
    serial = analyze_rank_paths(paths, workers=1)
    pooled = analyze_rank_paths(paths, workers=2)
    assert serial.documents == pooled.documents and serial.failed == pooled.failed == ()
    import traceviz

    a, b = traceviz.Ranks(serial), traceviz.Ranks(pooled)
    for fmt in ("json", "text", "md"):
        assert a.render(fmt) == b.render(fmt)
    assert a.straggler is not None and a.straggler.rank == 3


@pytest.mark.timeout(240)
def test_dask_local_with_two_workers_gives_the_default_paths_bytes(four: Path) -> None:
    pytest.importorskip("distributed")
    default = traceviz("report", str(four), "--format", "json")
    assert default.returncode == 0, default.stderr
    for fmt in ("json", "text"):
        d = traceviz("report", str(four), "--format", fmt, "--dask", "local", "--workers", "2")
        assert d.returncode == 0, d.stderr
        want = default.stdout if fmt == "json" else traceviz(
            "report", str(four), "--format", fmt).stdout
        assert d.stdout == want
        assert "dashboard: http" in d.stderr and "local cluster, 2 workers" in d.stderr
    doc = json.loads(default.stdout)
    assert doc["ranks"]["count"] == 4 and "failed_ranks" not in doc


@pytest.fixture(scope="module")
def sixteen_one_corrupt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("sixteen")
    paths = make_ranks(d, 16)
    bad = paths[9]
    bad.write_bytes(bad.read_bytes()[: len(bad.read_bytes()) // 2])  # truncated mid-trace
    return d, bad


@pytest.mark.parametrize("workers", ["1", "3"])
def test_a_corrupt_rank_among_16_is_named_and_the_other_15_are_analysed(
        sixteen_one_corrupt: tuple[Path, Path], workers: str) -> None:
    d, bad = sixteen_one_corrupt
    r = traceviz("report", str(d), "--format", "json", "--workers", workers)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ranks"]["count"] == 15
    assert [t["rank"] for t in doc["ranks"]["traces"]] == [x for x in range(16) if x != 9]
    assert doc["failed_ranks"] == [{"path": str(bad), "reason":
                                    "truncated JSON (the file ends mid-trace)"}]
    assert len(doc["per_rank_analysis"]) == 15
    assert any(w["code"] == "missing_ranks" and "9" in w["message"]
               for w in doc["ranks"]["health"])
    lines = r.stderr.strip().splitlines()
    assert lines[0] == f"traceviz: rank trace failed: {bad}: truncated JSON (the file ends " \
        "mid-trace)"
    assert lines[-1].startswith("traceviz: error: 1 of 16 rank traces could not be analysed")
    assert "Traceback" not in r.stderr


def test_allow_missing_ranks_exits_0_and_every_format_still_lists_the_failure(
        sixteen_one_corrupt: tuple[Path, Path]) -> None:
    d, bad = sixteen_one_corrupt
    for fmt in ("text", "md"):
        r = traceviz("report", str(d), "--format", fmt, "--allow-missing-ranks")
        assert r.returncode == 0, r.stderr
        assert "Failed ranks" in r.stdout and str(bad) in r.stdout
        assert "1 of 16 rank traces could not be analysed" in r.stdout
    r = traceviz("report", str(d), "-o", str(d.parent / "x.html"), "--plotlyjs", "cdn",
                 "--allow-missing-ranks")
    page = (d.parent / "x.html").read_text(encoding="utf-8")
    assert r.returncode == 0 and 'id="ranks-failed-list"' in page and bad.name in page


def test_a_missing_rank_file_is_a_failed_rank_with_its_reason(four: Path,
                                                              tmp_path: Path) -> None:
    paths = sorted(four.glob("*.json"))
    gone = tmp_path / "t.rank4.json"
    r = analyze_rank_paths([*paths, gone])
    assert r.failed == (FailedRank(str(gone), "no such file"),)
    assert [i.rank for i in r.analysis.ranks] == [0, 1, 2, 3]


def test_no_rank_analysed_is_one_error_line_and_exit_1(tmp_path: Path) -> None:
    a, b = tmp_path / "a.rank0.json", tmp_path / "b.rank1.json"
    a.write_text("{")
    r = traceviz("report", str(a), str(b), "--format", "json")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1].startswith(
        "traceviz: error: none of the 2 rank traces could be analysed")


@pytest.mark.timeout(120)
def test_a_worker_killed_mid_task_fails_its_rank_after_one_retry(four: Path,
                                                                 tmp_path: Path) -> None:
    from tests.rank_tasks import die_on_victim
    from traceviz.scale.pool import run_pool

    victim = tmp_path / "victim.rank9.json"
    victim.write_text("{}")
    paths = [str(p) for p in sorted(four.glob("*.json"))]
    got = run_pool(die_on_victim, [paths[0], str(victim), *paths[1:]], 2)
    assert got[1] == FailedRank(str(victim), "its worker process died (killed by SIGKILL) on "
                                "each of 2 tries")
    assert [type(g) for g in got] == [RankResult, FailedRank, RankResult, RankResult,
                                      RankResult]
    assert [g.digest.info.rank for g in got if isinstance(g, RankResult)] == [0, 1, 2, 3]


@pytest.mark.timeout(120)
def test_a_worker_killed_once_is_retried_and_its_rank_analysed(four: Path,
                                                               tmp_path: Path) -> None:
    from tests.rank_tasks import die_on_victim
    from traceviz.scale.pool import run_pool

    victim = four / "victim.rank0.json"
    victim.write_bytes((four / "t.rank0.json").read_bytes())
    (four / "victim.rank0.json.die-once").write_text("")
    try:
        got = run_pool(die_on_victim, [str(victim)], 1)
    finally:
        victim.unlink()
    assert isinstance(got[0], RankResult) and got[0].digest.info.rank == 0


@pytest.mark.timeout(240)
def test_a_dask_worker_killed_mid_task_fails_its_rank_not_the_run(four: Path,
                                                                  tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from tests.rank_tasks import die_on_victim
    from traceviz.scale.dask_cluster import run_dask

    victim = tmp_path / "victim.rank9.json"
    victim.write_text("{}")
    paths = [str(p) for p in sorted(four.glob("*.json"))]
    lines: list[str] = []
    got = run_dask(die_on_victim, [str(victim), *paths], "local", 2, announce=lines.append)
    assert isinstance(got[0], FailedRank) and "KilledWorker" in got[0].reason
    assert [g.digest.info.rank for g in got[1:]] == [0, 1, 2, 3]
    assert len(lines) == 1 and "dashboard: http" in lines[0]


def test_dask_missing_prints_the_install_line_and_exits_1(four: Path, tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('dask', 'distributed'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, _Hide())\n")
    import os

    env = {**os.environ, "PYTHONPATH": str(hide)}
    r = traceviz("report", str(four), "--format", "json", "--dask", "local", env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "traceviz: error: --dask needs dask.distributed, which is not installed: "
        "pip install 'traceviz[dask]'"]


def test_dask_or_allow_missing_on_a_single_trace_is_a_usage_error(four: Path) -> None:
    r = traceviz("report", str(four / "t.rank0.json"), "--format", "json",
                 "--allow-missing-ranks")
    assert r.returncode == 2 and "rank traces only" in r.stderr


def test_file_urls_are_read_through_fsspec_and_reported_by_url(four: Path) -> None:
    pytest.importorskip("fsspec")
    urls = [p.resolve().as_uri() for p in sorted(four.glob("*.json"))]
    r = traceviz("report", *urls, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [t["path"] for t in doc["ranks"]["traces"]] == urls
    local = json.loads(traceviz("report", str(four), "--format", "json").stdout)
    assert doc["ranks"]["per_rank"] == local["ranks"]["per_rank"]
    assert doc["ranks"]["straggler"] == local["ranks"]["straggler"]


def _interrupt_while_running(tmp_path: Path, runner: str, sig: int | None = None
                             ) -> tuple[int, list[int]]:
    """Start ``runner`` (pool or dask) on ``sleep_forever`` tasks in a child interpreter, wait
    until every task runs, send SIGINT; return the child's exit code and the task pids."""
    import signal
    import time

    paths = [str(tmp_path / f"t.rank{r}.json") for r in range(2)]
    call = ("run_pool(sleep_forever, P, 2)" if runner == "pool"
            else "run_dask(sleep_forever, P, 'local', 2)")
    # The child takes Ctrl-C as a terminal's foreground process does: with Python's handler.
    # A shell without job control starts its background commands with SIGINT ignored, and a
    # test run started that way (`bash -c '… &'`) would pass that on to the child, which then
    # could not be interrupted at all.
    code = (
        "import signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from tests.rank_tasks import sleep_forever\n"
        "from traceviz.scale.pool import run_pool\n"
        "from traceviz.scale.dask_cluster import run_dask\n"
        f"P = {paths!r}\n"
        "if __name__ == '__main__':\n"
        "    try:\n"
        f"        {call}\n"
        "    except KeyboardInterrupt:\n"
        "        sys.exit(130)\n")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid_files = [Path(p).with_suffix(".pid") for p in paths]
    deadline = time.monotonic() + 90
    while not all(f.exists() and f.read_text() for f in pid_files):
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.2)
    child.send_signal(signal.SIGINT if sig is None else sig)
    code_ = child.wait(timeout=60)
    return code_, [int(f.read_text()) for f in pid_files]


def _gone(pid: int) -> bool:
    import os
    import time

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.timeout(180)
@pytest.mark.parametrize("runner", ["pool", "dask"])
def test_ctrl_c_stops_every_worker_and_returns(tmp_path: Path, runner: str) -> None:
    if runner == "dask":
        pytest.importorskip("distributed")
    code, pids = _interrupt_while_running(tmp_path, runner)
    assert code == 130
    assert all(_gone(p) for p in pids)


@pytest.mark.timeout(240)
def test_dask_on_a_running_scheduler_by_address_gives_the_default_paths_bytes(
        four: Path) -> None:
    pytest.importorskip("distributed")
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        r = traceviz("report", str(four), "--format", "json", "--dask", address)
    assert r.returncode == 0, r.stderr
    assert f"dask: scheduler {address}, 2 workers; dashboard: http" in r.stderr
    assert r.stdout == traceviz("report", str(four), "--format", "json").stdout


def test_an_unreachable_scheduler_is_one_error_line(four: Path) -> None:
    pytest.importorskip("distributed")
    r = traceviz("report", str(four), "--format", "json", "--dask", "tcp://127.0.0.1:9")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        "traceviz: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")


def test_a_refused_or_unresolvable_scheduler_address_is_known_without_waiting() -> None:
    import socket

    from traceviz.scale.dask_cluster import unreachable

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert unreachable(f"tcp://127.0.0.1:{port}") is None  # accepts: the client decides
    why = unreachable(f"tcp://127.0.0.1:{port}")  # closed now: nothing listens
    assert why is not None and why.startswith(f"connection refused on 127.0.0.1 port {port}")
    bad = unreachable("tcp://no-such-host.invalid:8786")
    assert bad is not None and bad.startswith("cannot resolve no-such-host.invalid")
    for other in ("local", "tls://10.0.0.1:8786", "tcp://host", "tcp://host:notaport"):
        assert unreachable(other) is None


@pytest.mark.timeout(120)
def test_sigterm_stops_every_pool_worker_and_exits_143(tmp_path: Path) -> None:
    import signal

    code, pids = _interrupt_while_running(tmp_path, "pool", signal.SIGTERM)
    assert code == 143
    assert all(_gone(p) for p in pids)


def test_default_workers_are_the_cores_capped_by_memory_and_by_ranks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    import traceviz.scale as scale
    import traceviz.trace.limits as limits
    import traceviz.trace.parallel as parallel

    plain = tmp_path / "a.rank0.json"
    plain.write_bytes(b" " * 1000)
    packed = tmp_path / "b.rank1.json.gz"
    packed.write_bytes(gzip.compress(b" " * 5000))
    assert scale._json_bytes(str(plain)) == 1000
    assert scale._json_bytes(str(packed)) == 5000  # the gzip trailer's size
    assert scale._json_bytes("s3://bucket/x.json") == 0
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 8)
    # memory for exactly 2 ranks of 5000 bytes at 3x each: 30000 bytes
    monkeypatch.setattr(limits, "available_memory_bytes", lambda: 30_000)
    assert scale.default_workers([str(plain), str(packed)] * 3) == 2
    monkeypatch.setattr(limits, "available_memory_bytes", lambda: 29_999)
    assert scale.default_workers([str(plain), str(packed)] * 3) == 1
    monkeypatch.setattr(limits, "available_memory_bytes", lambda: 10**12)
    assert scale.default_workers([str(plain), str(packed)] * 3) == 6  # one per rank
    assert scale.default_workers([str(plain)] * 20) == 8  # the cores


def test_the_default_uses_the_pool_only_from_pool_min_bytes_on(
        four: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import traceviz.scale as scale
    import traceviz.scale.pool as pool

    calls: list[int] = []
    real = pool.run_pool

    def spy(task, paths, workers, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(workers)
        return real(task, paths, workers, *a, **k)

    monkeypatch.setattr(pool, "run_pool", spy)
    monkeypatch.setattr(scale, "default_workers", lambda _p: 2)
    paths = sorted(four.glob("*.json"))
    size = sum(p.stat().st_size for p in paths)
    monkeypatch.setattr(scale, "POOL_MIN_BYTES", size + 1)
    small = analyze_rank_paths(paths)
    assert calls == []
    monkeypatch.setattr(scale, "POOL_MIN_BYTES", size)  # "at least": equal uses the pool
    big = analyze_rank_paths(paths)
    assert calls == [2] and big.documents == small.documents


def test_the_rank_progress_bar_counts_finished_ranks_on_a_terminal_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from traceviz.cli.progress import rank_progress

    with rank_progress(8) as progress:
        assert progress is None  # stderr is not a terminal under pytest
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with rank_progress(1) as progress:
        assert progress is None  # one rank: nothing to count
    with rank_progress(8) as progress:
        assert progress is not None
        for done in range(1, 9):
            progress(done, 8)


def test_a_directory_of_no_traces_says_it_is_not_a_run_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"a": 1}')
    r = traceviz("report", str(tmp_path), "--format", "json")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1] == (
        f"traceviz: error: {tmp_path}: not a run directory (no manifest.json), read as a "
        "directory of rank traces: none of the 1 rank traces could be analysed; "
        f"{tmp_path / 'notes.json'}: JSON object without 'traceEvents': not a Chrome/Kineto "
        "trace")

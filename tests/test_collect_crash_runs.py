"""``traceviz profile`` stopped or broken half-way leaves a run dir that says so and still reports.

Real runs in subprocesses on the CPU with ``tests/workloads_for_tests/stoppable.py``: eager
finishes, then the compile mode hangs (to be interrupted with SIGINT / SIGTERM, or killed at the
timeout) or segfaults (a real one: a read of address 0) while torch.compile traces it, before
Inductor compiles anything, so each run takes seconds. The resume test then finishes an
interrupted run with a real compile.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from traceviz.atomic import PARTIAL_MARK

pytest.importorskip("torch")
psutil = pytest.importorskip("psutil")

STOPPABLE = Path(__file__).parent / "workloads_for_tests" / "stoppable.py"
#: Seconds to wait for a child to reach its compile phase on a busy 2-core machine.
PHASE_WAIT_S = 240


def profile_cmd(out: Path, *extra: str, workload: Path = STOPPABLE) -> list[str]:
    return [sys.executable, "-m", "traceviz", "profile", str(workload), "--modes",
            "eager,compile", "--out", str(out), "--device", "cpu", "--repeats", "2",
            "--min-repeat-ms", "1", *extra]


def env_with(kind: str) -> dict[str, str]:
    return {**os.environ, "STOPPABLE_KIND": kind}


def run_to_end(out: Path, kind: str, *extra: str, code: int = 0) -> dict:
    proc = subprocess.run(profile_cmd(out, *extra), capture_output=True, text=True,
                          timeout=600, check=False, env=env_with(kind))
    assert proc.returncode == code, proc.stdout + proc.stderr
    return json.loads((out / "manifest.json").read_text())


def interrupt_during_compile(out: Path, signum: int, workload: Path = STOPPABLE) -> tuple[int, str]:
    """Start a run whose compile mode hangs, send ``signum`` once it compiles; exit code, out."""
    proc = subprocess.Popen(profile_cmd(out, "--timeout", "300", workload=workload),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env_with("hang"))
    log = out / "logs" / "compile.log"
    deadline = time.monotonic() + PHASE_WAIT_S
    while not (log.is_file() and "phase compiling" in log.read_text(errors="replace")):
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "the compile mode never started"
        time.sleep(0.2)
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=60)
    return proc.returncode, output


def processes_writing_to(run_dir: Path) -> list[int]:
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        if any(str(run_dir) in part for part in (p.info["cmdline"] or [])):
            found.append(p.info["pid"])
    return found


def assert_clean_run_dir(run_dir: Path, finished: set[str]) -> None:
    """Only finished modes have traces, each one complete; no temporary file anywhere."""
    traces = {p.name.removesuffix(".pt.trace.json.gz").removesuffix(".stack")
              for p in run_dir.glob("*.pt.trace.json.gz")}
    assert traces == finished
    for mode in finished:
        assert json.loads(subprocess.run(
            [sys.executable, "-c", "import gzip,json,sys;"
             "print(len(json.load(gzip.open(sys.argv[1]))['traceEvents']))",
             str(run_dir / f"{mode}.pt.trace.json.gz")],
            capture_output=True, text=True, check=True).stdout) > 0
    assert [p for p in run_dir.rglob("*") if PARTIAL_MARK in p.name] == []


def report_json(run_dir: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "traceviz", "report", str(run_dir),
                           "--format", "json"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def rows_by_mode(report: dict) -> dict[str, dict]:
    return {row["mode"]: row for row in report["rows"]}


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int, str]]:
    """One run stopped by SIGINT and one by SIGTERM while compile hangs."""
    runs = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        out = tmp_path_factory.mktemp("stopped") / "run"
        code, output = interrupt_during_compile(out, signum)
        runs[signal.Signals(signum).name] = (out, code, output)
    return runs


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_records_the_finished_mode_and_the_interrupted_one(stopped, name):
    run_dir, code, output = stopped[name]
    assert code == 128 + signal.Signals[name].value, output
    assert f"interrupted by {name}" in output and "--resume" in output
    modes = json.loads((run_dir / "manifest.json").read_text())["modes"]
    assert list(modes) == ["eager", "compile"]
    assert modes["eager"]["status"] == "ok"
    assert modes["eager"]["profiled"]["steps"] == 5
    assert modes["compile"]["status"] == "interrupted"
    assert modes["compile"]["reason"].startswith(f"interrupted by {name} during 'compiling'")
    assert_clean_run_dir(run_dir, finished={"eager"})
    assert processes_writing_to(run_dir) == []  # the hung child was killed with the parent


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_report_reads_an_interrupted_run(stopped, name):
    rows = rows_by_mode(report_json(stopped[name][0]))
    assert rows["eager"]["status"] == "ok" and rows["eager"]["profiled_step_ms"] > 0
    assert rows["compile"]["status"] == "interrupted"
    assert rows["compile"]["trace"] is None


def test_a_mode_hanging_past_the_timeout_leaves_no_trace_and_the_run_reports(tmp_path):
    run_dir = tmp_path / "run"
    modes = run_to_end(run_dir, "hang", "--timeout", "20")["modes"]
    assert modes["eager"]["status"] == "ok" and modes["eager"]["timing"]["median_ms"] > 0
    assert modes["compile"]["status"] == "timeout"
    assert "no result after 20 s; killed during 'compiling'" in modes["compile"]["reason"]
    assert modes["compile"]["wall_s"] < 60
    assert_clean_run_dir(run_dir, finished={"eager"})
    assert rows_by_mode(report_json(run_dir))["compile"]["status"] == "timeout"


def test_a_child_killed_by_a_segfault_is_crashed_and_the_run_reports(tmp_path):
    run_dir = tmp_path / "run"
    modes = run_to_end(run_dir, "null-read", "--timeout", "300", "--strict", code=1)["modes"]
    assert modes["eager"]["status"] == "ok"
    assert modes["compile"]["status"] == "crashed"
    assert modes["compile"]["reason"].startswith("killed by SIGSEGV during 'compiling'")
    assert_clean_run_dir(run_dir, finished={"eager"})
    assert rows_by_mode(report_json(run_dir))["compile"]["status"] == "crashed"


def test_resume_runs_only_the_interrupted_mode_and_keeps_the_finished_one(stopped, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(stopped["SIGTERM"][0], run_dir)
    eager_trace = run_dir / "eager.pt.trace.json.gz"
    before = json.loads((run_dir / "manifest.json").read_text())
    eager_bytes = eager_trace.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "traceviz", "profile", "--resume", str(run_dir)],
                          capture_output=True, text=True, timeout=600, check=False,
                          env=env_with("ok"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = json.loads((run_dir / "manifest.json").read_text())
    assert after["modes"]["eager"]["timing"] == before["modes"]["eager"]["timing"]
    assert eager_trace.read_bytes() == eager_bytes
    assert after["modes"]["compile"]["status"] == "ok", after["modes"]["compile"]["reason"]
    assert after["modes"]["compile"]["profiled"]["steps"] == 5
    assert after["settings"] == before["settings"]
    assert [r["modes"] for r in after["resumed"]] == [["compile"]]
    assert after["report"] == "report.html" and (run_dir / "report.html").is_file()
    assert_clean_run_dir(run_dir, finished={"eager", "compile"})


def test_resume_refuses_a_changed_workload_and_settings_options(stopped, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(stopped["SIGINT"][0], run_dir)
    workload = tmp_path / "stoppable.py"
    shutil.copy(STOPPABLE, workload)
    record = json.loads((run_dir / "manifest.json").read_text())
    record["workload"]["path"] = str(workload)
    (run_dir / "manifest.json").write_text(json.dumps(record))
    workload.write_text(STOPPABLE.read_text() + "\n# edited\n")

    def resume(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "traceviz", "profile", "--resume",
                               str(run_dir), *extra], capture_output=True, text=True,
                              timeout=300, check=False)

    changed = resume()
    assert changed.returncode == 2
    assert changed.stderr.count("\n") == 1 and "changed since the run started" in changed.stderr
    clash = resume("--repeats", "9")
    assert clash.returncode == 2 and "drop --repeats" in clash.stderr
    assert json.loads((run_dir / "manifest.json").read_text()) == record  # nothing touched

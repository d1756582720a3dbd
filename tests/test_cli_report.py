"""`traceviz report` end to end, in a real subprocess: output, errors, and no torch import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kineto import TraceBuilder

STEP_KEYS = {
    "name", "cpu_us", "kernels", "memcpys", "memsets", "launches", "graph_launches",
    "gpu_busy_us", "period_us", "host_wait_us", "sync_wait_us", "graph_internal_us",
    "other_idle_us", "cpu_bound_share",
}


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000)
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000)
    return b.write(tmp_path / "t.json.gz", gzipped=True)


def test_json_report_has_the_documented_keys_and_numbers(trace_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = traceviz("report", str(trace_file), "--format", "json", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    for key in ("trace", "steps", "graph_replays", "kernel_families", "top_kernels", "compile",
                "health", "totals"):
        assert key in doc
    (step,) = doc["steps"]
    assert set(step) >= STEP_KEYS
    assert (step["kernels"], step["period_us"], step["gpu_busy_us"], step["host_wait_us"]) == (
        2, 35.0, 10.0, 25.0)
    assert doc["trace"]["devices"][0]["name"] == "Test GPU"


def test_an_existing_output_is_refused_before_the_trace_is_read(tmp_path: Path) -> None:
    """The refusal comes first: a broken trace would otherwise be the error (and a big one
    would be loaded and analysed only to be refused)."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"traceEvents": [')
    for args, out in ((["-f", "json", "-o", str(tmp_path / "r.json")], tmp_path / "r.json"),
                      ([], Path("broken.report.html"))):
        target = out if out.is_absolute() else tmp_path / out
        target.write_text("keep")
        r = subprocess.run([sys.executable, "-m", "traceviz", "report", str(broken), *args],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert r.returncode == 1 and "exists; use --force" in r.stderr, r.stderr
        assert target.read_text() == "keep"
    r = traceviz("report", str(broken), "-f", "json", "-o", str(tmp_path / "r.json"), "--force")
    assert r.returncode != 0 and "exists" not in r.stderr  # then the trace's own error


def test_existing_output_is_not_overwritten_without_force(trace_file: Path,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("keep me")
    r = traceviz("report", str(trace_file), "-f", "json", "-o", str(out))
    assert r.returncode == 1 and "--force" in r.stderr and out.read_text() == "keep me"
    assert traceviz("report", str(trace_file), "-f", "json", "-o", str(out), "--force"
                    ).returncode == 0
    assert json.loads(out.read_text())["steps"]


def test_text_report_prints_a_step_table(trace_file: Path) -> None:
    r = traceviz("report", str(trace_file), "--format", "text")
    assert r.returncode == 0, r.stderr
    assert "ProfilerStep#1" in r.stdout and "CPU-bound share" in r.stdout


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "no such file"), (b"not json", "not JSON"), (b'{"traceEvents": [{"ph"', "truncated"),
     (b'{"x": 1}', "not a Chrome/Kineto trace"), (b"\x1f\x8b\x08\x00junk", "gzip")],
)
def test_bad_input_is_one_line_and_exit_code_1(tmp_path: Path, content: bytes | None,
                                               needle: str) -> None:
    p = tmp_path / "bad.json"
    if content is not None:
        p.write_bytes(content)
    r = traceviz("report", str(p), "--format", "json")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr


def test_an_analysis_worker_that_dies_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    """A worker killed mid-task (as by the out-of-memory killer) is a clean error."""
    b = TraceBuilder()
    b.step(1, 0, 100_000_000)
    for i in range(200):
        b.kernel(launch_ts=1_000 + i * 400_000, ts=10_000 + i * 400_000, dur=5_000)
    path = b.write(tmp_path / "t.json")
    code = (
        "import importlib, os, sys, time\n"
        "blocks = importlib.import_module('traceviz.analyze.host_wait.blocks')\n"
        "blocks.MIN_BLOCK_EVENTS = 1\n"
        "hw = importlib.import_module('traceviz.analyze.host_wait')\n"
        "real = hw.HostWaitPlan.attribute\n"
        "parent = os.getpid()\n"
        "def attribute(self, i):\n"
        "    if os.getpid() != parent:\n"
        "        os._exit(9)  # a worker dies at its first block\n"
        "    time.sleep(0.1)  # this process, taking blocks too, leaves some to the worker\n"
        "    return real(self, i)\n"
        "hw.HostWaitPlan.attribute = attribute\n"
        "from traceviz.cli.app import main\n"
        f"sys.argv = ['traceviz', 'report', {str(path)!r}, '--format', 'json', '-j', '3']\n"
        "main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "worker process" in lines[0] and "died" in lines[0]


def test_report_path_never_imports_torch(trace_file: Path) -> None:
    code = (
        "import sys\nfrom traceviz.cli.app import app\n"
        f"try:\n    app(['report', {str(trace_file)!r}, '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'triton', 'hta', 'plotly') if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY=" in r.stderr
    assert r.stderr.split("HEAVY=")[1].strip() == ""


def test_one_trace_report_imports_neither_the_runner_nor_the_comparison(
        trace_file: Path) -> None:
    code = (
        "import sys\nfrom traceviz.cli.app import app\n"
        f"try:\n    app(['report', {str(trace_file)!r}, '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print(*sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    loaded = set(r.stdout.split())
    assert "traceviz.analyze.analysis" in loaded
    assert not loaded & {"traceviz.collect.runner", "traceviz.cli.profile_run",
                         "traceviz.analyze.compare.modes", "traceviz.report.compare_report"}


@pytest.mark.hta
def test_hta_flag_adds_an_hta_section_to_json_and_html(trace_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("hta")
    r = traceviz("report", str(trace_file), "--format", "json", "--hta")
    assert r.returncode == 0, r.stderr
    hta = json.loads(r.stdout)["hta"]
    assert hta["gpu_ops"]["kernel"] == 2 and "load" not in (hta.get("errors") or {})
    out = tmp_path / "r.html"
    r = traceviz("report", str(trace_file), "--hta", "-o", str(out), "--plotlyjs", "cdn")
    assert r.returncode == 0, r.stderr
    assert '<section id="hta"' in out.read_text()

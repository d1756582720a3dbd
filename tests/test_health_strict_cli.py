"""``--strict`` on report / compare / check, and strictly valid JSON (no NaN / Infinity) even
from hostile traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.kineto import TraceBuilder
from traceviz.report.jsonout import dumps, finite


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=120)


def strict_loads(text: str) -> Any:
    """``json.loads`` that rejects the NaN / Infinity / -Infinity tokens."""
    def reject(token: str) -> Any:
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=reject)


def steps_trace() -> TraceBuilder:
    b = TraceBuilder()
    for i in range(3):
        t0 = i * 100_000
        b.step(i + 1, t0, 100_000)
        b.kernel(launch_ts=t0 + 1_000, ts=t0 + 10_000, dur=5_000)
    return b


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return steps_trace().write(tmp_path / "clean.json")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """Negative, NaN and infinite ts/dur everywhere: kernels, launches, steps, CPU ops."""
    b = steps_trace()
    b.cpu_op("op", 20_000, 1_000)
    text = json.dumps(b.document())
    events = json.loads(text)["traceEvents"]
    bad = ["NaN", "Infinity", "-Infinity", -3.5, 1e308]
    for i, e in enumerate(e for e in events if e.get("ph") == "X"):
        e["dur" if i % 2 else "ts"] = f"@@{bad[i % len(bad)]}@@"
    doc = json.loads(text)
    doc["traceEvents"] = events
    out = json.dumps(doc)
    for token in bad:  # write the bare tokens, as a broken exporter would
        out = out.replace(f'"@@{token}@@"', str(token))
    path = tmp_path / "hostile.json"
    path.write_text(out)
    return path


def test_finite_replaces_nan_and_infinity_at_any_depth() -> None:
    doc = {"a": float("nan"), "b": [1.0, float("inf"), {"c": (float("-inf"), 2)}], "d": "NaN"}
    assert finite(doc) == {"a": None, "b": [1.0, None, {"c": [None, 2]}], "d": "NaN"}
    assert strict_loads(dumps(doc))["b"][1] is None


def test_report_json_of_a_hostile_trace_is_strict_json_with_named_warnings(
    hostile: Path,
) -> None:
    r = traceviz("report", str(hostile), "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = strict_loads(r.stdout)
    codes = {h["code"] for h in doc["health"]}
    assert {"invalid_timestamp", "invalid_duration", "negative_duration"} <= codes
    for h in doc["health"]:
        assert set(h) == {"code", "message", "count", "strict", "first_event"}
    assert doc["totals"]["excluded_events"] > 0


def test_strict_report_exits_1_with_one_line_and_still_writes_the_report(
    hostile: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    r = traceviz("report", str(hostile), "--format", "json", "-o", str(out), "--strict")
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("traceviz: error:")]
    assert len(lines) == 1 and "--strict" in lines[0] and "invalid_duration" in lines[0]
    assert "Traceback" not in r.stderr
    assert strict_loads(out.read_text())["health"]


def test_strict_text_report_to_the_terminal_also_exits_1(hostile: Path) -> None:
    r = traceviz("report", str(hostile), "--format", "text", "--strict")
    assert r.returncode == 1
    assert "Trace health" in r.stdout


def test_strict_passes_a_clean_trace_and_one_with_only_informational_warnings(
    clean: Path, tmp_path: Path
) -> None:
    assert traceviz("report", str(clean), "--format", "json", "--strict").returncode == 0
    cpu_only = TraceBuilder()
    cpu_only.step(1, 0, 10_000)
    cpu_only.cpu_op("aten::add", 1_000, 1_000)
    path = cpu_only.write(tmp_path / "cpu.json")
    r = traceviz("report", str(path), "--format", "json", "--strict")
    assert r.returncode == 0, r.stderr
    assert [h["code"] for h in strict_loads(r.stdout)["health"]] == ["cpu_only"]


def test_strict_compare_and_check_exit_1_on_a_hostile_input(clean: Path, hostile: Path) -> None:
    r = traceviz("compare", str(clean), str(hostile), "--format", "json", "--strict")
    assert r.returncode == 1
    strict_loads(r.stdout)
    assert "hostile" in r.stderr.splitlines()[-1]
    assert traceviz("compare", str(clean), str(hostile), "--format", "json").returncode == 0
    c = traceviz("check", str(clean), str(hostile), "-e", "hostile:launch!=WIN", "--strict")
    assert c.returncode == 1, c.stdout + c.stderr


def test_compare_json_of_hostile_traces_is_strict_json(clean: Path, hostile: Path) -> None:
    r = traceviz("compare", str(clean), str(hostile), "--format", "json")
    assert r.returncode == 0, r.stderr
    strict_loads(r.stdout)


def test_strict_report_of_a_run_dir_names_the_mode_with_invalid_data(tmp_path: Path) -> None:
    import gzip

    from tests.synthetic_runs import standard_run

    run = standard_run(tmp_path / "run")
    assert traceviz("report", str(run), "--format", "json", "--strict").returncode == 0
    trace = run / "compile.pt.trace.json.gz"
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")["dur"] = -1.0
    trace.write_bytes(gzip.compress(json.dumps(doc).encode()))
    r = traceviz("report", str(run), "--format", "json", "--strict")
    assert r.returncode == 1
    assert "compile: negative_duration (1)" in r.stderr.splitlines()[-1]
    strict_loads(r.stdout)

"""Text on a stream that cannot encode it (issue 37, item 12): ``PYTHONIOENCODING=ascii`` makes
"µs", "→" and the table lines unencodable; the report degrades to ``?`` and ASCII table lines
and exits 0, never a ``UnicodeEncodeError`` traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kineto import TraceBuilder


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=5_000, name="k_\u00e9t\u00e9")
    b.kernel(launch_ts=30_000, ts=40_000, dur=5_000)
    return b.write(tmp_path / "t.json")


def ascii_traceviz(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_a_report_on_an_ascii_stdout_degrades_instead_of_failing(trace: Path, fmt: str) -> None:
    r = ascii_traceviz("report", str(trace), "-f", fmt)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stderr == b""
    out = r.stdout.decode("ascii")  # nothing but ASCII reached the stream
    assert "?t?" in out and "?s" in out  # "été" and "µs"


def test_a_file_report_stays_utf8_whatever_the_terminal(trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.txt"
    r = ascii_traceviz("report", str(trace), "-f", "text", "-o", str(out))
    assert r.returncode == 0, r.stderr.decode()
    assert "k_\u00e9t\u00e9" in out.read_text(encoding="utf-8")

"""`--thresholds-file` that cannot be a thresholds file (issue 37, items 9 and 12): a FIFO, a
directory, an unreadable or non-UTF-8 file is one line on stderr and exit 2 (usage), naming
the file; nothing waits on a FIFO."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from traceviz.analyze.verdicts import parse_thresholds
from traceviz.errors import UsageError


def report_with(thresholds: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``report`` of a missing trace: the thresholds file is refused before the trace is read.
    A timeout (a FIFO that blocks) fails the test instead of hanging it."""
    return subprocess.run([sys.executable, "-m", "traceviz", "report", str(tmp_path / "t.json"),
                           "-f", "json", "--thresholds-file", str(thresholds)],
                          capture_output=True, text=True, timeout=60)


def assert_one_usage_line(r: subprocess.CompletedProcess[str], path: Path, why: str) -> None:
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"traceviz: error: threshold config {path}: ") and why in line


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "thresholds.toml"
    os.mkfifo(fifo)
    assert_one_usage_line(report_with(fifo, tmp_path), fifo, "not a regular file (a FIFO)")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "thresholds.toml"
    folder.mkdir()
    assert_one_usage_line(report_with(folder, tmp_path), folder,
                          "not a regular file (a directory)")


def test_a_file_that_is_not_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    latin1 = tmp_path / "thresholds.toml"
    latin1.write_bytes("# seuil de gain minimal (\u00e9t\u00e9)\nmin_speedup = 1.1\n"
                       .encode("latin-1"))
    assert_one_usage_line(report_with(latin1, tmp_path), latin1,
                          "not UTF-8 text (byte 0xe9 at offset 25)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its permissions")
def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "thresholds.toml"
    secret.write_text("min_speedup = 1.1\n")
    secret.chmod(0)
    assert_one_usage_line(report_with(secret, tmp_path), secret, "Permission denied")


def test_a_character_device_is_refused_as_a_special_file() -> None:
    with pytest.raises(UsageError, match=r"/dev/zero: not a regular file \(a character device\)"):
        parse_thresholds(None, Path("/dev/zero"))


def test_a_regular_utf8_file_still_sets_the_thresholds(tmp_path: Path) -> None:
    good = tmp_path / "thresholds.toml"
    good.write_text("# gain minimal (\u00e9t\u00e9)\n[thresholds]\nmin_speedup = 0.25\n",
                    encoding="utf-8")
    assert parse_thresholds(None, good).min_speedup == 0.25

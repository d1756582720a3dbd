"""The console entry point exits without the interpreter's teardown, but as ``SystemExit``
would: same status, ``atexit`` handlers run, buffered output flushed."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _exit_with(code: str) -> subprocess.CompletedProcess[str]:
    script = (
        "import atexit\n"
        "from traceviz.cli.app import _exit_now\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "print('buffered', end=' ')\n"
        f"_exit_now({code})\n"
        "print('never')\n"
    )
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(("code", "status", "stderr"), [
    ("None", 0, ""), ("0", 0, ""), ("3", 3, ""), ("'bad input'", 1, "bad input\n"),
])
def test_fast_exit_keeps_status_handlers_and_buffered_output(
        code: str, status: int, stderr: str) -> None:
    r = _exit_with(code)
    assert r.returncode == status
    assert r.stdout == "buffered handler ran\n"
    assert r.stderr == stderr


def test_the_command_exits_with_its_status_through_main(tmp_path: object) -> None:
    r = subprocess.run([sys.executable, "-m", "traceviz", "report", "/no/such/trace.json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == ["traceviz: error: /no/such/trace.json: no such file"]

"""Bounded memory: a whitespace bomb finishes within its bound; one over ``--max-memory`` is
refused with one line naming the size and the limit.

The bomb is a valid Kineto trace whose ``traceEvents`` hold one long whitespace run between two
events, gzip'd at level 9 (about 1000:1). :func:`write_whitespace_bomb` streams it to disk a
MiB at a time, never holding it; the 2 GB measurement of docs/reliability.md uses it too::

    .venv/bin/python -m tests.test_memory_bound /tmp/bomb.json.gz 2GB
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

import pytest

from tests.kineto import TraceBuilder
from traceviz.errors import UsageError
from traceviz.trace.limits import format_size, parse_size

REPO = Path(__file__).resolve().parent.parent
MB = 10**6


def _events() -> tuple[list[bytes], dict]:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=2_000)
    b.kernel(launch_ts=3_000, ts=20_000, dur=2_000)
    return [json.dumps(e).encode() for e in b.events], {
        k: v for k, v in b.document().items() if k != "traceEvents"}


def write_whitespace_bomb(path: Path, inflated_bytes: int, runs: int = 1,
                          isize_lie: int | None = None) -> Path:
    """Write a gzip'd valid trace of about ``inflated_bytes`` whose bulk is ``runs`` whitespace
    runs between events; ``isize_lie`` overwrites the gzip trailer's ISIZE."""
    events, top = _events()
    head = json.dumps(top).encode()[:-1] + b', "traceEvents": [' + events[0] + b","
    tail = b",".join(events[1:]) + b"]}"
    ws_total = max(0, inflated_bytes - len(head) - len(tail))
    piece = b" " * 2**20
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as f:
        f.write(comp.compress(head))
        for r in range(runs):
            left = ws_total // runs + (ws_total % runs if r == runs - 1 else 0)
            while left:
                n = min(left, len(piece))
                f.write(comp.compress(piece[:n]))
                left -= n
            if r < runs - 1:
                f.write(comp.compress(events[0] + b","))
        f.write(comp.compress(tail))
        f.write(comp.flush())
    if isize_lie is not None:
        with path.open("r+b") as f:
            f.seek(-4, os.SEEK_END)
            f.write((isize_lie % 2**32).to_bytes(4, "little"))
    return path


#: Runs the CLI and, at exit, writes the process's peak RSS (``VmHWM``: of this process
#: image alone — ``ru_maxrss`` would include the forking test runner's across ``exec``).
_MEASURED_CLI = """
import atexit, sys
peak_file = sys.argv[1]
def _peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    with open(peak_file, "w") as out:
        out.write(str(kb * 1024))
atexit.register(_peak)
sys.argv = ["traceviz", *sys.argv[2:]]
from traceviz.cli.app import main
main()
"""


def _report_rss(trace: Path, *extra: str) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS bytes) of ``traceviz report TRACE --format json``
    in a fresh process."""
    import subprocess

    peak_file = Path(str(trace) + ".peak")
    r = subprocess.run([sys.executable, "-c", _MEASURED_CLI, str(peak_file), "report",
                        str(trace), "--format", "json", *extra],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    return r.returncode, r.stdout, r.stderr, int(peak_file.read_text())


def test_sizes_parse_with_decimal_and_binary_units() -> None:
    assert parse_size("4GB") == 4 * 10**9
    assert parse_size("500MiB") == 500 * 2**20
    assert parse_size("1.5G") == int(1.5 * 2**30)
    assert parse_size("20 mb") == 20 * 10**6
    assert parse_size("123") == 123
    for bad in ("", "12XB", "-1GB", "0", "GB"):
        with pytest.raises(UsageError):
            parse_size(bad)
    assert format_size(2_150_000_000) == "2.15 GB" and format_size(512) == "512 B"


def test_bomb_over_the_limit_is_refused_with_one_line_naming_size_and_limit(
        tmp_path: Path) -> None:
    bomb = write_whitespace_bomb(tmp_path / "bomb.json.gz", 50 * MB)
    assert bomb.stat().st_size < 100_000  # ~1000:1
    code, out, err, _ = _report_rss(bomb, "--max-memory", "20MB")
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("traceviz: error: ")
    assert "50.0 MB" in lines[0] and "20.0 MB" in lines[0] and "--max-memory" in lines[0]


def test_bomb_whose_gzip_trailer_lies_is_still_stopped_by_counting(tmp_path: Path) -> None:
    """ISIZE says 1 kB; the inflated size is counted while streaming and stops at the limit."""
    bomb = write_whitespace_bomb(tmp_path / "liar.json.gz", 50 * MB, isize_lie=1000)
    code, _, err, peak = _report_rss(bomb, "--max-memory", "20MB")
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert "inflates to more than 20.0 MB" in lines[0]
    assert peak < 20 * MB + 200 * MB  # stopped near the limit, never held all 50 MB twice


def test_bomb_under_a_generous_limit_finishes_with_one_copy_of_the_text(tmp_path: Path) -> None:
    inflated = 50 * MB
    bomb = write_whitespace_bomb(tmp_path / "bomb.json.gz", inflated, runs=3)
    code, out, err, peak = _report_rss(bomb, "--max-memory", "1GB")
    assert code == 0, err
    report = json.loads(out)
    assert report["totals"]["kernel_launches"] == 2
    # Issue 12's bound is 1.5 × inflated + 200 MB; the text is held once, so well under it.
    assert peak <= 1.5 * inflated + 200 * MB
    small = _report_rss(write_whitespace_bomb(tmp_path / "small.json.gz", 1 * MB))[3]
    assert peak - small <= 1.5 * (inflated - 1 * MB)  # one copy of the text, not two (~2 before)


def test_plain_json_over_the_limit_is_refused_by_its_size_on_disk(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.step(1, 0, 100_000)
    b.kernel(launch_ts=1_000, ts=10_000, dur=2_000)
    p = b.write(tmp_path / "t.json")
    size = p.stat().st_size
    code, _, err, _ = _report_rss(p, "--max-memory", str(size - 1))
    assert code == 1 and f"is {format_size(size)} of JSON" in err and len(err.splitlines()) == 1
    code, out, err, _ = _report_rss(p, "--max-memory", str(size))
    assert code == 0 and json.loads(out)["totals"]["kernel_launches"] == 1


@pytest.mark.parametrize("command", [["compare"], ["check", "--expect", "b:launch=WIN"]])
def test_compare_and_check_pass_max_memory_to_the_loader(tmp_path: Path,
                                                        command: list[str]) -> None:
    import subprocess

    traces = []
    for name in ("a", "b"):
        b = TraceBuilder()
        b.step(1, 0, 100_000)
        b.kernel(launch_ts=1_000, ts=10_000, dur=2_000)
        traces.append(str(b.write(tmp_path / f"{name}.json")))
    r = subprocess.run([sys.executable, "-m", "traceviz", *command[:1], *traces, *command[1:],
                        "--max-memory", "100"], capture_output=True, text=True, cwd=REPO)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1
    assert "the memory limit is 100 B (--max-memory)" in lines[0]


if __name__ == "__main__":
    write_whitespace_bomb(Path(sys.argv[1]), parse_size(sys.argv[2]),
                          runs=int(sys.argv[3]) if len(sys.argv) > 3 else 1)

"""A property over every writing command's output path: whatever ``-o`` names, with ``--force``
or without, the command's inputs stay byte for byte as they were, it never prints a traceback,
and it either writes a new regular file (exit 0) or refuses in one line with the documented
exit code (2: the output cannot be used).

Output paths are drawn from: an input, a file the command reads without naming it (a run's
manifest, kernel-diff's other trace), a symbolic or hard link to one, a directory, a FIFO, a
device node (a ``/dev/null`` made in the test's folder, as root), a place that cannot be
written (``/proc``), a file below a regular file, and a missing directory (the only one that
must succeed)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.synthetic_runs import standard_run
from traceviz.cli.app import app

KINDS = ("input", "read-by-command", "symlink-to-input", "hardlink-to-input", "directory",
         "fifo", "device", "unwritable", "below-a-file", "missing-directory")
COMMANDS = ("report-trace", "report-run", "compare", "kernel-diff", "export")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return standard_run(tmp_path_factory.mktemp("outputs") / "run")


def digests(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file() and p.name != "report.html"}


def command(name: str, run: Path) -> list[str]:
    trace, other = run / "eager.pt.trace.json.gz", run / "compile.pt.trace.json.gz"
    return {"report-trace": ["report", str(trace), "-f", "json"],
            "report-run": ["report", str(run), "-f", "md"],
            "compare": ["compare", str(run), "-f", "json"],
            "kernel-diff": ["kernel-diff", str(trace), str(other), "-f", "json"],
            "export": ["export", str(trace)]}[name]


def output(kind: str, name: str, run: Path, scratch: Path) -> Path | None:
    """The output path of ``kind`` for command ``name`` (``None``: not possible here, e.g. a
    device node without root)."""
    trace = run / "eager.pt.trace.json.gz"
    if kind == "input":
        return trace
    if kind == "read-by-command":  # read, though not named on the command line
        return (run / "manifest.json" if name in ("report-run", "compare")
                else run / "compile.pt.trace.json.gz" if name == "kernel-diff" else None)
    if kind == "symlink-to-input":
        (scratch / "link").symlink_to(trace)
        return scratch / "link"
    if kind == "hardlink-to-input":
        os.link(trace, scratch / "hard")
        return scratch / "hard"
    if kind == "directory":
        return scratch
    if kind == "fifo":
        os.mkfifo(scratch / "fifo")
        return scratch / "fifo"
    if kind == "device":
        if os.geteuid() != 0:
            return None
        os.mknod(scratch / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return scratch / "null"
    if kind == "unwritable":
        return Path("/proc/traceviz-property-output")
    if kind == "below-a-file":
        (scratch / "file").write_text("x")
        return scratch / "file" / "out"
    return scratch / "new" / "deeper" / "out"


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(COMMANDS), kind=st.sampled_from(KINDS), force=st.booleans())
def test_no_output_path_loses_an_input_or_prints_a_traceback(
        world: Path, tmp_path_factory: pytest.TempPathFactory, name: str, kind: str,
        force: bool) -> None:
    scratch = tmp_path_factory.mktemp("scratch")
    before = digests(world)
    out = output(kind, name, world, scratch)
    if out is None:
        return
    res = CliRunner().invoke(app, [*command(name, world), "-o", str(out),
                                   *(["--force"] if force else [])])
    assert digests(world) == before
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output
    if kind == "missing-directory":
        assert res.exit_code == 0, res.output
        assert out.is_file() and not out.is_symlink()
        return
    assert res.exit_code == 2, (kind, res.output)
    errors = [line for line in res.output.splitlines() if line.startswith("traceviz: error:")]
    assert len(errors) == 1, res.output
    if kind in ("fifo", "device"):
        assert stat.S_IFMT(os.lstat(out).st_mode) != stat.S_IFREG
    if kind == "symlink-to-input":
        assert out.is_symlink()

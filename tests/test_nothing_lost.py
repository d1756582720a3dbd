"""Nothing a user has is lost: the input guard covers every file a command reads, ``--force``
replaces only what traceviz made (regular files; earlier run directories), publishing is
no-clobber, and outputs that cannot be written are one line, never a traceback.

Each test reproduces an item of the adversarial pass (issue 37, items 1–4, 10 and 13) and
checks that the user's files are byte for byte as they were."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.kineto import TraceBuilder
from tests.synthetic_runs import standard_run
from traceviz.cli.app import app
from traceviz.collect.manifest import RunDirError
from traceviz.collect.run_files import prepare_run_dir
from traceviz.errors import OutputExistsError
from traceviz.publish import publish

STEP = 100_000
ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "workloads" / "elementwise.py"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line_error(res, code: int) -> None:
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("traceviz: error:"), res.output


def rank_dir(folder: Path) -> Path:
    """Two rank traces named outside ``*.pt.trace.json*``, as HTA's and Kineto's often are."""
    folder.mkdir()
    for rank in (0, 1):
        b = TraceBuilder()
        b.distributed(rank, 2, hostname="node0")
        for n in (1, 2, 3):
            s = n * STEP
            b.step(n, s, STEP)
            b.kernel(launch_ts=s + 1_000, ts=s + 5_000, dur=20_000, name="gemm")
            b.collective(s + 26_000, s + 30_000, 40_000, nelems=1024)
        b.write(folder / f"a100_eager_nccl_rank{rank}.json.gz", gzipped=True)
    return folder


# --- item 1: the guard protects exactly what a command reads -----------------------------------


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_a_rank_trace_in_a_rank_directory_is_never_overwritten(tmp_path: Path, fmt: str) -> None:
    ranks = rank_dir(tmp_path / "ranks")
    victim = ranks / "a100_eager_nccl_rank1.json.gz"
    before = digest(victim)
    res = invoke("report", ranks, "-f", fmt, "-o", victim, "--force", "--force-ranks")
    one_line_error(res, 2)
    assert "inputs are never overwritten" in res.output
    assert digest(victim) == before


def test_a_trace_the_manifest_names_outside_the_run_directory_is_protected(
        tmp_path: Path) -> None:
    run = standard_run(tmp_path / "deep" / "run")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = elsewhere / "compile-trace.json.gz"
    (run / "compile.pt.trace.json.gz").rename(moved)
    record = json.loads((run / "manifest.json").read_text())
    record["modes"]["compile"]["profiled"]["trace"] = "../../elsewhere/compile-trace.json.gz"
    (run / "manifest.json").write_text(json.dumps(record))
    before = digest(moved)
    res = invoke("report", run, "-f", "json", "-o", moved, "--force")
    one_line_error(res, 2)
    assert digest(moved) == before


def test_the_thresholds_file_is_an_input(tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("min_speedup = 0.05\n")
    before = digest(thresholds)
    for command in (["report", run], ["compare", run]):
        res = invoke(*command, "--thresholds-file", thresholds, "-f", "json", "-o", thresholds,
                     "--force")
        one_line_error(res, 2)
        assert digest(thresholds) == before


def test_a_report_written_into_a_rank_directory_is_not_read_as_a_rank(tmp_path: Path) -> None:
    ranks = rank_dir(tmp_path / "ranks")
    first = invoke("report", ranks, "-f", "json", "-o", ranks / "ranks.report.json")
    assert first.exit_code == 0, first.output
    again = invoke("report", ranks, "-f", "json", "-o", ranks / "ranks.report.json", "--force")
    assert again.exit_code == 0, again.output
    report = json.loads((ranks / "ranks.report.json").read_text())
    assert report["ranks"]["count"] == 2


# --- item 2: profile --force deletes only an earlier run's own files ---------------------------


def web_project(folder: Path) -> dict[str, str]:
    files = {"index.html": "<html></html>", "src/app.js": "console.log(1)",
             "manifest.json": '{"name": "my app", "start_url": "/"}'}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return files


def test_profile_force_never_deletes_a_folder_with_a_foreign_manifest(tmp_path: Path) -> None:
    site = tmp_path / "site"
    files = web_project(site)
    res = invoke("profile", WORKLOAD, "--out", site, "--force")
    one_line_error(res, 1)
    assert "not an earlier traceviz run directory" in res.output
    assert "nothing was deleted" in res.output
    assert {n: (site / n).read_text() for n in files} == files


def test_profile_force_keeps_a_run_directory_that_holds_a_users_file(tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    (run / "notes.md").write_text("my notes")
    listing = sorted(p.relative_to(run) for p in run.rglob("*"))
    with pytest.raises(RunDirError, match=r"notes\.md"):
        prepare_run_dir(run, force=True)
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == listing
    assert (run / "notes.md").read_text() == "my notes"


def test_profile_force_replaces_an_earlier_run_with_its_report_and_old_run(
        tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    (run / "report.html").write_text("<html>")
    standard_run(run / "old")
    prepare_run_dir(run, force=True)
    assert run.is_dir() and list(run.iterdir()) == []


def test_profile_force_never_follows_a_symbolic_link_inside_the_run(tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    precious = tmp_path / "precious.pt.trace.json.gz"
    precious.write_bytes(b"mine")
    (run / "extra.pt.trace.json.gz").symlink_to(precious)
    with pytest.raises(RunDirError, match="symbolic link"):
        prepare_run_dir(run, force=True)
    assert precious.read_bytes() == b"mine"


def test_profile_out_below_a_file_is_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    for force in ([], ["--force"]):
        res = invoke("profile", WORKLOAD, "--out", notes / "run", *force)
        one_line_error(res, 1)
        assert "is not a directory" in res.output
    assert notes.read_text() == "mine"


# --- item 3: --force never replaces a special file or a link -----------------------------------


def special_outputs(tmp_path: Path) -> list[Path]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    outputs = [fifo, link, tmp_path]  # a directory too
    if os.geteuid() == 0:  # a device node like /dev/null, made here (root may)
        null = tmp_path / "null"
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        outputs.append(null)
    return outputs


def node(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return stat.S_IFMT(st.st_mode), st.st_ino


@pytest.mark.parametrize("command", ["report", "export", "compare", "kernel-diff"])
def test_force_never_replaces_a_fifo_a_link_a_device_or_a_directory(
        tmp_path: Path, command: str) -> None:
    run = standard_run(tmp_path / "run")
    trace = run / "eager.pt.trace.json.gz"
    args = {"report": ["report", trace, "-f", "json"], "export": ["export", trace],
            "compare": ["compare", run, "-f", "json"],
            "kernel-diff": ["kernel-diff", trace, run / "compile.pt.trace.json.gz",
                            "-f", "json"]}[command]
    outs = tmp_path / "outs"
    outs.mkdir()
    for out in special_outputs(outs):
        was = node(out)
        res = invoke(*args, "-o", out, "--force")
        one_line_error(res, 2)
        assert node(out) == was, out


def test_dash_writes_to_standard_output(tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    res = invoke("report", run / "eager.pt.trace.json.gz", "-f", "html", "-o", "-")
    assert res.exit_code == 0, res.output
    assert "<html" in res.stdout[:2000].lower()
    assert not (Path.cwd() / "-").exists()


# --- item 4: publishing is no-clobber, in export too ------------------------------------------


def test_a_file_created_at_the_target_during_an_export_is_not_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's file appears after the up-front check, while the overlay is written."""
    import traceviz
    from traceviz.export import perfetto

    run = standard_run(tmp_path / "run")
    out = tmp_path / "overlay.json.gz"
    real = perfetto.overlay_events

    def user_writes_meanwhile(*args, **kwargs):
        out.write_text("19 bytes of my text")
        yield from real(*args, **kwargs)

    monkeypatch.setattr(perfetto, "overlay_events", user_writes_meanwhile)
    analysis = traceviz.analyze(run / "eager.pt.trace.json.gz")
    with pytest.raises(OutputExistsError):
        analysis.export_perfetto(out)
    assert out.read_text() == "19 bytes of my text"
    assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []


def test_of_two_writers_racing_for_one_name_exactly_one_wins(tmp_path: Path) -> None:
    target = tmp_path / "out.html"
    first, second = tmp_path / ".a.partial-1", tmp_path / ".b.partial-2"
    first.write_text("first")
    second.write_text("second")
    publish(first, target, force=False)
    with pytest.raises(OutputExistsError):
        publish(second, target, force=False)
    assert target.read_text() == "first" and second.read_text() == "second"


def test_a_partial_file_left_by_a_killed_export_is_removed_and_named(tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    out = tmp_path / "overlay.json.gz"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    leftover = tmp_path / f".overlay.json.gz.partial-{dead.stdout.strip()}-0a1b2c3d.gz"
    leftover.write_bytes(b"\x1f\x8b" + b"x" * 1000)
    live = tmp_path / f".overlay.json.gz.partial-{os.getpid()}-0a1b2c3d.gz"
    live.write_bytes(b"a write in progress")
    res = invoke("export", run / "eager.pt.trace.json.gz", "-o", out)
    assert res.exit_code == 0, res.output
    assert not leftover.exists() and live.exists()
    assert f"removed {leftover}" in res.output and "interrupted write" in res.output


# --- item 10: outputs that cannot be written are one line ---------------------------------------


@pytest.mark.parametrize("command", ["report", "export", "kernel-diff"])
def test_an_output_below_a_file_or_in_an_unwritable_place_is_one_line(
        tmp_path: Path, command: str) -> None:
    run = standard_run(tmp_path / "run")
    trace = run / "eager.pt.trace.json.gz"
    args = {"report": ["report", trace, "-f", "json"], "export": ["export", trace],
            "kernel-diff": ["kernel-diff", trace, run / "compile.pt.trace.json.gz",
                            "-f", "json"]}[command]
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for out in (blocker / "out.json", Path("/proc/traceviz-cannot-write-here.json")):
        res = invoke(*args, "-o", out, "--force")
        one_line_error(res, 2)

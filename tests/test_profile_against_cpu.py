"""``traceviz profile NEW --against OLD`` end to end on the CPU, and its refusals.

A real run: ``tiny_slow.py`` (the ``tiny.py`` step plus 40 multiplications by one) against
``tiny.py`` in eager mode. The new version is slower by construction (41 more ops per step on 64
floats), so the paired old → new verdict must be ``slower``, and its outputs equal the old
ones.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

WORKLOADS = Path(__file__).parent / "workloads_for_tests"


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def against_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("against") / "run"
    proc = traceviz("profile", str(WORKLOADS / "tiny_slow.py"), "--against",
                    str(WORKLOADS / "tiny.py"), "--modes", "eager", "--out", str(run_dir),
                    "--device", "cpu", "--repeats", "3", "--min-repeat-ms", "5",
                    "--timing-budget-s", "2", "--no-stack")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "old -> new" in proc.stdout
    return run_dir


def test_the_run_holds_both_versions_runs(against_run):
    new = json.loads((against_run / "manifest.json").read_text())
    old = json.loads((against_run / "old" / "manifest.json").read_text())
    assert new["workload"]["name"] == "tiny_slow" and old["workload"]["name"] == "tiny"
    assert new["against"]["run"] == "old"
    assert new["against"]["workload"]["sha256"] == old["workload"]["sha256"]
    assert new["against"]["inputs"] == ["float32[64]"]
    assert old["modes"]["eager"]["status"] == "ok"
    assert (against_run / "old" / "eager.pt.trace.json.gz").is_file()


def test_each_mode_times_old_against_new_in_abba_pairs(against_run):
    against = json.loads((against_run / "manifest.json").read_text())["modes"]["eager"]["against"]
    assert against["status"] == "ok", against["reason"]
    paired = against["paired"]
    assert paired["baseline"] == "old" and paired["order"] == "ABBA"
    assert len(paired["baseline_block_ms"]) == len(paired["mode_block_ms"]) == paired["pairs"]
    assert paired["pairs"] >= 2
    assert against["outputs_vs_old"]["compared"] is True
    assert against["outputs_vs_old"]["ok"] is True
    assert against["log"] == "logs/eager.against.log"


def test_report_leads_with_the_old_to_new_verdict_in_every_format(against_run, tmp_path):
    out = tmp_path / "r.json"
    proc = traceviz("report", str(against_run), "--format", "json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert list(doc)[:2] == ["schema", "against"]
    (mode,) = doc["against"]["modes"]
    assert mode["mode"] == "eager"
    assert mode["verdict"] == "slower", mode
    assert mode["speed"]["speedup"]["high"] < 1
    assert mode["speed"]["new_ms"] == pytest.approx(
        mode["speed"]["old_ms"] / mode["speed"]["speedup"]["value"])
    assert mode["why"]["status_a"] == mode["why"]["status_b"] == "ok"
    for fmt, first, then in (("text", "Old → new", "Verdicts"),
                             ("md", "### Old → new", "### Verdicts"),
                             ("html", 'id="versions"', 'id="verdicts"')):
        path = tmp_path / f"r.{fmt}"
        proc = traceviz("report", str(against_run), "--format", fmt, "-o", str(path))
        assert proc.returncode == 0, proc.stderr
        text = path.read_text()
        assert text.index(first) < text.index(then), fmt


def test_report_reads_each_trace_of_both_versions_once(against_run, monkeypatch):
    import traceviz.trace
    from traceviz.report.compare_report import load_run_dir
    from traceviz.report.run_compare_report import load_run

    real_load = traceviz.trace.load
    read: list[Path] = []

    def counting_load(path, **kwargs):
        read.append(Path(path).resolve())
        return real_load(path, **kwargs)

    monkeypatch.setattr(traceviz.trace, "load", counting_load)
    inputs = load_run_dir(against_run)
    assert inputs.versions is not None
    traces = sorted(p.resolve() for p in against_run.rglob("*.json.gz"))
    assert len(traces) == 2  # NEW's eager trace and OLD's (old/)
    assert sorted(read) == traces
    monkeypatch.setattr(traceviz.trace, "load", real_load)
    old, new = inputs.versions
    assert new == load_run(against_run) and old == load_run(against_run / "old")


def test_inputs_of_another_shape_are_refused_with_both_shapes():
    proc = traceviz("profile", str(WORKLOADS / "tiny.py"), "--against",
                    str(WORKLOADS / "tiny_wide.py"), "--device", "cpu", "--out",
                    "/nonexistent-never-created")
    assert proc.returncode == 2
    assert "float32[64]" in proc.stderr and "float32[128]" in proc.stderr
    assert not Path("/nonexistent-never-created").exists()


def test_against_with_nproc_is_refused():
    proc = traceviz("profile", str(WORKLOADS / "tiny.py"), "--against",
                    str(WORKLOADS / "tiny.py"), "--nproc", "2", "--device", "cpu")
    assert proc.returncode == 2
    assert "--against" in proc.stderr and "--nproc" in proc.stderr


def test_the_old_file_inside_the_run_directory_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    old = run_dir / "tiny.py"
    old.write_text((WORKLOADS / "tiny.py").read_text())
    proc = traceviz("profile", str(WORKLOADS / "tiny_slow.py"), "--against", str(old),
                    "--out", str(run_dir), "--force", "--device", "cpu")
    assert proc.returncode == 2
    assert "never overwritten" in proc.stderr
    assert old.is_file()


def interrupted_copy(against_run: Path, dest: Path) -> Path:
    """A copy of the run as a stop during eager leaves it: eager ``interrupted`` in both
    versions' manifests, no eager traces, no old → new record."""
    shutil.copytree(against_run, dest)
    for run in (dest, dest / "old"):
        record = json.loads((run / "manifest.json").read_text())
        record["modes"]["eager"] = {"status": "interrupted",
                                    "reason": "interrupted by SIGTERM during 'timing' after 1.0 s"}
        (run / "manifest.json").write_text(json.dumps(record))
        for trace in run.glob("eager*.pt.trace.json.gz"):
            trace.unlink()
    return dest


def test_resume_runs_the_interrupted_mode_of_both_versions_and_times_them_again(
        against_run, tmp_path):
    run_dir = interrupted_copy(against_run, tmp_path / "run")
    proc = traceviz("profile", "--resume", str(run_dir))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "old -> new" in proc.stdout
    new = json.loads((run_dir / "manifest.json").read_text())
    old = json.loads((run_dir / "old" / "manifest.json").read_text())
    assert new["modes"]["eager"]["status"] == old["modes"]["eager"]["status"] == "ok"
    assert [r["modes"] for r in new["resumed"]] == [["eager"]]
    assert [r["modes"] for r in old["resumed"]] == [["eager"]]
    assert (run_dir / "eager.pt.trace.json.gz").is_file()
    assert (run_dir / "old" / "eager.pt.trace.json.gz").is_file()
    against = new["modes"]["eager"]["against"]
    assert against["status"] == "ok", against["reason"]
    assert against["paired"]["baseline"] == "old" and against["outputs_vs_old"]["ok"] is True


def test_resume_refuses_an_old_version_changed_since_the_run_started(against_run, tmp_path):
    run_dir = interrupted_copy(against_run, tmp_path / "run")
    old_file = tmp_path / "tiny.py"
    shutil.copy(WORKLOADS / "tiny.py", old_file)
    record = json.loads((run_dir / "manifest.json").read_text())
    record["against"]["workload"]["path"] = str(old_file)
    (run_dir / "manifest.json").write_text(json.dumps(record))
    old_file.write_text(old_file.read_text() + "\n# edited\n")
    proc = traceviz("profile", "--resume", str(run_dir))
    assert proc.returncode == 2
    assert "(the old version) changed since the run started" in proc.stderr
    assert json.loads((run_dir / "manifest.json").read_text()) == record  # nothing touched

"""``profile NEW --against OLD``: the old version's run beside the new one, and the pair timed.

The run directory is NEW's run as without ``--against``; its manifest's ``against`` names the
old workload file (path, name, SHA-256, input signature) and the directory :data:`OLD_DIR`
holding OLD's run, a complete run directory of its own (manifest, lean and stacked traces,
logs, report), made with the same settings and modes. Per mode, OLD runs right after NEW in a
process of its own, then a third process times the two against each other
(:mod:`traceviz.collect.against`): its record is NEW's mode entry's ``against`` block. A mode
that does not run for both versions (skipped, failed, timed out) gets ``against.status``
``skipped`` with the reason. Nothing here imports torch.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from traceviz.collect import manifest, run_control, runner
from traceviz.collect.against import signature_mismatch
from traceviz.collect.mode_names import skip_reason
from traceviz.collect.profiled_step import RAN
from traceviz.collect.run_files import OLD_DIR


class AgainstError(ValueError):
    """The old version cannot be used (the message says why)."""


def probe_old(old: Path, probe: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Probe the old workload file; refuse it when it is invalid or its inputs' shapes or
    dtypes differ from NEW's (``probe["inputs"]``, both signatures in the message)."""
    with tempfile.TemporaryDirectory(prefix="traceviz-probe-old-") as tmp:
        code, found = runner.run_probe(old, Path(tmp) / "probe.json", timeout_s)
    if code != 0 or "error" in found:
        raise AgainstError(f"--against: {found.get('error', f'probe exited with code {code}')}")
    if problem := signature_mismatch(probe.get("inputs"), found.get("inputs")):
        raise AgainstError(problem)
    return found


@dataclass
class OldRun:
    """OLD's run directory and manifest, filled mode by mode."""

    run_dir: Path
    record: dict[str, Any]
    workload: Path
    has_triton_step: bool

    def skip_reason(self, mode: str, *, cuda: bool, triton: bool) -> str | None:
        """Why ``mode`` cannot run for the old version (``None``: it can)."""
        reason = skip_reason(mode, cuda=cuda, triton=triton,
                             has_triton_step=self.has_triton_step)
        return f"the old version: {reason}" if reason else None

    def skip(self, mode: str, reason: str) -> None:
        """Record ``mode`` skipped for the old version too."""
        self.record["modes"][mode] = manifest.mode_entry(status="skipped", reason=reason)
        manifest.write_manifest(self.run_dir, self.record)

    def run_mode(self, new: Path, mode: str, entry: dict[str, Any], run_dir: Path,
                 settings: runner.RunSettings, environment: dict[str, Any],
                 on_phase: Callable[[str], None]) -> dict[str, Any]:
        """Run ``mode`` for the old version, then time it against NEW (whose mode ``entry``
        just ended); return NEW's ``against`` record."""
        old_entry = runner.run_mode(self.workload.resolve(), mode, self.run_dir, settings,
                                    environment, lambda p: on_phase(f"old: {p}"))
        self.record["modes"][mode] = manifest.mode_entry(**old_entry)
        manifest.write_manifest(self.run_dir, self.record)
        if entry.get("status") not in RAN or old_entry.get("status") not in RAN:
            return {"status": "skipped",
                    "reason": f"the mode did not run for both versions (new: "
                    f"{entry.get('status')}, old: {old_entry.get('status')})"}
        return runner.run_against(new, self.workload.resolve(), mode, run_dir, settings,
                                  environment, on_phase)


def start_old(run_dir: Path, record: dict[str, Any], old_probe: dict[str, Any], old: Path,
              modes: list[str], started: datetime) -> OldRun:
    """Create OLD's run directory with every mode pending; note it in NEW's manifest."""
    old_dir = run_dir / OLD_DIR
    old_dir.mkdir(parents=True, exist_ok=True)
    old_record = manifest.new_manifest(old_probe, dict(record["settings"]), started)
    old_record["version_of"] = {"role": "old", "new_run": ".."}
    run_control.start_run(old_dir, old_record, modes, old)
    record["against"] = {"run": OLD_DIR, "workload": old_record["workload"],
                         "inputs": old_probe.get("inputs")}
    manifest.write_manifest(run_dir, record)
    return OldRun(old_dir, old_record, old, bool(old_probe["workload"]["has_triton_step"]))


def recorded_old(plan: run_control.ResumePlan, force: bool) -> Path | None:
    """The old workload file of a run being resumed (``None``: the run has no ``against``);
    refused when it is gone or changed since (unless ``force``)."""
    against = plan.record.get("against")
    if not isinstance(against, dict):
        return None
    wl = against.get("workload") or {}
    path = Path(str(wl.get("path")))
    if not path.is_file():
        raise AgainstError(f"{plan.run_dir}: the old version's workload file {path} is gone")
    if not force and run_control.workload_digest(path) != wl.get("sha256"):
        raise AgainstError(f"{path} (the old version) changed since the run started (SHA-256 "
                           "differs); pass --force to resume with the new file")
    return path


def resume_old(plan: run_control.ResumePlan, old: Path, started_iso: str) -> OldRun:
    """Mark the modes being run again pending in OLD's run directory too."""
    old_dir = plan.run_dir / OLD_DIR
    try:
        old_record = manifest.read_manifest(old_dir)
    except (OSError, ValueError) as exc:
        raise AgainstError(f"{old_dir}: cannot read the old version's manifest ({exc})") from None
    for mode in plan.modes:
        old_record["modes"].setdefault(mode, manifest.mode_entry(status="pending"))
    run_control.begin_resume(run_control.ResumePlan(old_dir, old_record, old, plan.modes),
                             started_iso)
    wl = old_record.get("workload") or {}
    return OldRun(old_dir, old_record, old, bool(wl.get("has_triton_step")))

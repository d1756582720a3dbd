"""Stopping a profile run cleanly and resuming it.

A run records every selected mode in the manifest before the first one starts (status
``pending``), then replaces each entry as its mode ends. When the run is stopped:

* **SIGINT / SIGTERM** to the parent: inside :func:`stop_signals` both raise
  :class:`RunInterrupted`; the runner kills the running child's process group, and
  :func:`record_interruption` marks that mode ``interrupted`` ("interrupted by SIGTERM during
  'timing' after 12.3 s") and every mode not started ``interrupted`` ("not started: ..."),
  removes temporary files and writes the manifest. The exit code is 128 + the signal number.
* **a mode hangs** past ``--timeout`` or **its child dies by a signal**: the runner records
  ``timeout`` / ``crashed`` and the run goes on with the next mode.
* **the parent is killed outright** (SIGKILL, power loss): the manifest on disk is the last one
  written, so the modes not reached stay ``pending``.

Output files are only ever renamed into place complete (:mod:`traceviz.atomic`), so a stopped
run leaves the finished modes' traces and no partial one, and ``traceviz report`` reads it.

``profile --resume DIR`` (:func:`plan_resume`, :func:`begin_resume`) runs again exactly the modes
whose status is not in :data:`FINISHED_STATUSES` — ``interrupted``, ``pending``, ``timeout`` and
``crashed`` — with the settings recorded in the manifest, after checking that the workload file
still has the SHA-256 recorded when the run started (and that torch / CUDA / GPU are the same);
``--force`` overrides both checks, and the resume is recorded under the manifest's ``resumed``.
"""

from __future__ import annotations

import hashlib
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from traceviz.atomic import remove_partials
from traceviz.collect import manifest, run_files

#: A mode with one of these statuses ran to its end (well or not) and is not run again.
FINISHED_STATUSES = frozenset({"ok", "failed", "mismatch", "skipped"})
#: Signals that stop a run cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Environment facts that must match for a resumed run to be comparable with its first part.
SAME_ENVIRONMENT_KEYS = ("torch", "triton", "cuda", "gpu", "python")


class RunInterrupted(BaseException):
    """The parent received a stop signal (a ``BaseException``, like ``KeyboardInterrupt``, so
    ``except Exception`` blocks do not swallow it)."""

    def __init__(self, signum: int) -> None:
        self.signal_name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        self.mode: str | None = None
        self.phase: str | None = None
        self.wall_s: float | None = None
        super().__init__(f"interrupted by {self.signal_name}")

    def during(self, mode: str, phase: str, wall_s: float) -> None:
        """Note the mode that was running, its last phase and how long it had run (s)."""
        self.mode, self.phase, self.wall_s = mode, phase, wall_s


class ResumeError(ValueError):
    """The run directory cannot be resumed (the message says why)."""


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise RunInterrupted(signum)


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise :class:`RunInterrupted` in the main thread;
    the previous handlers come back afterwards."""
    previous = {s: signal.signal(s, _raise_interrupted) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def workload_digest(path: Path) -> str:
    """SHA-256 (hex) of the workload file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def start_run(run_dir: Path, record: dict[str, Any], modes: list[str], workload: Path) -> None:
    """Record the workload's digest and every mode as ``pending``; write the manifest."""
    record["workload"]["sha256"] = workload_digest(workload)
    for mode in modes:
        record["modes"][mode] = manifest.mode_entry(status="pending", reason="not run yet")
    manifest.write_manifest(run_dir, record)


def record_interruption(run_dir: Path, record: dict[str, Any], exc: RunInterrupted) -> None:
    """Mark the running mode and the modes not started ``interrupted``; write the manifest.

    Call it after the running child was killed: temporary files in ``run_dir`` are removed.
    """
    for mode, entry in record["modes"].items():
        if mode == exc.mode:  # its lean trace may be complete while its stacked run was not
            remove_traces(run_dir, mode)
            record["modes"][mode] = manifest.mode_entry(
                status="interrupted",
                reason=f"interrupted by {exc.signal_name} during '{exc.phase}' after "
                f"{exc.wall_s:.1f} s",
                wall_s=exc.wall_s,
                log=str(Path("logs") / f"{mode}.log"),
            )
        elif entry["status"] == "pending":
            record["modes"][mode] = manifest.mode_entry(
                status="interrupted",
                reason=f"not started: the run was interrupted by {exc.signal_name}",
            )
    remove_partials(run_dir)
    manifest.write_manifest(run_dir, record)


@dataclass(frozen=True)
class ResumePlan:
    """What ``profile --resume`` runs: the run directory, its manifest, the workload file and
    the modes to run again (in the manifest's order)."""

    run_dir: Path
    record: dict[str, Any]
    workload: Path
    modes: tuple[str, ...]


def plan_resume(run_dir: Path, *, force: bool) -> ResumePlan:
    """Read ``run_dir``'s manifest and decide what to run again.

    Raises :class:`ResumeError` when there is no readable manifest, the workload file is gone,
    its SHA-256 differs from the recorded one (unless ``force``), or every mode finished.
    """
    try:
        record = manifest.read_manifest(run_dir)
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{run_dir}: cannot read {manifest.MANIFEST_NAME} ({exc})") from None
    problem = run_files.run_manifest_problem(record)
    if problem is not None:
        raise ResumeError(f"{run_dir / manifest.MANIFEST_NAME}: not a traceviz run manifest "
                          f"({problem})")
    modes, workload_rec = record["modes"], record["workload"]
    workload = Path(str(workload_rec.get("path")))
    if not workload.is_file():
        raise ResumeError(f"{run_dir}: the run's workload file {workload} is gone")
    recorded = workload_rec.get("sha256")
    if not force:
        if recorded is None:
            raise ResumeError(f"{run_dir}: the manifest records no workload digest, so a "
                              "changed workload cannot be detected; pass --force to resume")
        if workload_digest(workload) != recorded:
            raise ResumeError(f"{workload} changed since the run started (SHA-256 differs); "
                              "pass --force to resume with the new file")
    todo = tuple(m for m, e in modes.items()
                 if not isinstance(e, dict) or e.get("status") not in FINISHED_STATUSES)
    if not todo:
        raise ResumeError(f"{run_dir}: every mode finished; nothing to resume")
    return ResumePlan(Path(run_dir), record, workload, todo)


def check_environment(plan: ResumePlan, environment: dict[str, Any], *, force: bool) -> None:
    """Refuse (:class:`ResumeError`) when torch, Triton, CUDA, the GPU or Python differ from the
    run's recorded environment, unless ``force``."""
    recorded = plan.record.get("environment") or {}
    changed = [f"{k} {recorded.get(k)} → {environment.get(k)}" for k in SAME_ENVIRONMENT_KEYS
               if recorded.get(k) != environment.get(k)]
    if changed and not force:
        raise ResumeError(f"{plan.run_dir}: the environment changed since the run started ("
                          + ", ".join(changed) + "); pass --force to resume anyway")


def begin_resume(plan: ResumePlan, started_iso: str) -> None:
    """Mark the modes to run again ``pending``, note the resume, remove leftovers of the stopped
    run (temporary files, stale results) and write the manifest."""
    record = plan.record
    for mode in plan.modes:
        record["modes"][mode] = manifest.mode_entry(status="pending", reason="not run yet")
    record.setdefault("resumed", []).append({
        "at": started_iso,
        "modes": list(plan.modes),
        "workload_sha256": workload_digest(plan.workload),
    })
    remove_partials(plan.run_dir)
    for mode in plan.modes:
        remove_traces(plan.run_dir, mode)
    manifest.write_manifest(plan.run_dir, record)


def remove_traces(run_dir: Path, mode: str) -> None:
    """Remove a mode's lean and stacked traces (a mode run again, or stopped mid-way)."""
    for name in (f"{mode}.pt.trace.json.gz", f"{mode}.stack.pt.trace.json.gz"):
        (run_dir / name).unlink(missing_ok=True)

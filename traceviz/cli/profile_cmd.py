"""``traceviz profile WORKLOAD``: run a workload in several modes, trace each, compare.

Thin layer over :mod:`traceviz.collect`: every mode runs in its own child process (the parent
never imports torch), the manifest is rewritten after each mode, and the run ends with the
analyzer's per-mode summary and the comparison report. SIGINT / SIGTERM stop the run cleanly
and ``--resume DIR`` finishes a stopped run (:mod:`traceviz.collect.run_control`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from traceviz.cli.errors import user_errors
from traceviz.collect import analysis, manifest, run_control, runner
from traceviz.collect.mode_names import ALL_MODES, ModeListError, parse_modes, skip_reason
from traceviz.collect.tracing import ACTIVE_STEPS, WAIT_STEPS, WARMUP_STEPS
from traceviz.errors import OutputExistsError, UsageError

#: Probe (load the workload, read versions) time limit, seconds.
PROBE_TIMEOUT_S = 300.0
#: Default of ``--timeout``: seconds each mode may take.
DEFAULT_TIMEOUT_S = 600.0
#: Statuses that make ``--strict`` exit with 1.
BAD_STATUSES = frozenset({"failed", "mismatch", "timeout", "crashed"})

# Measurement defaults per device: warm-up steps, repeats, ms per repeat, max steps per repeat.
CUDA_DEFAULTS = {"warmup": 20, "repeats": 7, "min_repeat_ms": 100.0, "max_iters": 2000}
CPU_DEFAULTS = {"warmup": 3, "repeats": 5, "min_repeat_ms": 20.0, "max_iters": 200}
#: Steps each mode runs before its outputs are compared (covers cudagraph-tree warm-up and
#: recording, so the compared output comes from a replay).
CHECK_STEPS = 5

_MODES_HELP = "'all' or a comma-separated list of: " + ", ".join(ALL_MODES)


def _summary_table(modes: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="traceviz profile")
    for col in ("mode", "status", "1st call s", "step ms (p10-p90)", "profiled ms (x)",
                "kernels /step", "launches /step", "graphs /step", "peak MiB"):
        table.add_column(col, overflow="fold")

    def num(value: Any, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    for mode, e in modes.items():
        t = e.get("timing") or {}
        p = e.get("profiled") or {}
        a = e.get("analysis_summary") or {}
        step = (f"{t['median_ms']:.4g} ({t['p10_ms']:.4g}-{t['p90_ms']:.4g})"
                + (" noisy" if t.get("noisy") else "")) if t else "-"
        prof = (f"{p['step_ms']:.4g} ({p['inflation']:.2f}x)"
                if p.get("step_ms") is not None and p.get("inflation") else "-")
        peak = e.get("peak_mem_bytes")
        table.add_row(
            mode, e["status"], num(e.get("first_call_s"), ".2f"), step, prof,
            num(a.get("kernels_per_step"), ".1f"), num(a.get("launches_per_step"), ".1f"),
            num(a.get("graph_launches_per_step"), ".1f"),
            "-" if peak is None else f"{peak / 2**20:.1f}",
        )
    return table


def _notes(modes: dict[str, dict[str, Any]]) -> list[str]:
    """One line per mode with a reason or an analyzer error."""
    notes = []
    for mode, e in modes.items():
        reason = e.get("reason") or (e.get("analysis_summary") or {}).get("error")
        if reason:
            notes.append(f"{mode}: {reason.splitlines()[0]}")
    return notes


def _resume_plan(resume: Path, force: bool, given: dict[str, bool]) -> run_control.ResumePlan:
    """The resume plan; options that would change the recorded settings are refused."""
    clashing = [name for name, set_ in given.items() if set_]
    if clashing:
        raise UsageError(f"--resume keeps the run's recorded settings and modes; drop "
                         f"{', '.join(clashing)}")
    try:
        return run_control.plan_resume(resume, force=force)
    except run_control.ResumeError as exc:
        raise UsageError(str(exc)) from None


@user_errors
def profile(
    workload: Annotated[
        Path | None,
        typer.Argument(help="Workload file (see workloads/README.md); omit with --resume."),
    ] = None,
    modes: Annotated[str, typer.Option("--modes", help=_MODES_HELP)] = "all",
    out: Annotated[
        Path | None, typer.Option("--out", help="Run directory (default runs/<workload>-<time>).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing run directory.")
    ] = False,
    device: Annotated[str, typer.Option("--device", help="auto, cuda or cpu.")] = "auto",
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds each mode may take.")
    ] = DEFAULT_TIMEOUT_S,
    repeats: Annotated[
        int | None, typer.Option("--repeats", help="Timing repeats per mode.")
    ] = None,
    warmup: Annotated[
        int | None, typer.Option("--warmup", help="Warm-up steps before timing.")
    ] = None,
    min_repeat_ms: Annotated[
        float | None,
        typer.Option("--min-repeat-ms", help="Each timing repeat lasts at least this many ms."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict",
                     help="Exit 1 when a mode failed, mismatched, timed out or crashed."),
    ] = False,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", help="Finish a stopped run directory: run only its modes that "
                     "did not finish, with its recorded settings (--force: even if the workload "
                     "file or the environment changed)."),
    ] = None,
) -> None:
    """Profile WORKLOAD in eager / torch.compile / CUDA-graph / Triton modes and compare them."""
    console = Console()
    try:
        selected = parse_modes(modes)
    except ModeListError as exc:
        raise UsageError(str(exc)) from None
    if device not in ("auto", "cuda", "cpu"):
        raise UsageError(f"--device must be auto, cuda or cpu, not {device!r}")
    plan = None
    if resume is not None:
        plan = _resume_plan(resume, force, {
            "WORKLOAD": workload is not None, "--modes": modes != "all", "--out": out is not None,
            "--device": device != "auto", "--timeout": timeout != DEFAULT_TIMEOUT_S,
            "--repeats": repeats is not None, "--warmup": warmup is not None,
            "--min-repeat-ms": min_repeat_ms is not None,
        })
        workload, selected = plan.workload, list(plan.modes)
    elif workload is None:
        raise UsageError("give a WORKLOAD file, or --resume RUN_DIR")
    if out is not None and out.exists() and not force and (
        not out.is_dir() or any(out.iterdir())
    ):
        raise OutputExistsError(f"{out} exists; pass --force to replace it")
    started = manifest.utc_now()
    with (
        console.status("loading the workload and probing the environment…"),
        tempfile.TemporaryDirectory(prefix="traceviz-probe-") as probe_dir,
    ):
        code, probe = runner.run_probe(workload, Path(probe_dir) / "probe.json", PROBE_TIMEOUT_S)
    if code != 0 or "error" in probe:
        raise UsageError(probe.get("error", f"probe exited with code {code}"))
    env = probe["environment"]
    if plan is not None:
        try:
            run_control.check_environment(plan, env, force=force)
        except run_control.ResumeError as exc:
            raise UsageError(str(exc)) from None
        device = plan.record["settings"]["device"]
    if device == "auto":
        device = "cuda" if env["cuda_available"] else "cpu"
    elif device == "cuda" and not env["cuda_available"]:
        raise UsageError("--device cuda: torch sees no CUDA device here")
    run_dir = out or manifest.default_run_dir(probe["workload"]["name"], started)
    if plan is not None:
        run_dir = plan.run_dir
    else:
        try:
            run_dir = manifest.prepare_run_dir(run_dir, force)
        except manifest.RunDirError as exc:
            raise OutputExistsError(str(exc)) from None

    defaults = CUDA_DEFAULTS if device == "cuda" else CPU_DEFAULTS
    settings = runner.RunSettings(
        device=device,
        timeout_s=timeout,
        warmup=defaults["warmup"] if warmup is None else warmup,
        repeats=defaults["repeats"] if repeats is None else repeats,
        min_repeat_ms=defaults["min_repeat_ms"] if min_repeat_ms is None else min_repeat_ms,
        max_iters=int(defaults["max_iters"]),
        check_steps=CHECK_STEPS,
    )
    record = manifest.new_manifest(
        probe,
        {**settings.__dict__,
         "trace_schedule": {"wait": WAIT_STEPS, "warmup": WARMUP_STEPS, "active": ACTIVE_STEPS}},
        started,
    )
    if plan is None:
        run_control.start_run(run_dir, record, selected, Path(workload))
    else:
        try:
            settings = runner.RunSettings.from_manifest(plan.record["settings"])
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{run_dir}: the manifest's settings lack {exc}") from None
        record = plan.record
        run_control.begin_resume(plan, started.isoformat(timespec="seconds"))
    console.print(f"[bold]{probe['workload']['name']}[/]: {probe['workload']['description']}")
    console.print(f"device {device} ({env.get('gpu') or 'CPU'}), torch {env['torch']}, "
                  f"run directory {run_dir}")
    try:
        with run_control.stop_signals():
            _run_modes(console, run_dir, record, selected, settings, probe, Path(workload))
            report, note = write_run_report(run_dir, record)
    except run_control.RunInterrupted as exc:
        run_control.record_interruption(run_dir, record, exc)
        console.print(f"{exc}; manifest: {run_dir / manifest.MANIFEST_NAME}; finish the run with "
                      f"`traceviz profile --resume {run_dir}`", markup=False, highlight=False)
        raise typer.Exit(exc.exit_code) from None
    console.print(_summary_table(record["modes"]))
    for line in _notes(record["modes"]):
        console.print(line, markup=False, highlight=False)
    console.print(note)
    console.print(f"manifest: {run_dir / manifest.MANIFEST_NAME}")
    if report is not None:
        console.print(f"report: {report}")
    if strict and any(e["status"] in BAD_STATUSES for e in record["modes"].values()):
        raise typer.Exit(1)


def _run_modes(
    console: Console,
    run_dir: Path,
    record: dict[str, Any],
    selected: list[str],
    settings: runner.RunSettings,
    probe: dict[str, Any],
    workload: Path,
) -> None:
    """Run each selected mode, rewriting the manifest after each, then add the analyses."""
    cuda = settings.device == "cuda"
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console) as progress:
        for mode in selected:
            reason = skip_reason(mode, cuda=cuda, triton=probe["triton_importable"],
                                 has_triton_step=probe["workload"]["has_triton_step"])
            if reason:
                record["modes"][mode] = manifest.mode_entry(status="skipped", reason=reason)
                progress.console.print(f"  {mode}: skipped ({reason})")
                manifest.write_manifest(run_dir, record)
                continue
            task = progress.add_task(f"{mode}: starting", total=None)

            def show(phase: str, mode: str = mode, task: Any = task) -> None:
                progress.update(task, description=f"{mode}: {phase}")

            entry = runner.run_mode(workload.resolve(), mode, run_dir, settings,
                                    probe["environment"], show)
            record["modes"][mode] = manifest.mode_entry(**entry)
            progress.update(task, description=f"{mode}: {entry['status']}", total=1, completed=1)
            manifest.write_manifest(run_dir, record)

    with console.status("analyzing traces…"):
        analysis.add_analysis_summaries(run_dir, record)
        manifest.write_manifest(run_dir, record)


def write_run_report(run_dir: Path, record: dict[str, Any]) -> tuple[Path | None, str]:
    """Write the comparison report into the run directory and note it in the manifest.

    The one place ``profile`` produces its report: calls
    ``traceviz.report.compare_report.write_run_report(run_dir)`` when that exists.
    """
    report, note = analysis.write_comparison_report(run_dir)
    if report is not None:
        record["report"] = str(report.relative_to(run_dir) if report.is_relative_to(run_dir)
                               else report)
        manifest.write_manifest(run_dir, record)
    return report, note

"""``traceviz profile WORKLOAD``: run a workload in several modes, trace each, compare.

Thin layer over :mod:`traceviz.collect`: every mode runs in its own child process (the parent
never imports torch), the manifest is rewritten after each mode, and the run ends with the
analyzer's per-mode summary and the comparison report. SIGINT / SIGTERM stop the run cleanly
and ``--resume DIR`` finishes a stopped run (:mod:`traceviz.collect.run_control`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from traceviz.cli import display
from traceviz.cli.profile_defaults import DEFAULT_TIMEOUT_S, DEFAULT_TIMING_BUDGET_S
from traceviz.collect import analysis, manifest, run_control, run_files, runner, versions
from traceviz.collect.mode_names import ModeListError, parse_modes, skip_reason
from traceviz.collect.timing import warm_min_s
from traceviz.collect.tracing import ACTIVE_STEPS, ADJACENT_WINDOWS, WAIT_STEPS, WARMUP_STEPS
from traceviz.errors import OutputExistsError, UsageError
from traceviz.output_guard import refuse_run_dir_over_inputs
from traceviz.report.inert import inert_text

#: Probe (load the workload, read versions) time limit, seconds.
PROBE_TIMEOUT_S = 300.0
#: Statuses that make ``--strict`` exit with 1.
BAD_STATUSES = frozenset({"failed", "mismatch", "timeout", "crashed"})

# Measurement defaults per device: warm-up steps, repeats, ms per repeat, max steps per repeat.
CUDA_DEFAULTS = {"warmup": 20, "repeats": 7, "min_repeat_ms": 100.0, "max_iters": 2000}
CPU_DEFAULTS = {"warmup": 3, "repeats": 5, "min_repeat_ms": 20.0, "max_iters": 200}
#: Steps each mode runs before its outputs are compared (covers cudagraph-tree warm-up and
#: recording, so the compared output comes from a replay).
CHECK_STEPS = 5


def notes(modes: dict[str, dict[str, Any]]) -> list[str]:
    """One line per mode with a reason or an analyzer error that its headline (printed just
    before) does not already say."""
    out = []
    for mode, e in modes.items():
        reason = e.get("reason") or (e.get("analysis_summary") or {}).get("error")
        first = reason.splitlines()[0] if reason else ""
        if first and first not in str(e.get("headline") or ""):
            out.append(f"{mode}: {first}")
    return out


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


def _against(call: Any, *args: Any) -> Any:
    """``call(*args)`` with :class:`~traceviz.collect.versions.AgainstError` as a usage error."""
    try:
        return call(*args)
    except versions.AgainstError as exc:
        raise UsageError(str(exc)) from None


def records_stacks(stack: bool | None, device: str, resumed: dict[str, Any] | None) -> bool:
    """Whether the modes' stacked traces are recorded: as ``--stack`` / ``--no-stack`` says;
    when neither was given, as the resumed run recorded it, else on a GPU only. The stacked
    trace serves the host-wait sources, the code the host ran while the GPU waited; a CPU run
    has no GPU to wait, and its stacked processes took 18 of the 46 s of ``profile
    workloads/elementwise.py --modes all`` on a 2-core VM (2026-11-28)."""
    if stack is not None:
        return stack
    if resumed is not None and isinstance(resumed.get("settings"), dict) \
            and isinstance(resumed["settings"].get("with_stack"), bool):
        return resumed["settings"]["with_stack"]
    return device == "cuda"


def run(
    workload: Path | None, modes: str, out: Path | None, force: bool, device: str,
    timeout: float, repeats: int | None, warmup: int | None, min_repeat_ms: float | None,
    timing_budget_s: float, stack: bool | None, strict: bool, nproc: int | None,
    resume: Path | None, against: Path | None = None,
) -> None:
    """``traceviz profile``'s run, with the command's options (see
    :func:`traceviz.cli.profile_cmd.profile`). ``stack`` ``None``: the stacked traces are
    recorded on a GPU only (:func:`records_stacks`)."""
    console = Console()
    try:
        selected = parse_modes(modes)
    except ModeListError as exc:
        raise UsageError(str(exc)) from None
    if timing_budget_s < 0:
        raise UsageError(f"--timing-budget-s must be >= 0, not {timing_budget_s}")
    if device not in ("auto", "cuda", "cpu"):
        raise UsageError(f"--device must be auto, cuda or cpu, not {device!r}")
    plan = None
    if resume is not None:
        plan = _resume_plan(resume, force, {
            "WORKLOAD": workload is not None, "--modes": modes != "all", "--out": out is not None,
            "--device": device != "auto", "--timeout": timeout != DEFAULT_TIMEOUT_S,
            "--repeats": repeats is not None, "--warmup": warmup is not None,
            "--min-repeat-ms": min_repeat_ms is not None,
            "--timing-budget-s": timing_budget_s != DEFAULT_TIMING_BUDGET_S,
            "--stack/--no-stack": stack is not None, "--nproc": nproc is not None,
            "--against": against is not None,
        })
        workload, selected = plan.workload, list(plan.modes)
        against = _against(versions.recorded_old, plan, force)
    elif workload is None:
        raise UsageError("give a WORKLOAD file, or --resume RUN_DIR")
    if against is not None and nproc:
        raise UsageError("--against times two versions in single-process modes; drop --nproc")
    if out is not None and plan is None:
        refuse_run_dir_over_inputs(out, [workload, *([against] if against else [])])
    if out is not None and plan is None:
        try:
            run_files.check_run_dir(out, force)
        except manifest.RunDirError as exc:
            raise OutputExistsError(str(exc)) from None
    started = manifest.utc_now()
    with (
        console.status("loading the workload and probing the environment…"),
        tempfile.TemporaryDirectory(prefix="traceviz-probe-") as probe_dir,
    ):
        code, probe = runner.run_probe(workload, Path(probe_dir) / "probe.json", PROBE_TIMEOUT_S)
    if code != 0 or "error" in probe:
        raise UsageError(probe.get("error", f"probe exited with code {code}"))
    old_probe = (_against(versions.probe_old, against, probe, PROBE_TIMEOUT_S) if against
                 else None)
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
    if nproc:
        from traceviz.collect.distributed import nproc_problem

        if (problem := nproc_problem(nproc, device, env)) is not None:
            raise UsageError(problem)
    run_dir = out or manifest.default_run_dir(probe["workload"]["name"], started)
    if plan is not None:
        run_dir = plan.run_dir
    else:
        try:
            run_dir = run_files.prepare_run_dir(run_dir, force)
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
        timing_budget_s=timing_budget_s,
        with_stack=records_stacks(stack, device, plan.record if plan is not None else None),
    )
    record = manifest.new_manifest(
        probe,
        {**settings.__dict__,
         "trace_schedule": {"wait": WAIT_STEPS, "warmup": WARMUP_STEPS, "active": ACTIVE_STEPS},
         "adjacent_windows": ADJACENT_WINDOWS,
         "warm_min_s": warm_min_s(device == "cuda"),
         "nproc": nproc},
        started,
    )
    old = None
    if plan is None:
        run_control.start_run(run_dir, record, selected, Path(workload))
        if against is not None and old_probe is not None:
            old = versions.start_old(run_dir, record, old_probe, against, selected, started)
    else:
        try:
            settings = runner.RunSettings.from_manifest(plan.record["settings"])
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{run_dir}: the manifest's settings lack {exc}") from None
        record = plan.record
        nproc = record["settings"].get("nproc")
        run_control.begin_resume(plan, started.isoformat(timespec="seconds"))
        if against is not None:
            old = versions.resume_old(plan, against, started.isoformat(timespec="seconds"))
    console.print(inert_text(probe["workload"]["name"], "bold") + ": "
                  + inert_text(probe["workload"]["description"]))
    console.print(inert_text(f"device {device} ({env.get('gpu') or 'CPU'}), torch "
                             f"{env['torch']}, run directory {run_dir}"))
    if old is not None:
        console.print(inert_text(f"against {old.workload} (the old version): its run in "
                                 f"{old.run_dir}"))
    try:
        with run_control.stop_signals():
            _run_modes(console, run_dir, record, selected, settings, probe, Path(workload),
                       nproc, old)
            if old is not None:
                write_run_report(old.run_dir, old.record)
            report, note = write_run_report(run_dir, record)
    except run_control.RunInterrupted as exc:
        run_control.record_interruption(run_dir, record, exc)
        if old is not None:
            run_control.record_interruption(old.run_dir, old.record, exc)
        console.print(f"{exc}; manifest: {run_dir / manifest.MANIFEST_NAME}; finish the run with "
                      f"`traceviz profile --resume {run_dir}`", markup=False, highlight=False)
        raise typer.Exit(exc.exit_code) from None
    console.print(display.profile_summary(record["modes"], console.width))
    if old is not None:
        console.print(display.against_summary(record["modes"], console.width))
    spent = display.time_spent(record["modes"])
    for line in [*notes(record["modes"]), *(["where the time went (s):"] if spent else []),
                 *(f"  {x}" for x in spent), *closing_lines(run_dir, report, note)]:
        console.print(inert_text(line))
    if strict and any(e["status"] in BAD_STATUSES for e in record["modes"].values()):
        raise typer.Exit(1)


def closing_lines(run_dir: Path, report: Path | None, note: str) -> list[str]:
    """The run's last lines: the manifest, and the report (once) or why there is none
    (``note``, from :func:`write_run_report`)."""
    where = f"report: {report}" if report is not None else note
    return [f"manifest: {run_dir / manifest.MANIFEST_NAME}", where]


def _run_modes(
    console: Console,
    run_dir: Path,
    record: dict[str, Any],
    selected: list[str],
    settings: runner.RunSettings,
    probe: dict[str, Any],
    workload: Path,
    nproc: int | None,
    old: versions.OldRun | None = None,
) -> None:
    """Run each selected mode, rewriting the manifest after each, then add the analyses.

    With ``old`` (``--against``), each mode then runs for the old version too, in its own run
    directory, and the two versions are timed against each other
    (:mod:`traceviz.collect.versions`)."""
    cuda = settings.device == "cuda"
    env = probe["environment"]
    with display.mode_progress(console, len(selected)) as progress:
        for mode in selected:
            reason = skip_reason(mode, cuda=cuda, triton=probe["triton_importable"],
                                 has_triton_step=probe["workload"]["has_triton_step"])
            if nproc and not reason:
                from traceviz.collect.distributed import UNSUPPORTED

                reason = UNSUPPORTED.get(mode)
            if old is not None and not reason:
                reason = old.skip_reason(mode, cuda=cuda, triton=probe["triton_importable"])
            if reason:
                record["modes"][mode] = manifest.mode_entry(status="skipped", reason=reason)
                if old is not None:
                    old.skip(mode, reason)
                progress.skip(mode, reason)
                manifest.write_manifest(run_dir, record)
                continue
            show = progress.start(mode)
            if nproc:
                from traceviz.collect.distributed import run_mode_ranks

                entry = run_mode_ranks(workload.resolve(), mode, run_dir, settings, env,
                                       nproc, show)
            else:
                entry = runner.run_mode(workload.resolve(), mode, run_dir, settings, env,
                                        show)
            if old is not None:
                entry["against"] = old.run_mode(workload.resolve(), mode, entry, run_dir,
                                                settings, env, show)
            record["modes"][mode] = manifest.mode_entry(**entry)
            progress.finish(entry["status"])
            manifest.write_manifest(run_dir, record)

    with console.status("analyzing traces…"):
        analysis.add_analysis_summaries(run_dir, record)
        manifest.write_manifest(run_dir, record)
        if old is not None:
            analysis.add_analysis_summaries(old.run_dir, old.record)
            manifest.write_manifest(old.run_dir, old.record)


def write_run_report(run_dir: Path, record: dict[str, Any]) -> tuple[Path | None, str]:
    """Write the comparison report into the run directory and note it, and each mode's
    headline, in the manifest.

    The one place ``profile`` produces its report: calls
    ``traceviz.report.compare_report.write_run_report(run_dir)`` when that exists.
    """
    report, note, headlines = analysis.write_comparison_report(run_dir)
    for mode, text in headlines.items():
        if mode in record["modes"]:
            record["modes"][mode]["headline"] = text
    if report is not None:
        record["report"] = str(report.relative_to(run_dir) if report.is_relative_to(run_dir)
                               else report)
        manifest.write_manifest(run_dir, record)
    return report, note

"""``traceviz profile WORKLOAD``: the command's options; the run itself is
:mod:`traceviz.cli.profile_run`, imported when the command runs (so that other commands do not
import the collection machinery)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from traceviz.cli.errors import user_errors
from traceviz.cli.profile_defaults import DEFAULT_TIMEOUT_S, DEFAULT_TIMING_BUDGET_S
from traceviz.cli.version import VersionOpt
from traceviz.collect.mode_names import ALL_MODES

_MODES_HELP = "'all' or a comma-separated list of: " + ", ".join(ALL_MODES)


@user_errors
def profile(
    workload: Annotated[
        Path | None,
        typer.Argument(help="Workload file (see workloads/README.md); omit with --resume."),
    ] = None,
    modes: Annotated[str, typer.Option("--modes", metavar="MODES", help=_MODES_HELP)] = "all",
    out: Annotated[
        Path | None, typer.Option("--out", metavar="RUN_DIR",
                                  help="Run directory (default runs/<workload>-<time>).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing run directory.")
    ] = False,
    device: Annotated[str, typer.Option("--device", metavar="auto|cuda|cpu",
                                        help="Where the modes run.")] = "auto",
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="Seconds each mode may take.")
    ] = DEFAULT_TIMEOUT_S,
    repeats: Annotated[
        int | None, typer.Option("--repeats", help="Timing repeats per mode.")
    ] = None,
    warmup: Annotated[
        int | None, typer.Option("--warmup", help="Warm-up steps before timing.")
    ] = None,
    min_repeat_ms: Annotated[
        float | None,
        typer.Option("--min-repeat-ms", metavar="MS",
                     help="Each timing repeat lasts at least this many ms."),
    ] = None,
    timing_budget_s: Annotated[
        float,
        typer.Option("--timing-budget-s", metavar="SECONDS",
                     help="Seconds per mode for timing it in alternation "
                     "with eager in one process (paired speed-up and its 95% CI); 0 turns "
                     "paired timing off."),
    ] = DEFAULT_TIMING_BUDGET_S,
    stack: Annotated[
        bool | None,
        typer.Option("--stack/--no-stack", show_default=False,
                     help="Also record each mode's trace with Python stacks, after its lean "
                     "trace, for the host-wait sources (the code the host ran while the GPU "
                     "waited). The verdicts read the lean trace (no stacks) either way. "
                     "\\[default: on a GPU; off on the CPU, where no GPU waits]")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict",
                     help="Exit 1 when a mode failed, mismatched, timed out or crashed."),
    ] = False,
    nproc: Annotated[
        int | None, typer.Option("--nproc", min=1, metavar="N",
                                 help="Run each mode on N ranks with "
                                 "torch.distributed (NCCL on CUDA, gloo on CPU); the workload "
                                 "needs make_model/make_batch/loss (workloads/ddp_mlp.py).")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", metavar="RUN_DIR",
                     help="Finish a stopped run directory: run only its modes that "
                     "did not finish, with its recorded settings (--force: even if the workload "
                     "file or the environment changed)."),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option("--against", metavar="OLD_WORKLOAD",
                     help="An older version of WORKLOAD (same inputs): each mode "
                     "also runs it, in a run of its own (RUN/old), and times the two versions "
                     "against each other in one process (ABBA pairs, CI); `traceviz report "
                     "RUN` leads with the per-mode old → new verdict."),
    ] = None,
    version: VersionOpt = False,
) -> None:
    """Profile WORKLOAD in eager / torch.compile / CUDA-graph / Triton modes and compare them."""
    from traceviz.cli.profile_run import run

    run(workload, modes, out, force, device, timeout, repeats, warmup, min_repeat_ms,
        timing_budget_s, stack, strict, nproc, resume, against)

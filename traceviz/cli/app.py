"""The ``traceviz`` typer application; commands live in their own modules."""

from __future__ import annotations

import atexit
import io
import os
import sys

import typer

from traceviz.cli.help_format import Command, Group
from traceviz.cli.version import VersionOpt
from traceviz.freed_memory import return_freed_memory

app = typer.Typer(
    name="traceviz",
    cls=Group,
    help="Evidence from PyTorch profiler traces: did torch.compile / CUDA graphs cut kernel "
    "count and launch overhead?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # commands inherit it
)


@app.callback()
def _root(version: VersionOpt = False) -> None:
    """traceviz: did torch.compile / CUDA graphs cut kernel count and launch overhead?"""


def main() -> None:
    """Console-script entry point. Once the command is done, its files written and closed, the
    process exits without tearing the interpreter down (as mypy does): the ``atexit`` handlers
    run and the output streams are flushed, but the modules and objects are not freed one by
    one, which took 0.25 s of every run (pandas, numpy and the trace tables). An error that is
    not a :class:`SystemExit` (a bug) still exits the usual way, with its traceback. Freed
    memory is returned to the system as it is freed (:mod:`traceviz.freed_memory`). Text
    the terminal cannot encode degrades (:func:`_replace_unencodable`)."""
    return_freed_memory()
    _replace_unencodable()
    try:
        app()
    except SystemExit as exc:
        _exit_now(exc.code)


def _replace_unencodable() -> None:
    """Write what stdout or stderr cannot encode (``PYTHONIOENCODING=ascii``, a C locale) as
    ``?`` instead of raising :class:`UnicodeEncodeError`: a stream whose error handler is
    ``strict`` is switched to ``replace`` (stderr's default, ``backslashreplace``, is kept).
    rich draws its tables with ASCII lines on such a stream."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="replace")


def _exit_now(code: object) -> None:
    """Exit with ``code`` as :class:`SystemExit` would (``None`` → 0, an int → itself, else
    printed to stderr → 1; 120 when stdout or stderr cannot be flushed, as CPython does), but
    without the interpreter's teardown."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream
            status = status or 120
    os._exit(status)

# Commands (each module keeps its heavy imports inside the command function).
from traceviz.cli import report_cmd  # noqa: E402

app.command("report", cls=Command)(report_cmd.report)
from traceviz.cli import profile_cmd  # noqa: E402

app.command("profile", cls=Command)(profile_cmd.profile)
from traceviz.cli import compare_cmd  # noqa: E402

app.command("compare", cls=Command)(compare_cmd.compare)
app.command("check", cls=Command)(compare_cmd.check)
from traceviz.cli import kernel_diff_cmd  # noqa: E402

app.command("kernel-diff", cls=Command)(kernel_diff_cmd.kernel_diff)
from traceviz.cli import export_cmd  # noqa: E402

app.command("export", cls=Command)(export_cmd.export)

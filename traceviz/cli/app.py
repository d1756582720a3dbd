"""The ``traceviz`` typer application; commands live in their own modules."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="traceviz",
    help="Evidence from PyTorch profiler traces: did torch.compile / CUDA graphs cut kernel "
    "count and launch overhead?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """traceviz: did torch.compile / CUDA graphs cut kernel count and launch overhead?"""


def main() -> None:
    """Console-script entry point."""
    app()

# Commands (each module keeps its heavy imports inside the command function).
from traceviz.cli import report_cmd  # noqa: E402

app.command("report")(report_cmd.report)
from traceviz.cli import profile_cmd  # noqa: E402

app.command("profile")(profile_cmd.profile)
from traceviz.cli import compare_cmd  # noqa: E402

app.command("compare")(compare_cmd.compare)
app.command("check")(compare_cmd.check)
from traceviz.cli import export_cmd  # noqa: E402

app.command("export")(export_cmd.export)

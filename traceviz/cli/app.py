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


def main() -> None:
    """Console-script entry point."""
    app()

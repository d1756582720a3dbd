"""``--version`` / ``-V`` on the app and on every command: prints ``traceviz X.Y.Z``, exits 0."""

from __future__ import annotations

from typing import Annotated

import typer

from traceviz._version import __version__


def _print_version(value: bool) -> None:
    if value:
        print(f"traceviz {__version__}")
        raise typer.Exit()


VersionOpt = Annotated[bool, typer.Option(
    "--version", "-V", is_eager=True, expose_value=True, callback=_print_version,
    help="Print traceviz's version and exit.")]

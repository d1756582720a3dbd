"""``--version`` / ``-V`` on the app and on every command: prints ``traceviz X.Y.Z`` and, on a
second line, which trace decoder this install has (the C scanner, or msgspec alone); exits 0."""

from __future__ import annotations

from typing import Annotated

import typer

from traceviz._version import __version__


def decoder_line() -> str:
    """Which decoder reads traces here (:func:`traceviz.trace.scanned.decoder`)."""
    from traceviz.trace.scanned import decoder

    return f"trace decoder: {decoder()}"


def _print_version(value: bool) -> None:
    if value:
        print(f"traceviz {__version__}\n{decoder_line()}")
        raise typer.Exit()


VersionOpt = Annotated[bool, typer.Option(
    "--version", "-V", is_eager=True, expose_value=True, callback=_print_version,
    help="Print traceviz's version and exit.")]

"""How ``--help`` names arguments and option values: in words a user types, never Python types.

typer shows a value's Python type where no metavar is given (``<bool>`` beside a flag,
``<list[Path]>`` beside an argument, ``<str>``, ``<float>``) and writes usage lines as
``{TARGETS...}...`` or ``{a} {b}``. :class:`Command` and :class:`Group` (the ``cls`` of every
command and of the app) change that, as the help is drawn:

* a flag (``--force``, ``--stack/--no-stack``, ``-h``) shows no value;
* an option without a metavar gets one from its type: ``N`` (whole number), ``NUMBER``,
  ``PATH``, ``TEXT``, or its choices ``a|b|c``; explicit metavars (``MODE``, ``SECONDS``) win;
* an argument is named by its metavar (else its name in capitals, ``...`` after it when it
  repeats) and shows no type; the usage line lists it as ``NAME``, ``[NAME]`` when optional,
  ``NAME...`` when it repeats.
"""

from __future__ import annotations

from typing import Any

import click
from typer.core import TyperCommand, TyperGroup

#: What typer's type label (between ``<`` and ``>``) becomes as a metavar.
_TYPE_WORDS = {"bool": "", "str": "TEXT", "int": "N", "int range": "N", "float": "NUMBER",
               "float range": "NUMBER", "path": "PATH", "Path": "PATH"}


def _value_word(label: str) -> str:
    """A metavar for typer's type label (``path``, ``list[str]``, ``html|json``)."""
    if label.startswith("list[") and label.endswith("]"):
        word = _value_word(label[5:-1])
        return f"{word}..." if word else ""
    return _TYPE_WORDS.get(label, label)


def _no_type(ctx: click.Context) -> None:
    """An argument's type column: empty (its name and help say what it is)."""


def humanize(param: Any, ctx: click.Context) -> None:
    """Give ``param`` (a typer option or argument) the metavar the help shows (module doc)."""
    if param.param_type_name == "argument":
        if param.metavar is None:
            param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
        param.display_type_rich = _no_type
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""
    elif param.metavar is None and hasattr(param, "display_type"):
        param.metavar = _value_word(param.display_type(ctx).strip("<>"))


def _usage_name(param: Any) -> str:
    """An argument in the usage line: ``NAME``, ``[NAME]`` (optional), ``NAME...`` (repeats)."""
    name = param.metavar or param.name.upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if param.required else f"[{name}]"


class Command(TyperCommand):
    """A typer command whose help names values in words (module doc)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        for p in params:
            humanize(p, ctx)
        return params

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [_usage_name(p) for p in self.get_params(ctx)
                         if p.param_type_name == "argument"]


class Group(TyperGroup):
    """The app's group: its own options (``--version``, ``--help``) as :class:`Command`'s."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        for p in params:
            humanize(p, ctx)
        return params

"""Strings from a trace made inert for the terminal and Markdown.

A name from a trace (kernel, CPU op, host-wait source, step, stream or thread) or from a run's
manifest (workload, mode) is data: it must neither drive the terminal nor be read as markup.

* :func:`visible` writes every control character as a visible escape: C0 (``\\x00``–``\\x1f``),
  DEL, C1 (``\\x80``–``\\x9f``) as ``\\xNN``, the Unicode line and paragraph separators and
  the bidirectional embeddings, overrides and isolates as ``\\uNNNN``. So ESC / OSC sequences,
  BEL, CR and backspaces never reach a terminal raw (they could clear the screen, set the
  window title or hide text) and a name cannot break a line or reorder what is shown.
* :func:`inert_text` is a rich :class:`~rich.text.Text` of the visible form: rich never parses
  it as markup, so ``[/bold]evil_op`` and ``[param|cuda]`` print as written.
* :func:`inert_markup` is for the places rich reads a ``str`` as markup (table titles,
  captions, column headers): the visible form with markup escaped.

Every text and Markdown renderer goes through these; HTML escapes with :func:`html.escape`,
and JSON keeps names exactly as the trace has them.
"""

from __future__ import annotations

import re

from rich.markup import escape
from rich.text import Text

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with each control character written as its escape (``"\\x1b[2J"`` →
    ``"\\\\x1b[2J"``, shown as ``\\x1b[2J``); text without any is returned as it is."""
    return _CONTROL.sub(_escaped, text)


def inert_text(text: str, style: str = "") -> Text:
    """``text`` as a rich :class:`~rich.text.Text` in ``style``: visible, never markup."""
    return Text(visible(text), style=style)


def inert_markup(text: str) -> str:
    """``text`` for a rich slot that parses markup: visible, with markup escaped."""
    return escape(visible(text))

"""No command module (``traceviz/cli/*_cmd.py``) imports another: what two commands share
(options, output writing, the comparison report) lives in helper modules below them
(``traceviz/cli/options.py``, ``outputs.py``, ``comparison_output.py``) or in
``traceviz/report/``.

Every import counts, at module level, inside a function or under ``if TYPE_CHECKING:``:
``import traceviz.cli.x_cmd``, ``from traceviz.cli.x_cmd import …``, ``from traceviz.cli
import x_cmd`` and their relative forms.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parent.parent / "traceviz" / "cli"
PACKAGE = "traceviz.cli"


def _is_command(module: str) -> bool:
    """``traceviz.cli.<name>_cmd`` (or a name inside it)."""
    parts = module.split(".")
    return len(parts) >= 3 and parts[:2] == ["traceviz", "cli"] and parts[2].endswith("_cmd")


def command_imports(source: str, own: str) -> set[str]:
    """The ``traceviz.cli.*_cmd`` modules that the module ``own`` (a dotted name inside
    :data:`PACKAGE`) imports in ``source``, itself excluded."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(".".join(a.name.split(".")[:3]) for a in node.names
                         if _is_command(a.name))
        elif isinstance(node, ast.ImportFrom):
            base = (PACKAGE + (f".{node.module}" if node.module else "") if node.level == 1
                    else node.module or "")
            if _is_command(base):
                found.add(".".join(base.split(".")[:3]))
            elif base == PACKAGE:
                found.update(f"{PACKAGE}.{a.name}" for a in node.names
                             if _is_command(f"{PACKAGE}.{a.name}"))
    found.discard(own)
    return found


def test_the_finder_sees_every_form_of_importing_a_command() -> None:
    source = """
import traceviz.cli.a_cmd
from traceviz.cli.b_cmd import x
from traceviz.cli import c_cmd, errors
from .d_cmd import y
from . import e_cmd
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from traceviz.cli.f_cmd import Z
def late():
    from traceviz.cli.g_cmd import w
from traceviz.cli.own_cmd import helper
from traceviz.cli.options import Format
"""
    assert command_imports(source, "traceviz.cli.own_cmd") == {
        f"traceviz.cli.{n}_cmd" for n in "abcdefg"}


def test_no_command_module_imports_another_command_module() -> None:
    commands = sorted(CLI.glob("*_cmd.py"))
    assert len(commands) >= 5  # the glob saw the command modules
    offending = {path.name: sorted(imported) for path in commands
                 if (imported := command_imports(path.read_text(encoding="utf-8"),
                                                 f"{PACKAGE}.{path.stem}"))}
    assert offending == {}

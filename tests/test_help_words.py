"""``--help`` names values in words: no Python type (``<bool>``, ``<list[Path]>``, ``<str>``)
beside an option or argument, usage lines as ``traceviz report [OPTIONS] TARGET...``, no raw
reStructuredText, one line per command in the app's command list, ``-V`` on every command."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.main import get_command

from traceviz.cli.app import app

COMMANDS = ("report", "profile", "compare", "check", "kernel-diff", "export")
#: A type label typer writes where an option or argument has no metavar.
PYTHON_TYPE = re.compile(r"<(bool|str|int|float|path|Path|list\[[^\]]*\]|[a-z]+ range)>")


def help_of(*where: str) -> str:
    r = subprocess.run([sys.executable, "-m", "traceviz", *where, "--help"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("where", [(), *((c,) for c in COMMANDS)])
def test_help_shows_no_python_type(where: tuple[str, ...]) -> None:
    text = help_of(*where)
    assert not PYTHON_TYPE.search(text), PYTHON_TYPE.findall(text)


@pytest.mark.parametrize(("command", "arguments"), [
    ("report", "TARGET..."), ("profile", "[WORKLOAD]"), ("compare", "INPUT..."),
    ("check", "INPUT..."), ("kernel-diff", "A B"), ("export", "TRACE"),
])
def test_usage_lines_name_arguments_plainly(command: str, arguments: str) -> None:
    usage = next(line for line in help_of(command).splitlines() if "Usage:" in line).strip()
    assert usage.endswith(f" {command} [OPTIONS] {arguments}"), usage


def test_value_options_show_a_word_and_flags_show_none() -> None:
    text = " ".join(help_of("profile").split())
    for option, word in (("--device", "auto|cuda|cpu"), ("--timeout", "SECONDS"),
                         ("--out", "RUN_DIR"), ("--warmup", "N")):
        assert f"{option} {word} " in text, option
    assert re.search(r"--force\s+Replace", text)


def test_no_help_shows_raw_restructured_text() -> None:
    for command in COMMANDS:
        assert "``" not in help_of(command), command


def test_every_command_summary_is_one_line_in_the_app_help() -> None:
    group = get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        summary = (cmd.help or "").split("\n\n", 1)[0]
        assert "\n" not in summary, (name, summary)


def test_check_help_documents_allow_skipped_and_the_skipped_status() -> None:
    text = " ".join(help_of("check").split())
    assert "--allow-skipped" in text and "SKIPPED" in text


def test_kernel_diff_prints_the_version() -> None:
    from traceviz._version import __version__

    r = subprocess.run([sys.executable, "-m", "traceviz", "kernel-diff", "-V"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == f"traceviz {__version__}", r.stderr

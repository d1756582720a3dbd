"""The CLI's first-hour edges: ``-h`` and ``--version`` everywhere, help text whose brackets
survive rich markup, ``--expect`` statuses in any case."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from traceviz._version import __version__
from traceviz.cli.compare_cmd import parse_expectation

COMMANDS = ("report", "profile", "compare", "check", "kernel-diff", "export")


def traceviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceviz", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "250"})


@pytest.mark.parametrize("where", [(), *((c,) for c in COMMANDS)])
def test_version_prints_the_version_on_the_app_and_every_command(where: tuple[str, ...]):
    for flag in ("--version", "-V"):
        r = traceviz(*where, flag)
        lines = r.stdout.splitlines()
        assert r.returncode == 0 and lines[0] == f"traceviz {__version__}", r.stderr
        assert lines[1].startswith("trace decoder: "), r.stdout


@pytest.mark.parametrize("where", [(), *((c,) for c in COMMANDS)])
def test_dash_h_is_help_on_the_app_and_every_command(where: tuple[str, ...]):
    r = traceviz(*where, "-h")
    assert r.returncode == 0 and "Usage:" in r.stdout and "--version" in r.stdout, r.stderr


def test_hta_help_names_the_extra_to_install():
    r = traceviz("report", "--help")
    assert "pip install 'traceviz[hta]'" in " ".join(r.stdout.split()), r.stdout


def test_no_option_help_loses_a_bracketed_word_to_rich_markup():
    from rich.text import Text
    from typer.main import get_command

    from traceviz.cli.app import app

    group = get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        for p in cmd.params:
            text = getattr(p, "help", None) or ""
            shown = Text.from_markup(text).plain
            assert shown == text.replace("\\[", "["), (name, p.name, text, shown)


@pytest.mark.parametrize(("text", "want"), [
    ("compile:speed=win", ("compile", "speed", "=", "WIN")),
    ("compile:Speed=Win", ("compile", "speed", "=", "WIN")),
    ("cudagraph:launch!=regression", ("cudagraph", "launch", "!=", "REGRESSION")),
    ("compile:fusion=no_win", ("compile", "fusion", "=", "NO_WIN")),
    ("compile:fusion=no-win", ("compile", "fusion", "=", "NO_WIN")),
    ("compile:fusion=NO_WIN", ("compile", "fusion", "=", "NO_WIN")),
])
def test_expectations_read_kind_and_status_in_any_case(text: str, want: tuple[str, ...]):
    assert parse_expectation(text) == want

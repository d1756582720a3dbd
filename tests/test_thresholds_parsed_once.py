"""Each command parses ``--threshold`` / ``--thresholds-file`` once and passes the parsed
:class:`~traceviz.analyze.verdicts.Thresholds` down: counted on a committed run directory,
through the typer app in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from traceviz.analyze import verdicts
from traceviz.cli.app import app

RUN_DIR = Path(__file__).resolve().parent / "data" / "h200" / "elementwise"


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The arguments of every call of :func:`~traceviz.analyze.verdicts.parse_thresholds`."""
    calls: list[tuple[object, ...]] = []
    parse = verdicts.parse_thresholds

    def counted(*args: object, **kwargs: object) -> verdicts.Thresholds:
        calls.append(args)
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verdicts, "parse_thresholds", counted)
    return calls


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_run_directory_report_parses_its_thresholds_once(
        command: str, parse_calls: list[tuple[object, ...]]) -> None:
    result = CliRunner().invoke(app, [command, str(RUN_DIR), "-f", "json", "-j", "1",
                                      "-t", "min_speedup=0.07"])
    assert result.exit_code == 0, result.output
    assert '"min_speedup": 0.07' in result.stdout  # the parsed value reached the verdicts
    assert parse_calls == [(["min_speedup=0.07"], None)]


def test_check_parses_its_thresholds_once(parse_calls: list[tuple[object, ...]]) -> None:
    result = CliRunner().invoke(app, ["check", str(RUN_DIR), "-e", "compile:fusion=WIN",
                                      "-j", "1", "-t", "min_speedup=0.07"])
    assert result.exit_code in (0, 3), result.output  # 3: the expectation is not met
    assert parse_calls == [(["min_speedup=0.07"], None)]

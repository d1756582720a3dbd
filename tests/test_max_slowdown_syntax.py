"""`check --against --max-slowdown` takes a percentage or a fraction below 1 (issue 37, item
13): a bare ``5`` could mean 5 % or 500 % and is refused (exit 2) with both unambiguous forms."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from traceviz.analyze.review.run_gate import parse_slowdown
from traceviz.cli.app import app


@pytest.mark.parametrize(("text", "value"), [("5%", 0.05), ("0.05", 0.05), ("0", 0.0),
                                             ("0.5%", 0.005), ("250%", 2.5), (" 0.999 ", 0.999)])
def test_a_percentage_or_a_fraction_below_one_is_accepted(text: str, value: float) -> None:
    assert parse_slowdown(text) == pytest.approx(value)


@pytest.mark.parametrize(("text", "forms"), [("5", "write 5% or 0.05"),
                                             ("1", "write 1% or 0.01"),
                                             ("150", "write 150%")])
def test_a_bare_number_of_one_or_more_is_refused_as_ambiguous(text: str, forms: str) -> None:
    with pytest.raises(ValueError, match="is ambiguous") as err:
        parse_slowdown(text)
    assert forms in str(err.value)


def test_check_refuses_max_slowdown_5_as_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["check", str(tmp_path), "--against", str(tmp_path),
                                   "--max-slowdown", "5"])
    assert res.exit_code == 2
    assert ("--max-slowdown '5' is ambiguous (5 % or 500 %?): a bare number is a fraction "
            "below 1; for 5 % write 5% or 0.05") in res.output

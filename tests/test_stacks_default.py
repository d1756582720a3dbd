"""Whether ``profile`` records the stacked traces (``traceviz/cli/profile_run.py``,
``records_stacks``): as ``--stack`` / ``--no-stack`` says; when neither is given, as a resumed
run recorded it, else on a GPU only (the host-wait sources they serve are GPU waits)."""

from __future__ import annotations

import pytest

from traceviz.cli.profile_run import records_stacks


@pytest.mark.parametrize(("device", "expected"), [("cuda", True), ("cpu", False)])
def test_without_a_flag_stacks_are_recorded_on_a_gpu_only(device: str, expected: bool) -> None:
    assert records_stacks(None, device, None) is expected


@pytest.mark.parametrize("device", ["cuda", "cpu"])
@pytest.mark.parametrize("flag", [True, False])
def test_a_flag_decides_on_any_device(flag: bool, device: str) -> None:
    assert records_stacks(flag, device, None) is flag
    assert records_stacks(flag, device, {"settings": {"with_stack": not flag}}) is flag


@pytest.mark.parametrize("recorded", [True, False])
def test_a_resumed_run_keeps_what_it_recorded(recorded: bool) -> None:
    for device in ("cuda", "cpu"):
        assert records_stacks(None, device, {"settings": {"with_stack": recorded}}) is recorded


def test_a_resumed_run_without_the_setting_falls_back_to_the_device() -> None:
    assert records_stacks(None, "cpu", {"settings": {}}) is False
    assert records_stacks(None, "cuda", {}) is True


def test_the_help_says_the_default() -> None:
    from typer.testing import CliRunner

    from traceviz.cli.app import app

    out = CliRunner().invoke(app, ["profile", "--help"], env={"COLUMNS": "200"}).output
    assert "[default: on a GPU; off on the CPU, where no GPU waits]" in " ".join(out.split())

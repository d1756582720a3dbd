"""The worker count is an argument passed from the CLI's ``--workers`` and the API's
``workers=`` down to the analysis, never process-wide state: every command hands its count to
every analysis it runs, a call's count does not outlive the call, and
:mod:`traceviz.trace.parallel` holds no worker setting."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import traceviz
from tests.synthetic_runs import standard_run
from tests.test_compare_ranks import ddp_rank_dirs
from traceviz.cli.app import app
from traceviz.errors import UsageError
from traceviz.report.jsonout import analysis_to_dict
from traceviz.trace import parallel
from traceviz.trace.parallel import usable_cpus, worker_count

# ``traceviz.analyze`` is also the API's function: reach the module itself.
analysis_module = importlib.import_module("traceviz.analyze.analysis")
GPU = Path(__file__).resolve().parent / "data" / "gpu"
EAGER = GPU / "elementwise_eager.pt.trace.json.gz"
COMPILED = GPU / "elementwise_compile.pt.trace.json.gz"
#: A count no default gives here: seeing it proves the argument arrived.
ASKED = usable_cpus() + 1
#: The module-level data of :mod:`traceviz.trace.parallel`: constants, and the task a
#: ForkedMap's workers inherit (set only while one is being constructed).
PARALLEL_DATA = {"WORKER_MEMORY_BYTES", "PROGRESS_S", "START_WAIT_S", "_TASK"}


@pytest.fixture
def requested(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int | None, int]]:
    """(``workers`` asked for, count resolved) of every analysis run meanwhile: the real
    :func:`~traceviz.trace.parallel.worker_count`, recorded."""
    seen: list[tuple[int | None, int]] = []

    def recorded(asked: int | None = None) -> int:
        got = worker_count(asked)
        seen.append((asked, got))
        return got

    monkeypatch.setattr(analysis_module, "worker_count", recorded)
    return seen


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return standard_run(tmp_path_factory.mktemp("run"))


def parallel_data() -> dict[str, Any]:
    """The module-level values of :mod:`traceviz.trace.parallel` that are plain data (numbers,
    strings, containers, ``None``: what a setting would be), dunders aside."""
    return {name: value for name, value in vars(parallel).items()
            if not name.startswith("__")
            and isinstance(value, int | float | str | bytes | tuple | list | dict | set
                           | type(None))}


def test_parallel_module_holds_no_worker_setting() -> None:
    assert not hasattr(parallel, "set_workers")
    assert set(parallel_data()) == PARALLEL_DATA
    assert parallel._TASK is None
    assert worker_count() == worker_count(None) == usable_cpus()
    assert worker_count(3) == 3


def commands(run: Path, ranks: tuple[Path, Path] | None) -> dict[str, list[str]]:
    """Every command path that analyses traces, by name."""
    out = {
        "report trace": ["report", str(EAGER), "-f", "json"],
        "report run dir": ["report", str(run), "-f", "json"],
        "compare traces": ["compare", str(EAGER), str(COMPILED), "-f", "json"],
        "compare two runs": ["compare", str(run), str(run), "-f", "json"],
        "check expect": ["check", str(run), "-e", "compile:fusion=WIN"],
        "check against": ["check", str(run), "--against", str(run)],
        "kernel-diff": ["kernel-diff", str(EAGER), str(COMPILED), "-f", "json"],
    }
    if ranks is not None:
        out["compare rank dirs"] = ["compare", str(ranks[0]), str(ranks[1]), "-f", "json"]
    return out


@pytest.fixture(scope="module")
def rank_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path] | None:
    """Two directories of two real rank traces each (``reports/ddp_mlp``), else ``None``."""
    return ddp_rank_dirs(tmp_path_factory.mktemp("ddp"))


@pytest.mark.parametrize("name", ["report trace", "report run dir", "compare traces",
                                  "compare two runs", "check expect", "check against",
                                  "kernel-diff", "compare rank dirs"])
def test_cli_workers_reach_every_analysis_and_leave_no_trace_behind(
        name: str, run_dir: Path, rank_dirs: tuple[Path, Path] | None,
        requested: list[tuple[int | None, int]]) -> None:
    args = commands(run_dir, rank_dirs).get(name)
    if args is None:
        pytest.skip("reports/ddp_mlp absent")
    before = parallel_data()
    res = CliRunner().invoke(app, [*args, "--workers", str(ASKED)])
    assert res.exit_code == 0, res.output
    assert requested and requested == [(ASKED, ASKED)] * len(requested)
    # The count was the command's only: the next caller without one gets the default.
    assert parallel_data() == before
    assert worker_count() == usable_cpus()
    requested.clear()
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert requested and requested == [(None, usable_cpus())] * len(requested)


def test_two_analyses_with_different_counts_agree_and_the_second_keeps_its_own(
        requested: list[tuple[int | None, int]]) -> None:
    trace = traceviz.load(EAGER)
    first = traceviz.analyze(trace, workers=1)
    second = traceviz.analyze(trace)
    third = traceviz.analyze(trace, workers=ASKED)
    assert requested == [(1, 1), (None, usable_cpus()), (ASKED, ASKED)]
    assert analysis_to_dict(trace, first) == analysis_to_dict(trace, second)
    assert analysis_to_dict(trace, first) == analysis_to_dict(trace, third)
    assert worker_count() == usable_cpus()


def test_api_loaders_pass_workers_to_every_analysis(
        run_dir: Path, requested: list[tuple[int | None, int]]) -> None:
    run = traceviz.load_run(run_dir, workers=ASKED)
    traced = len(run.traced_modes)
    assert traced >= 3 and requested == [(ASKED, ASKED)] * traced
    requested.clear()
    assert traceviz.compare(EAGER, COMPILED, workers=ASKED).modes == ("elementwise_eager",
                                                                      "elementwise_compile")
    assert requested == [(ASKED, ASKED)] * 2
    requested.clear()
    traceviz.Comparison.from_paths([run_dir], workers=ASKED)
    assert requested == [(ASKED, ASKED)] * traced
    requested.clear()
    traceviz.Analysis.from_trace(traceviz.load(EAGER), workers=ASKED)
    traceviz.compare(EAGER, COMPILED)
    assert requested == [(ASKED, ASKED), (None, usable_cpus()), (None, usable_cpus())]


@pytest.mark.parametrize("bad", [0, -1, True, 2.0])
def test_api_refuses_a_bad_count_before_reading_anything(bad: Any, tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    for call in (lambda: traceviz.load_run(missing, workers=bad),
                 lambda: traceviz.compare(missing, missing, workers=bad),
                 lambda: traceviz.Comparison.from_paths([missing, missing], workers=bad)):
        with pytest.raises(UsageError, match="workers must be a positive integer"):
            call()

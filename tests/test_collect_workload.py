"""Loading workload files and the errors for files without the interface."""

from pathlib import Path

import pytest

from traceviz.collect.workload import DEFAULT_ATOL, WorkloadError, load_workload

HERE = Path(__file__).parent / "workloads_for_tests"
BUNDLED = sorted((Path(__file__).parents[1] / "workloads").glob("*.py"))


def test_a_valid_workload_loads_with_defaults():
    w = load_workload(HERE / "tiny.py")
    assert w.name == "tiny"
    assert w.description.startswith("tiny pointwise")
    assert w.triton_step is None
    assert w.static_inputs == ()
    assert w.float64_reference is True
    assert w.atol == DEFAULT_ATOL or w.atol == 1e-5


def test_a_file_without_the_interface_names_every_missing_piece():
    with pytest.raises(WorkloadError) as err:
        load_workload(HERE / "not_a_workload.py")
    message = str(err.value)
    assert "DESCRIPTION" in message
    assert "step()" in message
    assert "make_inputs" not in message


def test_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(WorkloadError, match="no such workload file"):
        load_workload(tmp_path / "nope.py")


def test_an_import_error_in_the_workload_is_reported(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import definitely_not_a_module_xyz\n")
    with pytest.raises(WorkloadError, match="ModuleNotFoundError"):
        load_workload(bad)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_workload_has_the_interface(path):
    w = load_workload(path)
    assert w.description and "\n" not in w.description

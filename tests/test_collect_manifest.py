"""Run directories are never overwritten by accident; mode entries keep stable keys."""

import pytest

from traceviz.collect.manifest import MODE_KEYS, RunDirError, mode_entry, write_manifest
from traceviz.collect.run_files import prepare_run_dir

#: The smallest manifest that validates as a traceviz run's.
RUN = {"schema": 3, "created": "2026-11-27T00:00:00+00:00", "workload": {}, "settings": {},
       "modes": {"eager": {"status": "ok"}}}


def test_a_new_directory_is_created(tmp_path):
    run = prepare_run_dir(tmp_path / "a" / "run", force=False)
    assert run.is_dir()


def test_an_existing_run_is_refused_without_force_and_replaced_with_it(tmp_path):
    run = prepare_run_dir(tmp_path / "run", force=False)
    write_manifest(run, RUN)
    (run / "eager.pt.trace.json.gz").write_bytes(b"old")
    with pytest.raises(RunDirError, match="--force"):
        prepare_run_dir(run, force=False)
    prepare_run_dir(run, force=True)
    assert list(run.iterdir()) == []


def test_force_never_replaces_a_folder_that_is_not_a_run(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(RunDirError, match="not an earlier traceviz run directory"):
        prepare_run_dir(tmp_path, force=True)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_mode_entries_have_every_key():
    entry = mode_entry(status="skipped", reason="no CUDA")
    assert tuple(entry)[: len(MODE_KEYS)] == MODE_KEYS
    assert entry["timing"] is None

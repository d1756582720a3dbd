"""Where the environment turns bytecode writing off (``PYTHONDONTWRITEBYTECODE``), the profile
children keep their compiled bytecode in traceviz's cache instead (``traceviz/collect/
runner.py``, ``child_env``): nothing is written beside the sources, and a child no longer
compiles torch's sources afresh each time. A user's own ``PYTHONPYCACHEPREFIX`` stands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from traceviz.collect.runner import bytecode_cache_dir, child_env


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    return tmp_path / "cache"


@pytest.mark.parametrize("device", ["cpu", "cuda", None])
def test_with_bytecode_off_children_write_it_into_traceviz_cache(
        cache_home: Path, monkeypatch: pytest.MonkeyPatch, device: str | None) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = child_env(device)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] == str(cache_home / "traceviz" / "pycache")
    assert bytecode_cache_dir() == cache_home / "traceviz" / "pycache"


def test_the_cache_is_under_home_without_xdg_cache_home(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert bytecode_cache_dir() == tmp_path / ".cache" / "traceviz" / "pycache"


def test_a_users_own_prefix_and_setting_stand(cache_home: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/somewhere/else")
    env = child_env("cuda")
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTHONPYCACHEPREFIX"] == "/somewhere/else"


def test_with_bytecode_on_nothing_changes(cache_home: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    assert "PYTHONPYCACHEPREFIX" not in child_env("cuda")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "")  # empty: Python writes bytecode
    assert "PYTHONPYCACHEPREFIX" not in child_env("cuda")


def test_a_child_caches_an_imported_module_in_the_cache_and_not_beside_it(
        cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cached_module.py").write_text("VALUE = 42\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    cmd = [sys.executable, "-c", "import cached_module; print(cached_module.VALUE)"]
    for _ in range(2):  # the second child reads what the first wrote
        got = subprocess.run(cmd, cwd=src, env=child_env("cuda"), capture_output=True,
                             text=True, check=True)
        assert got.stdout.strip() == "42"
    assert not (src / "__pycache__").exists()
    cached = list((cache_home / "traceviz" / "pycache").rglob("cached_module.*.pyc"))
    assert len(cached) == 1
    assert cached[0].parent.parts[-2:] == src.parts[-2:]  # the source's path, mirrored

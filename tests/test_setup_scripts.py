"""``scripts/install-chromium`` (step 4 of ``scripts/setup``) and ``scripts/test``, run for real
with fake ``apt-get`` / ``sudo`` / ``id`` first on PATH, so every branch is exercised on any
machine without installing anything."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "scripts" / "install-chromium"
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


def executable(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Path]:
    """fake bin dir (apt-get records its calls; installs create the browser), browser path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    browser = tmp_path / "usr" / "bin" / "chromium"
    calls = tmp_path / "apt-calls"
    executable(bin_dir / "apt-get", f"""
echo "$DEBIAN_FRONTEND $*" >> {calls}
if [ -n "$FAKE_APT_FAIL" ]; then echo "E: Unable to locate package chromium"; exit 100; fi
if [ "$1" = install ]; then
  mkdir -p {browser.parent}
  printf '#!/bin/sh\\necho "Chromium 150.0 fake"\\n' > {browser}; chmod +x {browser}
fi
""")
    executable(bin_dir / "id", 'echo "${FAKE_UID:-1000}"\n')
    executable(bin_dir / "sudo", '[ "$1" = -n ] && shift\n'
               '[ -n "$FAKE_SUDO_OK" ] || { echo "sudo: a password is required" >&2; exit 1; }\n'
               'exec "$@"\n')
    return {"bin": bin_dir, "browser": browser, "calls": calls, "log": tmp_path / "apt.log"}


def install(fake: dict[str, Path], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(INSTALL), str(fake["log"])], capture_output=True, text=True, timeout=60,
        check=False, stdin=subprocess.DEVNULL,
        env={"PATH": f"{fake['bin']}:/usr/bin:/bin", "TRACEVIZ_CHROMIUM_PATH": str(fake["browser"]),
             **env},
    )


def apt_calls(fake: dict[str, Path]) -> list[str]:
    return fake["calls"].read_text().splitlines() if fake["calls"].exists() else []


def test_a_present_browser_is_left_alone(fake):
    fake["browser"].parent.mkdir(parents=True)
    executable(fake["browser"], 'echo "Chromium 149.0 here"\n')
    proc = install(fake)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[setup] chromium: present (Chromium 149.0 here)\n"
    assert apt_calls(fake) == []


def test_root_installs_debian_chromium_non_interactively(fake):
    proc = install(fake, FAKE_UID="0")
    assert proc.returncode == 0, proc.stderr
    assert apt_calls(fake) == ["noninteractive update -q", "noninteractive install -y -q chromium"]
    assert "installing Debian's chromium: apt-get update && apt-get install -y chromium" in (
        proc.stdout)
    assert proc.stdout.endswith("[setup] chromium: installed (Chromium 150.0 fake)\n")


def test_a_user_with_password_less_sudo_installs_through_sudo(fake):
    proc = install(fake, FAKE_SUDO_OK="1")
    assert proc.returncode == 0, proc.stderr
    assert "sudo -n apt-get update" in proc.stdout
    assert apt_calls(fake)[-1] == "noninteractive install -y -q chromium"
    assert fake["browser"].is_file()


def test_a_user_who_may_not_install_is_told_what_to_run(fake):
    proc = install(fake)
    assert proc.returncode == 1
    assert apt_calls(fake) == []
    assert proc.stderr.count("\n") == 1
    assert "sudo sh -c 'apt-get update && apt-get install -y chromium'" in proc.stderr
    assert "--no-browser" in proc.stderr


def test_a_failed_apt_install_shows_the_log_tail_and_fails(fake):
    proc = install(fake, FAKE_UID="0", FAKE_APT_FAIL="1")
    assert proc.returncode == 1
    assert "E: Unable to locate package chromium" in proc.stderr
    assert f"installing chromium failed (full log: {fake['log']})" in proc.stderr


def fake_checkout(tmp_path: Path, browser_state: str | None) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", repo / "scripts" / "test")
    if browser_state is not None:
        (repo / ".venv" / "bin").mkdir(parents=True)
        executable(repo / ".venv" / "bin" / "python",
                   'echo "require=$TRACEVIZ_REQUIRE_BROWSER args=$*"\n')
        if browser_state:
            (repo / ".venv" / "traceviz-browser").write_text(browser_state + "\n")
    return repo


@pytest.mark.parametrize(("state", "env", "expected"), [
    ("browser=require", {}, "require=1"),
    ("", {}, "require=1"),
    ("browser=skip", {}, "require=0"),
    ("browser=skip", {"TRACEVIZ_REQUIRE_BROWSER": "1"}, "require=1"),
])
def test_the_test_command_requires_the_browser_unless_setup_skipped_it(tmp_path, state, env,
                                                                       expected):
    repo = fake_checkout(tmp_path, state)
    base = {k: v for k, v in os.environ.items() if k != "TRACEVIZ_REQUIRE_BROWSER"}
    proc = subprocess.run([BASH, str(repo / "scripts" / "test"), "-q", "tests/x.py"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**base, **env})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{expected} args=-m pytest -n auto --durations=15 -m not slow and "
                           "not calibration -q tests/x.py\n")


@pytest.mark.parametrize("how", [["--all"], []])
def test_all_runs_every_tier_and_the_default_only_the_fast_one(tmp_path, how):
    repo = fake_checkout(tmp_path, "browser=require")
    env = {k: v for k, v in os.environ.items() if k != "TRACEVIZ_TEST_ALL"}
    proc = subprocess.run([BASH, str(repo / "scripts" / "test"), *how, "-q"],
                          capture_output=True, text=True, timeout=60, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    if how:
        assert proc.stdout == (
            "require=1 args=-m pytest -n auto --durations=15 -m not calibration -q\n"
            "require=1 args=-m pytest -p no:xdist --durations=5 -m calibration -q\n")
        assert proc.stderr == ("[test] every tier: fast and slow, then calibration alone\n"
                               "[test] the calibration tier, alone on the machine\n")
    else:
        assert proc.stdout == ("require=1 args=-m pytest -n auto --durations=15 -m not slow "
                               "and not calibration -q\n")


@pytest.mark.parametrize(("status", "rc"), [(5, 0), (1, 1), (0, 0)])
def test_all_passes_when_no_calibration_test_was_asked_for_and_fails_when_one_fails(
        tmp_path, status, rc):
    """pytest's 5 (nothing collected: the arguments named no calibration test) is a pass."""
    repo = fake_checkout(tmp_path, "browser=require")
    executable(repo / ".venv" / "bin" / "python",
               f'case "$*" in *"-m calibration"*) exit {status};; esac\n')
    proc = subprocess.run([BASH, str(repo / "scripts" / "test"), "--all", "tests/x.py"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == rc, proc.stderr


def test_the_test_command_without_setup_says_to_run_it(tmp_path):
    repo = fake_checkout(tmp_path, None)
    proc = subprocess.run([BASH, str(repo / "scripts" / "test")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr == "[test] error: no .venv here; run scripts/setup first\n"

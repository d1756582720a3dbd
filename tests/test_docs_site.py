"""The documentation site (``mkdocs.yml``) builds with ``mkdocs build --strict``: every link,
image and anchor resolves, the repository files docs/ links to are carried into the site
(``scripts/mkdocs_hooks.py``), and the API reference documents every name of
``traceviz.__all__``. Skipped when the docs packages (the ``test`` extra) are not installed."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import traceviz

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocstrings_handlers.python")

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.S)
IMG = re.compile(r'<img[^>]*\ssrc="([^"]+)"')


def _headings(page: str) -> list[str]:
    """The text of each heading, tags dropped (the first word is the documented object)."""
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).split())
            for m in HEADING.finditer(page)]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-6000:]}"
    return out


def test_strict_build_writes_every_page(site: Path) -> None:
    for page in ("index", "guide", "metrics", "comparison", "architecture", "api", "hta",
                 "reliability", "gallery", "reference", "repo/reports/index",
                 "repo/workloads/index", "repo/benchmarks/index", "repo/CHANGELOG"):
        assert (site / f"{page}.html").is_file(), page


def test_reference_documents_every_public_name(site: Path) -> None:
    documented = {h.split()[0] for h in _headings((site / "reference.html").read_text())}
    missing = [name for name in traceviz.__all__ if f"traceviz.{name}" not in documented]
    assert not missing, f"docs/reference.md does not document {missing}"


def test_gallery_shows_the_committed_screenshots(site: Path) -> None:
    page = (site / "gallery.html").read_text()
    shown = set(IMG.findall(page))
    committed = {f"repo/{p.relative_to(ROOT).as_posix()}"
                 for pattern in ("reports/*/report.png", "reports/*/*.ranks.png")
                 for p in ROOT.glob(pattern)}
    assert committed <= shown, f"gallery.md does not show {sorted(committed - shown)}"
    for src in shown:
        assert (site / src).is_file(), src

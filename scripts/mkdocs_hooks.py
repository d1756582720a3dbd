"""mkdocs hooks (``hooks:`` in mkdocs.yml): the documentation site carries the repository files
that docs/ links to, without copying them into docs/.

The pages in docs/ are also read on GitHub, so they link to repository files outside docs/ by
relative paths (``../reports/README.md``, ``../reports/decode_loop/report.png``,
``../benchmarks/results/….json``). mkdocs only knows the files under docs/, so in strict mode
each of those links would be an error, and on the site a broken link or image. Here:

* ``on_files`` adds the repository files matched by :data:`CARRIED` to the site under
  ``repo/<path in the repository>``: Markdown files become pages (they can sit in the nav),
  everything else is copied into the built site as it is, at build time. Nothing is duplicated
  in git.
* a Markdown tree processor, run before mkdocs' own link resolution, rewrites each relative
  ``href``/``src`` that leaves its page's folder for another part of the repository into the
  site's path of that file: ``docs/<x>`` → ``<x>``, the root ``README.md`` → the home page
  ``index.md``, anything else → ``repo/<path>``. mkdocs then validates the rewritten link as
  usual, so a link to a repository file the site does not carry (or that does not exist) still
  fails ``mkdocs build --strict``, as does a broken anchor.
* ``on_page_content`` drops the Sphinx roles (``:class:``, ``:func:`` …) that the docstrings put
  before a literal: mkdocstrings renders the literal as code and would print the role as text.
"""

from __future__ import annotations

import logging
import posixpath
import re
import xml.etree.ElementTree as etree
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

REPO = Path(__file__).resolve().parents[1]

# The site folder that mirrors the carried repository files.
SITE_DIR = "repo"

# Repository files the site carries (globs relative to the repository root). Each must match at
# least one file, so a stale entry fails the build instead of silently carrying nothing.
CARRIED = (
    "CHANGELOG.md",
    "reports/README.md",
    "reports/*/report.html",
    "reports/*/report.png",
    "reports/*/*.ranks.html",
    "reports/*/*.ranks.png",
    "workloads/README.md",
    "benchmarks/README.md",
    "benchmarks/results/*",
)

# A Sphinx role left in front of a rendered literal: ":class:<code>Analysis</code>".
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|obj|data|exc|const):(?=<code>)")

log = logging.getLogger("mkdocs.hooks.traceviz")  # under "mkdocs": --strict counts its warnings

# The page being rendered, as its repository path, and the site's files (set in
# on_page_markdown, read by the tree processor: mkdocs renders one page at a time).
_page_repo_path: str | None = None
_files: Files | None = None


def _repo_path_of(file: File, docs_dir: Path) -> str:
    """Where a site file lives in the repository, as a POSIX path from the repository root."""
    if file.src_uri.startswith(SITE_DIR + "/"):
        return file.src_uri[len(SITE_DIR) + 1:]
    return (docs_dir.relative_to(REPO) / file.src_uri).as_posix()


def _site_uri_of(repo_path: str, docs_prefix: str) -> str:
    """The site's source URI of a repository file (whether or not the site carries it)."""
    if repo_path.startswith(docs_prefix + "/"):
        return repo_path[len(docs_prefix) + 1:]
    if repo_path == "README.md":
        return "index.md"
    return f"{SITE_DIR}/{repo_path}"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for pattern in CARRIED:
        matches = sorted(p for p in REPO.glob(pattern) if p.is_file())
        if not matches:
            raise ValueError(f"mkdocs_hooks.CARRIED: {pattern!r} matches no file in {REPO}")
        for path in matches:
            uri = f"{SITE_DIR}/{path.relative_to(REPO).as_posix()}"
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    global _page_repo_path, _files
    _page_repo_path = _repo_path_of(page.file, Path(config.docs_dir).resolve())
    _files = files
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return _ROLE.sub("", html)


class _RepoLinks(Treeprocessor):
    def __init__(self, md: Markdown, docs_prefix: str) -> None:
        super().__init__(md)
        self.docs_prefix = docs_prefix

    def rewrite(self, url: str) -> str:
        scheme, netloc, path, query, anchor = urlsplit(url)
        if scheme or netloc or not path or path.startswith("/") or _page_repo_path is None:
            return url
        page_dir = posixpath.dirname(_page_repo_path)
        target = posixpath.normpath(posixpath.join(page_dir, path))
        if target.startswith("../"):
            return url  # outside the repository: mkdocs reports it
        site_page = _site_uri_of(_page_repo_path, self.docs_prefix)
        site_target = _site_uri_of(target, self.docs_prefix)
        if site_target == posixpath.normpath(posixpath.join(posixpath.dirname(site_page), path)):
            return url  # inside the site's tree already: mkdocs resolves it
        if _files is not None and _files.get_file_from_path(site_target) is None:
            log.warning("%s links to '%s' (the repository's %s), which the site does not carry: "
                        "add it to CARRIED in scripts/mkdocs_hooks.py", _page_repo_path, url,
                        target)
            return url
        new = posixpath.relpath(site_target, posixpath.dirname(site_page) or ".")
        if path.endswith("/") and not new.endswith("/"):
            new += "/"
        return url if new == path else urlunsplit(("", "", new, query, anchor))

    def run(self, root: etree.Element) -> None:
        for el in root.iter():
            for attr in ("href", "src"):
                value = el.get(attr)
                if value:
                    el.set(attr, self.rewrite(value))


class _RepoLinksExtension(Extension):
    def __init__(self, docs_prefix: str) -> None:
        super().__init__()
        self.docs_prefix = docs_prefix

    def extendMarkdown(self, md: Markdown) -> None:  # the name is Markdown's API
        # Above mkdocs' own link resolution (the "relpath" processor, priority 0).
        md.treeprocessors.register(_RepoLinks(md, self.docs_prefix), "traceviz_repo_links", 1)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    docs_prefix = Path(config.docs_dir).resolve().relative_to(REPO).as_posix()
    config.markdown_extensions.append(_RepoLinksExtension(docs_prefix))
    return config

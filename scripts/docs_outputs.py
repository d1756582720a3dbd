"""Regenerate the example outputs shown in README.md and docs/*.md from committed data.

``python -m scripts.docs_outputs`` rewrites every marked block in place; ``--check`` rewrites
nothing, prints a unified diff of each stale block and exits 1 (``tests/test_docs_outputs.py``
runs it). Lives under ``scripts/`` beside ``mkdocs_hooks.py``: it maintains the documentation,
is not part of the installed package, and runs the real ``traceviz`` CLI in a subprocess (the
worktree's code, through ``PYTHONPATH``), so what a block shows is what a user would see.

A block is a fenced code block (or raw Markdown, e.g. a table) between two HTML comments,
invisible on GitHub and on the mkdocs site::

    <!-- output: $ traceviz report reports/elementwise --format text | head 40 -->
    ```text
    ...regenerated...
    ```
    <!-- /output -->

The spec is split like a shell line (``shlex``) into stages separated by ``|``; nothing runs
through a shell. The first stage is the command:

* ``traceviz ARGS…``: the CLI (``python -m traceviz``); ``python ARGS…``: this interpreter;
  ``python above``: the code of the nearest ```` ```python ```` block above the marker;
  ``profile-summary RUN_DIR WIDTH``: what ``traceviz profile`` printed when the run ended (its
  summary table and headline lines), re-rendered from ``RUN_DIR/manifest.json`` at ``WIDTH``
  columns by the CLI's own :func:`traceviz.cli.display.profile_summary`.
* ``NAME=VALUE`` words before the command set environment variables; every command runs in
  the repository root with ``COLUMNS=100`` (unless set), stdout and stderr together.
* A leading ``$`` echoes the command (``$ traceviz …``) as the block's first output line.
* An argument starting with ``/tmp/`` names a file in a private temporary folder; the folder's
  path is shown as ``/tmp`` in the output.

Then the filters, applied in order to the output lines (trailing spaces are always stripped):

* ``head N`` / ``tail N``: the first / last N lines, with a ``…`` line where lines were cut;
* ``from REGEX``: from the first line matching REGEX on (``…`` first when lines were cut);
* ``section REGEX``: from the first line matching REGEX up to the next blank line (a table);
* ``grep REGEX`` / ``grep-v REGEX``: the lines that match / do not match;
* ``sub REGEX REPLACEMENT``: ``re.sub`` on each line;
* ``json-each PATH TEMPLATE``: parse the output as JSON, take the value at the dot-separated
  PATH (a list, or a mapping whose values are taken), one ``TEMPLATE.format(**item)`` line per
  item;
* ``json-format TEMPLATE``: parse the output as JSON and fill one ``TEMPLATE`` (prose, with
  the numbers a page states about a run): a field is a path of ``[key]`` indexes, e.g.
  ``{verdicts[compile/speed][evidence][speedup]:.2f}``; a list item with a ``mode`` field is
  also indexed by its mode, and with ``mode`` and ``kind`` by ``mode/kind``; a format spec may
  start with ``*N;`` (``N`` may be negative) to multiply first
  (``{rows[eager][gpu_busy_ms]:*1000;.1f}``: ms → µs);
  the filled text is wrapped to 100 columns (a paragraph starting ``- `` as a list item);
* ``exit N``: the command must exit with status N (default 0);
* ``keep-head N`` / ``keep-tail N``: keep the block's current first / last N lines — a recorded
  transcript around the regenerated part (e.g. ``traceviz profile``'s live progress display,
  which no run directory holds). They are the only lines not produced here.

Recorded transcripts that cannot be produced from committed data (a GPU run's progress, a
generated benchmark input) are marked ``<!-- recorded: WHERE FROM -->`` … ``<!-- /recorded -->``
instead; the test requires every ``$ traceviz`` transcript to be inside one marker or the other.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import string
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose blocks are regenerated (relative to ROOT).
DEFAULT_PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob(
    "*.md")))
#: The terminal width every command sees unless its spec sets COLUMNS.
COLUMNS = "100"
#: The width ``json-format`` wraps its prose to (blank lines in the template part paragraphs).
WRAP = 100
BLOCK = re.compile(r"^<!-- output: (?P<spec>.+?) -->\n(?P<body>.*?)^<!-- /output -->$",
                   re.M | re.S)
FENCE = re.compile(r"\A(?P<open>(?P<ticks>```+)[^\n]*\n)(?P<content>.*?)^(?P=ticks)[ \t]*\n\Z",
                   re.M | re.S)
RECORDED = re.compile(r"^<!-- recorded: .+? -->\n.*?^<!-- /recorded -->$", re.M | re.S)
ANY_FENCE = re.compile(r"^(?P<ticks>```+)[^\n]*\n(?P<content>.*?)^(?P=ticks)[ \t]*$", re.M | re.S)
#: A fenced block opening with this line is a transcript of a traceviz command.
TRANSCRIPT = re.compile(r"\$ .*\btraceviz\b")
PYTHON_FENCE = re.compile(r"^```python\n(?P<code>.*?)^```\s*$", re.M | re.S)
ELLIPSIS = "…"


class SpecError(ValueError):
    """A marker that cannot be run as written, or whose command failed."""


@dataclass(frozen=True)
class Block:
    """One marked block: where it is, what it says to run, what it holds now."""

    page: str
    line: int  # 1-based line of the opening marker
    spec: str
    start: int  # character offsets of the body in the page's text
    end: int
    body: str


def find_blocks(page: str, text: str) -> list[Block]:
    """The marked blocks of one page, in order (a marker quoted inside a fenced block is an
    example, not a block)."""
    fences = [(m.start(), m.end()) for m in ANY_FENCE.finditer(text)]
    return [Block(page, text.count("\n", 0, m.start()) + 1, m.group("spec"), m.start("body"),
                  m.end("body"), m.group("body")) for m in BLOCK.finditer(text)
            if not any(a <= m.start() < b for a, b in fences)]


def _stages(spec: str) -> list[list[str]]:
    words = shlex.split(spec)
    stages: list[list[str]] = [[]]
    for w in words:
        if w == "|":
            stages.append([])
        else:
            stages[-1].append(w)
    if any(not s for s in stages):
        raise SpecError(f"empty stage in {spec!r}")
    return stages


def _int(stage: list[str]) -> int:
    if len(stage) != 2 or not stage[1].isdigit():
        raise SpecError(f"{stage[0]} takes one count: {' '.join(stage)!r}")
    return int(stage[1])


def _json_each(text: str, path: str, template: str) -> list[str]:
    value = json.loads(text)
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
    items = list(value.values()) if isinstance(value, dict) else list(value)
    return [template.format(**item) for item in items]


class _Keyed(list):  # type: ignore[type-arg]
    """A JSON list whose items are also found by their ``mode`` (or ``mode/kind``) field."""

    def __getitem__(self, key):  # type: ignore[no-untyped-def,override]
        if isinstance(key, (int, slice)):
            return _keyed(super().__getitem__(key))
        for item in self:
            if isinstance(item, dict) and key in (item.get("mode"),
                                                  f"{item.get('mode')}/{item.get('kind')}"):
                return _keyed(item)
        raise SpecError(f"json-format: no item {key!r}")


def _keyed(value: object) -> object:
    if isinstance(value, list):
        return _Keyed(value)
    if isinstance(value, dict):
        return {k: _keyed(v) for k, v in value.items()}
    return value


class _FactsFormatter(string.Formatter):
    """``str.format`` with a ``*N;`` prefix in a format spec: multiply by N first."""

    def format_field(self, value: object, format_spec: str) -> str:
        scale = re.match(r"\*(-?[0-9.]+);", format_spec)
        if scale:
            value, format_spec = float(value) * float(scale[1]), format_spec[scale.end():]
        return super().format_field(value, format_spec)


def _json_format(text: str, template: str) -> list[str]:
    doc = _keyed(json.loads(text))
    if not isinstance(doc, dict):
        raise SpecError("json-format: the output is not a JSON object")
    try:
        filled = _FactsFormatter().format(template, **doc)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise SpecError(f"json-format: {exc!r} in {template!r}") from exc
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", filled.strip()):
        text = " ".join(paragraph.split())
        lines += [*([""] if lines else []), *textwrap.wrap(
            text, WRAP, subsequent_indent="  " if text.startswith("- ") else "",
            break_long_words=False, break_on_hyphens=False)]
    return lines


def apply_filter(lines: list[str], stage: list[str]) -> list[str]:
    """One filter stage (``head``, ``tail``, ``from``, ``section``, ``grep``, ``grep-v``,
    ``sub``, ``json-each``, ``json-format``) on the output lines."""
    name, args = stage[0], stage[1:]
    if name == "head":
        n = _int(stage)
        return lines if len(lines) <= n else [*lines[:n], ELLIPSIS]
    if name == "tail":
        n = _int(stage)
        return lines if len(lines) <= n else [ELLIPSIS, *lines[len(lines) - n:]]
    if name in ("from", "section", "grep", "grep-v") and len(args) != 1:
        raise SpecError(f"{name} takes one regular expression: {' '.join(stage)!r}")
    if name == "from":
        pattern = re.compile(args[0])
        hit = next((i for i, s in enumerate(lines) if pattern.search(s)), None)
        if hit is None:
            raise SpecError(f"from: no line matches {args[0]!r}")
        return lines[hit:] if hit == 0 else [ELLIPSIS, *lines[hit:]]
    if name == "section":
        pattern = re.compile(args[0])
        hit = next((i for i, s in enumerate(lines) if pattern.search(s)), None)
        if hit is None:
            raise SpecError(f"section: no line matches {args[0]!r}")
        end = next((i for i in range(hit, len(lines)) if not lines[i].strip()), len(lines))
        return lines[hit:end]
    if name == "grep":
        return [s for s in lines if re.search(args[0], s)]
    if name == "grep-v":
        return [s for s in lines if not re.search(args[0], s)]
    if name == "sub":
        if len(args) != 2:
            raise SpecError(f"sub takes REGEX REPLACEMENT: {' '.join(stage)!r}")
        return [re.sub(args[0], args[1], s) for s in lines]
    if name == "json-each":
        if len(args) != 2:
            raise SpecError(f"json-each takes PATH TEMPLATE: {' '.join(stage)!r}")
        return _json_each("\n".join(lines), args[0], args[1])
    if name == "json-format":
        if len(args) != 1:
            raise SpecError(f"json-format takes one TEMPLATE: {' '.join(stage)!r}")
        return _json_format("\n".join(lines), args[0])
    raise SpecError(f"unknown filter {name!r}")


def _python_above(text: str, before: int) -> str:
    blocks = list(PYTHON_FENCE.finditer(text, 0, before))
    if not blocks:
        raise SpecError("python above: no ```python block above the marker")
    return blocks[-1].group("code")


def _profile_summary(args: list[str]) -> str:
    if len(args) != 2 or not args[1].isdigit():
        raise SpecError("profile-summary takes RUN_DIR WIDTH")
    import io

    from rich.console import Console

    from traceviz.cli.display import profile_summary

    manifest = json.loads((ROOT / args[0] / "manifest.json").read_text(encoding="utf-8"))
    width = int(args[1])
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(profile_summary(manifest["modes"], width))
    return console.file.getvalue()  # type: ignore[attr-defined]


#: Outputs of the commands run so far in this process (the same command may feed two blocks).
_RUN: dict[tuple[str, ...], tuple[str, int]] = {}


def run_command(words: list[str], text: str, before: int, tmp: Path) -> tuple[str, int]:
    """Run the spec's command (env words, then the command); its output and exit status."""
    key = tuple(words)
    if key not in _RUN or key[-1:] == ("above",):
        _RUN[key] = _run(list(words), text, before, tmp)
    return _RUN[key]


def _run(words: list[str], text: str, before: int, tmp: Path) -> tuple[str, int]:
    env = {**os.environ, "COLUMNS": COLUMNS, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    if not words:
        raise SpecError("no command")
    command, args = words[0], [str(tmp) + a[4:] if a.startswith("/tmp/") else a
                               for a in words[1:]]
    if command == "profile-summary":
        return _profile_summary(args), 0
    if command == "traceviz":
        argv = [sys.executable, "-m", "traceviz", *args]
    elif command == "python" and args == ["above"]:
        code = _python_above(text, before).replace("/tmp/", f"{tmp}/")
        argv = [sys.executable, "-c", code]
    elif command == "python":
        argv = [sys.executable, *args]
    else:
        raise SpecError(f"unknown command {command!r} (traceviz, python, profile-summary)")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300, check=False)
    return proc.stdout.replace(str(tmp), "/tmp"), proc.returncode


def render(block: Block, text: str) -> str:
    """The block's body as the spec produces it now."""
    spec = block.spec
    echo = spec.startswith("$ ")
    stages = _stages(spec[2:] if echo else spec)
    command, filters = stages[0], stages[1:]
    with tempfile.TemporaryDirectory(prefix="docs_outputs.") as tmp:
        out, status = run_command(list(command), text, block.start, Path(tmp))
    expected = next((_int(f) for f in filters if f[0] == "exit"), 0)
    if status != expected:
        raise SpecError(f"{block.page}:{block.line}: exit status {status}, expected {expected}"
                        f" ({spec}):\n{out[-3000:]}")
    lines = [s.rstrip() for s in out.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    keep_head = keep_tail = 0
    for f in filters:
        if f[0] == "keep-head":
            keep_head = _int(f)
        elif f[0] == "keep-tail":
            keep_tail = _int(f)
        elif f[0] != "exit":
            lines = apply_filter(lines, f)
    if echo:
        lines.insert(0, "$ " + shlex.join(command))
    fence = FENCE.match(block.body)
    old = [s.rstrip() for s in (fence.group("content") if fence else block.body.strip("\n"))
           .splitlines()]
    if keep_head + keep_tail > len(old):
        raise SpecError(f"{block.page}:{block.line}: keep-head/keep-tail exceed the block")
    lines = old[:keep_head] + lines + (old[len(old) - keep_tail:] if keep_tail else [])
    content = "".join(s + "\n" for s in lines)
    # Raw Markdown (a table) stands apart from the markers by a blank line each side, or the
    # Markdown parser would take it for part of the HTML comment's block.
    return fence.group("open") + content + fence.group("ticks") + "\n" if fence else (
        "\n" + content + "\n")


def unmarked_transcripts(text: str) -> list[int]:
    """The lines of fenced blocks opening with ``$ … traceviz …`` that are neither regenerated
    (``output``) nor marked ``recorded``."""
    marked = [(m.start(), m.end()) for m in (*BLOCK.finditer(text), *RECORDED.finditer(text))]
    return [text.count("\n", 0, m.start()) + 1 for m in ANY_FENCE.finditer(text)
            if TRANSCRIPT.match(m.group("content").split("\n", 1)[0])
            and not any(a <= m.start() < b for a, b in marked)]


def regenerate(page: str, text: str) -> str:
    """The page with every marked block regenerated."""
    out, at = [], 0
    for block in find_blocks(page, text):
        out += [text[at:block.start], render(block, text)]
        at = block.end
    return "".join([*out, text[at:]])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.docs_outputs",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="Markdown files (default: README.md docs/*.md)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; print a diff of each stale block and exit 1")
    ns = parser.parse_args(argv)
    stale = 0
    for page in ns.pages or DEFAULT_PAGES:
        path = Path(page) if Path(page).is_absolute() else ROOT / page
        text = path.read_text(encoding="utf-8")
        try:
            new = regenerate(page, text)
        except SpecError as exc:
            print(f"docs_outputs: {exc}", file=sys.stderr)
            return 2
        for line in unmarked_transcripts(text):
            stale += 1
            print(f"{page}:{line}: a traceviz transcript outside <!-- output: … --> and "
                  "<!-- recorded: … --> markers", file=sys.stderr)
        if new == text:
            continue
        if ns.check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                text.splitlines(keepends=True), new.splitlines(keepends=True),
                f"{page} (committed)", f"{page} (regenerated)"))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {page}")
    if stale:
        print(f"docs_outputs: {stale} stale or unmarked block(s); regenerate with "
              "`python -m scripts.docs_outputs`, mark recorded transcripts", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

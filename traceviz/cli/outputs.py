"""Where a command's rendered report goes: ``-o FILE``, standard output, or the command's
default HTML file (:func:`output_path`), written atomically with a note on stderr
(:func:`emit`)."""

from __future__ import annotations

import sys
from pathlib import Path

from traceviz.publish import is_stdout


def output_path(fmt: str, out: Path | None, default_html: Path) -> Path | None:
    """Where :func:`emit` writes: ``out``, else ``default_html`` for HTML; ``None``: stdout
    (``-o -`` too).
    Commands refuse an unusable one before any work
    (:func:`~traceviz.output_guard.preflight`), not after loading a big trace;
    :func:`emit` checks again, atomically."""
    if is_stdout(out):
        return None
    return out if out is not None else default_html if fmt == "html" else None


def emit(payload: str, fmt: str, out: Path | None, default_html: Path, force: bool) -> None:
    """Write ``payload`` to ``out`` (HTML defaults to ``default_html``; others to stdout) and
    say on stderr where it went (its size in KiB) and what to open next."""
    from traceviz.report.output import write_atomic

    path = output_path(fmt, out, default_html)
    if path is None:
        sys.stdout.write(payload)
        return
    written = write_atomic(path, payload, force=force)
    hint = {"html": "open it in a browser", "md": "paste it into a pull-request comment",
            "json": "read it with jq or Python"}.get(fmt, "view it with less -R")
    print(f"wrote {written} ({len(payload.encode()) / 1024:,.0f} KiB); {hint}: "
          f"{written.resolve().as_uri() if fmt == 'html' else written}", file=sys.stderr)

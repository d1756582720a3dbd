"""Category ``options``: option files and the environment.

``--thresholds-file`` as a FIFO, a directory, non-UTF-8 bytes, a missing file, a file with no
read permission, a dangling or looping symlink, a device node, and files whose contents are
wrong (invalid TOML, unknown names, NaN, strings, out-of-range values); ``--max-slowdown`` as
``5`` (5 % or 500 %? must be refused naming the option), ``5%``, ``0.05``, ``lots`` …; other
option values (``--max-memory``, ``-j``, ``-t``); ``PYTHONIOENCODING=ascii`` with text output;
``COLUMNS`` of 20, 1, 0 and ``abc``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.adversarial import fixtures as fx
from benchmarks.adversarial.expect import exits, names
from benchmarks.adversarial.harness import Case, Plan, Step

CATEGORY = "options"

#: Subjects: name → (setup writing the inputs in the work folder, argv).
SUBJECTS: dict[str, tuple[Callable[[Path], object], tuple[str, ...]]] = {
    "report-trace": (lambda w: fx.trace(w / "t.pt.trace.json.gz"),
                     ("report", "t.pt.trace.json.gz")),
    "report-run": (lambda w: fx.run_dir(w / "run"), ("report", "run")),
    "compare": (lambda w: (fx.trace(w / "a.pt.trace.json.gz"),
                           fx.compiled_trace(w / "b.pt.trace.json.gz")),
                ("compare", "a.pt.trace.json.gz", "b.pt.trace.json.gz")),
    "check": (lambda w: fx.run_dir(w / "run"), ("check", "run", "--expect", "compile:fusion=WIN")),
    "kernel-diff": (lambda w: (fx.trace(w / "a.pt.trace.json.gz"),
                               fx.compiled_trace(w / "b.pt.trace.json.gz")),
                    ("kernel-diff", "a.pt.trace.json.gz", "b.pt.trace.json.gz")),
}
#: The subjects that take ``--thresholds-file`` and ``-f``.
THRESHOLD_SUBJECTS = ("report-trace", "report-run", "compare", "check")
FORMATTED = ("report-trace", "report-run", "compare", "kernel-diff")


# --- thresholds files -------------------------------------------------------------------------


def _th_fifo(w: Path) -> str:
    fx.fifo(w / "th.toml")
    return "th.toml"


def _th_dir(w: Path) -> str:
    (w / "th.toml").mkdir()
    return "th.toml"


def _th_bytes(data: bytes, name: str, w: Path) -> str:
    (w / name).write_bytes(data)
    return name


def _th_unreadable(w: Path) -> str:
    fx.thresholds_file(w / "th.toml").chmod(0)
    return "th.toml"


def _th_link(target: str, w: Path) -> str:
    os.symlink(target, w / "th.toml")
    return "th.toml"


def _th_device(w: Path) -> str | None:
    return "th.toml" if fx.null_device(w / "th.toml") else None


def _th_missing(_w: Path) -> str:
    return "missing.toml"


N = fx.THRESHOLD_NAME
THRESHOLD_FILES: dict[str, Callable[[Path], str | None]] = {
    "fifo": _th_fifo,
    "directory": _th_dir,
    "non-utf8": partial(_th_bytes, b"[thresholds]\n" + N.encode() + b" = 0.05 # \xff\xfe\x80\n",
                        "th.toml"),
    "non-utf8-json": partial(_th_bytes, b'{"\xff\xfe": 0.05}', "th.json"),
    "missing": _th_missing,
    "no-permission": _th_unreadable,
    "dangling-link": partial(_th_link, "nowhere.toml"),
    "link-loop": partial(_th_link, "th.toml"),
    "device": _th_device,
    "invalid-toml": partial(_th_bytes, b"[thresholds\nmin_speedup = = 1\n", "th.toml"),
    "invalid-json": partial(_th_bytes, b'{"min_speedup": ', "th.json"),
    "unknown-name": partial(_th_bytes, b"[thresholds]\nno_such_threshold = 0.1\n", "th.toml"),
    "nan-value": partial(_th_bytes, f"[thresholds]\n{N} = nan\n".encode(), "th.toml"),
    "string-value": partial(_th_bytes, f'[thresholds]\n{N} = "lots"\n'.encode(), "th.toml"),
    "negative-value": partial(_th_bytes, f"[thresholds]\n{N} = -1.0\n".encode(), "th.toml"),
    "json-array": partial(_th_bytes, b"[0.05]", "th.json"),
    "empty": partial(_th_bytes, b"", "th.toml"),
    "huge": partial(_th_bytes, b"# " + b"x" * (8 << 20) + b"\n", "th.toml"),
}

#: Thresholds files that may be accepted (no thresholds, or readable by root whatever the mode).
ACCEPTED_FILES = frozenset({"empty", "huge", "device", "no-permission"})


def _build_thresholds(subject: str, kind: str, root: Path) -> Plan:
    w = root / "work"
    setup, argv = SUBJECTS[subject]
    setup(w)
    path = THRESHOLD_FILES[kind](w)
    if path is None:
        return Plan([], skip="mknod of a character device is not permitted here")
    fmt = ("-f", "json") if subject != "check" else ()
    refused = kind not in ACCEPTED_FILES
    return Plan([Step((*argv, *fmt, "--thresholds-file", path))],
                expect=exits(1, 2) if refused else None)


# --- option values ----------------------------------------------------------------------------


#: --max-slowdown value → expected exit codes (2: refused as usage) and whether a refusal
#: must name the option.
MAX_SLOWDOWN = {"5": (2,), "5%": (0, 3), "0.05": (0, 3), "lots": (2,), "-5%": (2,),
                "500%": (0, 3), "1": (2,), "0": (0, 3), "nan": (2,), "": (2,), "5 %": (0, 2, 3),
                "inf": (2,), "1e400": (2,)}


def _build_slowdown(value: str, root: Path) -> Plan:
    w = root / "work"
    fx.paired_run(w / "base")
    fx.paired_run(w / "run")
    codes = MAX_SLOWDOWN[value]
    return Plan([Step(("check", "run", "--against", "base", "--max-slowdown", value))],
                named=names(r"max-slowdown") if codes == (2,) else None,
                expect=exits(*codes))


#: (subject, extra argv, expected exit codes) for option values that are usage errors.
USAGE = {
    "max-memory-12XB": ("report-trace", ("--max-memory", "12XB"), (2,)),
    "max-memory-0": ("report-trace", ("--max-memory", "0"), (1, 2)),
    "max-memory-negative": ("report-trace", ("--max-memory", "-1GB"), (2,)),
    "workers-0": ("report-trace", ("-j", "0"), (2,)),
    "threshold-unknown": ("compare", ("-t", "bogus=1"), (2,)),
    "threshold-not-number": ("compare", ("-t", f"{N}=abc"), (2,)),
    "threshold-nan": ("compare", ("-t", f"{N}=nan"), (2,)),
    "threshold-no-equals": ("check", ("-t", N), (2,)),
    "format-xml": ("report-trace", ("-f", "xml"), (2,)),
    "expect-garbage": ("check", ("--expect", "compile:fusion~WIN"), (2,)),
    "expect-unknown-mode": ("check", ("--expect", "nomode:fusion=WIN"), (1, 2, 3)),
    "max-step-rows-negative": ("report-trace", ("--max-step-rows", "-1"), (2,)),
    "min-change-negative": ("kernel-diff", ("--min-change", "-0.5"), (2,)),
}


def _build_usage(label: str, root: Path) -> Plan:
    subject, extra, codes = USAGE[label]
    setup, argv = SUBJECTS[subject]
    setup(root / "work")
    fmt = ("-f", "json") if subject in FORMATTED and "-f" not in extra else ()
    return Plan([Step((*argv, *fmt, *extra))], expect=exits(*codes))


# --- environment ------------------------------------------------------------------------------


def _build_env(subject: str, fmt: str, env: dict[str, str], root: Path) -> Plan:
    setup, argv = SUBJECTS[subject]
    setup(root / "work")
    extra = ("-f", fmt) if subject in FORMATTED else ()
    return Plan([Step((*argv, *extra), env=env)], expect=exits(0))


def _build_env_markup(env: dict[str, str], root: Path) -> Plan:
    """A trace whose names hold non-ASCII and markup, as text, under ``env``."""
    fx.named_trace("aten::op_µ_é", "kernel_→_∑").write(root / "work" / "t.json")
    return Plan([Step(("report", "t.json", "-f", "text"), env=env)], expect=exits(0))


ENVIRONMENTS: dict[str, dict[str, str]] = {
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "ascii-strict-lang-c": {"PYTHONIOENCODING": "ascii:strict", "LANG": "C", "LC_ALL": "C"},
    "latin1": {"PYTHONIOENCODING": "latin-1"},
    "columns-20": {"COLUMNS": "20"},
    "columns-1": {"COLUMNS": "1"},
    "columns-0": {"COLUMNS": "0"},
    "columns-abc": {"COLUMNS": "abc"},
    "term-dumb": {"TERM": "dumb", "NO_COLOR": "1"},
}


def cases() -> list[Case]:
    out = []
    for kind in THRESHOLD_FILES:
        subjects = THRESHOLD_SUBJECTS if kind in ("fifo", "directory", "non-utf8",
                                                  "missing") else ("report-trace", "check")
        for subject in subjects:
            out.append(Case(f"{CATEGORY}/thresholds-{kind}/{subject}", CATEGORY,
                            partial(_build_thresholds, subject, kind)))
    for value in MAX_SLOWDOWN:
        label = value.replace("%", "pct").replace(" ", "_") or "empty"
        out.append(Case(f"{CATEGORY}/max-slowdown-{label}", CATEGORY,
                        partial(_build_slowdown, value),
                        silently_wrong=f"--max-slowdown {value!r} is ambiguous or invalid"
                        if MAX_SLOWDOWN[value] == (2,) else None))
    for label in USAGE:
        out.append(Case(f"{CATEGORY}/{label}", CATEGORY, partial(_build_usage, label)))
    for env_label, env in ENVIRONMENTS.items():
        subjects = FORMATTED if env_label in ("ascii", "columns-20") else ("report-trace",
                                                                           "report-run")
        for subject in subjects:
            out.append(Case(f"{CATEGORY}/env-{env_label}/{subject}", CATEGORY,
                            partial(_build_env, subject, "text", env)))
        out.append(Case(f"{CATEGORY}/env-{env_label}/report-md", CATEGORY,
                        partial(_build_env, "report-trace", "md", env)))
        out.append(Case(f"{CATEGORY}/env-{env_label}/non-ascii-names", CATEGORY,
                        partial(_build_env_markup, env)))
    return out

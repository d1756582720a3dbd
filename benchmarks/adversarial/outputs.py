"""Category ``outputs``: every writing command aimed at places it must not overwrite.

Subjects are a command line plus the files it reads (a trace, a run directory whose manifest
names traces outside ``*.pt.trace.json*`` and outside the run directory with ``../``, a
directory of rank traces named like HTA's, a symlinked run directory, a thresholds file).
Each is combined with output targets — each file the command reads, a symbolic and a hard link
to one, a directory, a FIFO, a ``/dev/null``-like device node made with ``mknod``, a place
under ``/proc``, a path below a regular file, a missing directory, a user's file, a dangling
link, a link to ``/proc/self/fd/1``, a new file and ``-`` — with and without ``--force``.

Only a user's regular file named as the output with ``--force`` may change; everything else
that existed must be byte-identical afterwards and keep its type. ``profile --out DIR
--force`` is tried over a web project holding ``manifest.json``, a run directory holding a
user's file, and a symlinked run directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from benchmarks.adversarial import fixtures as fx
from benchmarks.adversarial.expect import exits
from benchmarks.adversarial.harness import Case, Plan, Step, StepResult

CATEGORY = "outputs"
#: Targets that must work (exit 0): they show the subject's command line is right.
CONTROLS = frozenset({"new-file", "stdout"})
NO_MKNOD = "mknod of a character device is not permitted here (needs CAP_MKNOD)"
#: Seconds a ``profile`` command may take (it runs a tiny workload on the CPU).
PROFILE_TIMEOUT_S = 240.0


@dataclass(frozen=True)
class Subject:
    """``setup(root)`` writes the inputs under ``root`` and returns (argv without ``-o``,
    {label: path relative to the work folder}) for the labels in ``reads`` (files the command
    reads: never to be replaced) and ``users`` (a user's files it does not read: ``--force``
    may replace them). ``reads`` starts with the most hidden one (linked to as ``…-to-read``)
    and holds ``input``, the main input."""

    name: str
    setup: Callable[[Path], tuple[list[str], dict[str, str]]]
    reads: tuple[str, ...]
    users: tuple[str, ...] = ()
    full: bool = True  # every generic target (False: the short list)


def _report_trace(root: Path) -> tuple[list[str], dict[str, str]]:
    w = root / "work"
    fx.trace(w / "t.pt.trace.json.gz")
    fx.thresholds_file(w / "th.toml")
    return (["report", "t.pt.trace.json.gz", "-f", "json", "--thresholds-file", "th.toml"],
            {"input": "t.pt.trace.json.gz", "thresholds": "th.toml"})


def _report_plain(root: Path) -> tuple[list[str], dict[str, str]]:
    fx.trace(root / "work" / "trace.json", gz=False)
    return ["report", "trace.json", "-f", "md"], {"input": "trace.json"}


def _report_html(root: Path) -> tuple[list[str], dict[str, str]]:
    fx.trace(root / "work" / "t.pt.trace.json.gz")
    return (["report", "t.pt.trace.json.gz", "-f", "html", "--plotlyjs", "cdn"],
            {"input": "t.pt.trace.json.gz"})


def _report_run(root: Path) -> tuple[list[str], dict[str, str]]:
    fx.renamed_trace_run(root / "work" / "run", root / "elsewhere" / "cudagraph-lean.json.gz")
    return (["report", "run", "-f", "json"],
            {"manifest-named": "run/compile-lean.json",
             "manifest-outside": "../elsewhere/cudagraph-lean.json.gz",
             "input": "run/eager.pt.trace.json.gz", "manifest": "run/manifest.json"})


def _report_symlinked_run(root: Path) -> tuple[list[str], dict[str, str]]:
    w = root / "work"
    fx.run_dir(w / "real")
    fx.user_file(w / "real" / "notes.txt")
    os.symlink("real", w / "runlink")
    return (["report", "runlink", "-f", "md"],
            {"input": "runlink/eager.pt.trace.json.gz", "manifest": "runlink/manifest.json",
             "notes-in-run": "runlink/notes.txt"})


def _report_ranks(root: Path) -> tuple[list[str], dict[str, str]]:
    fx.rank_dir(root / "work" / "ranks")
    return (["report", "ranks", "-f", "json", "--force-ranks"],
            {"rank": "ranks/a100_eager_nccl_rank1.json.gz",
             "input": "ranks/a100_eager_nccl_rank0.json.gz"})


def _compare_traces(root: Path) -> tuple[list[str], dict[str, str]]:
    w = root / "work"
    fx.trace(w / "a.pt.trace.json.gz")
    fx.compiled_trace(w / "b.json", gz=False)
    fx.thresholds_file(w / "th.json")
    (w / "th.json").write_text(f'{{"{fx.THRESHOLD_NAME}": {fx.THRESHOLD_VALUE}}}')
    return (["compare", "a.pt.trace.json.gz", "b.json", "-f", "json", "--thresholds-file",
             "th.json"], {"second": "b.json", "input": "a.pt.trace.json.gz",
                          "thresholds": "th.json"})


def _compare_runs(root: Path) -> tuple[list[str], dict[str, str]]:
    w = root / "work"
    fx.run_dir(w / "runA")
    fx.renamed_trace_run(w / "runB", root / "elsewhere" / "cudagraph-lean.json.gz")
    return (["compare", "runA", "runB", "-f", "json"],
            {"manifest-named": "runB/compile-lean.json",
             "manifest-outside": "../elsewhere/cudagraph-lean.json.gz",
             "input": "runA/eager.pt.trace.json.gz"})


def _kernel_diff(root: Path) -> tuple[list[str], dict[str, str]]:
    w = root / "work"
    fx.trace(w / "a.pt.trace.json.gz")
    fx.compiled_trace(w / "b.json.gz")
    return (["kernel-diff", "a.pt.trace.json.gz", "b.json.gz", "-f", "json"],
            {"second": "b.json.gz", "input": "a.pt.trace.json.gz"})


def _export(root: Path) -> tuple[list[str], dict[str, str]]:
    fx.trace(root / "work" / "trace.json.gz")
    return ["export", "trace.json.gz"], {"input": "trace.json.gz"}


SUBJECTS = (
    Subject("report-trace", _report_trace, ("input", "thresholds")),
    Subject("report-run", _report_run,
            ("manifest-named", "manifest-outside", "input", "manifest")),
    Subject("report-ranks", _report_ranks, ("rank", "input")),
    Subject("compare-traces", _compare_traces, ("second", "input", "thresholds")),
    Subject("compare-runs", _compare_runs, ("manifest-named", "manifest-outside", "input")),
    Subject("kernel-diff", _kernel_diff, ("second", "input")),
    Subject("export", _export, ("input",)),
    Subject("report-symlinked-run", _report_symlinked_run, ("input", "manifest"),
            users=("notes-in-run",), full=False),
    Subject("report-plain-name", _report_plain, ("input",), full=False),
    Subject("report-html", _report_html, ("input",), full=False),
)


def _target(label: str, paths: dict[str, str], first: str,
            root: Path) -> tuple[str, set[str]] | str:
    """The ``-o`` argument for target ``label`` (building what it needs) and the paths it may
    replace given ``--force``; or why it cannot be built here. ``first``: the most hidden
    file the command reads."""
    w = root / "work"
    if label.startswith("read:"):
        return paths[label[5:]], set()
    if label.startswith("user:"):
        real = os.path.relpath(os.path.realpath(w / paths[label[5:]]), root)
        return paths[label[5:]], {real}
    if label == "symlink-to-input":
        os.symlink(os.path.abspath(w / paths["input"]), w / "link.json")
        return "link.json", set()
    if label == "hardlink-to-input":
        os.link(w / paths["input"], w / "hard.json")
        return "hard.json", set()
    if label == "symlink-to-read":
        os.symlink(os.path.relpath(w / paths[first], w), w / "rlink.json")
        return "rlink.json", set()
    if label == "hardlink-to-read":
        os.link(w / paths[first], w / "rhard.json")
        return "rhard.json", set()
    if label == "directory":
        fx.user_file(w / "outdir" / "keep.txt")
        return "outdir", set()
    if label == "fifo":
        fx.fifo(w / "pipe")
        return "pipe", set()
    if label == "device":
        return ("devnull", set()) if fx.null_device(w / "devnull") else NO_MKNOD
    if label == "proc":
        return "/proc/traceviz-adversarial/out.json", set()
    if label == "below-file":
        fx.user_file(w / "notes.txt")
        return "notes.txt/out.json", set()
    if label == "missing-dir":
        return "missing/sub/out.json", set()
    if label == "user-file":
        fx.user_file(w / "notes.txt")
        return "notes.txt", {"work/notes.txt"}
    if label == "dangling-link":
        os.symlink("nowhere.json", w / "dangle.json")
        return "dangle.json", set()
    if label == "fd-link":
        os.symlink("/proc/self/fd/1", w / "fdlink")
        return "fdlink", set()
    if label == "new-file":
        return "out.json", set()
    if label == "stdout":
        return "-", set()
    raise ValueError(label)


GENERIC = ("symlink-to-input", "hardlink-to-input", "directory", "fifo",
           "device", "proc", "below-file", "missing-dir", "user-file", "dangling-link",
           "fd-link", "new-file", "stdout")
SHORT = ("symlink-to-input", "hardlink-to-input", "directory", "fifo", "device", "user-file")


def _build(subject: Subject, label: str, force: bool, root: Path) -> Plan:
    argv, paths = subject.setup(root)
    got = _target(label, paths, subject.reads[0], root)
    if isinstance(got, str):
        return Plan([], skip=got)
    out, may = got
    return Plan([Step((*argv, "-o", out, *(["--force"] if force else [])))],
                may_change=may if force else set(),
                expect=exits(0) if label in CONTROLS else None)


def _report_into_rank_dir(root: Path) -> Plan:
    """A report written into a rank directory, then the rank directory reported again: the
    first is refused, or the second still reads only the rank traces (exit 0)."""
    fx.rank_dir(root / "work" / "ranks")
    argv = ("report", "ranks", "-f", "json")
    return Plan([Step((*argv, "-o", "ranks/report.json")), Step(argv)],
                expect=_refused_or_fine)


def _refused_or_fine(results: Sequence[StepResult]) -> str | None:
    first, second = results
    if first.rc != 0 or second.rc == 0:
        return None
    return f"the report written into the rank directory breaks the next report: exit " \
           f"{second.rc}: {second.message.strip()[:200]}"


# --- profile --out ----------------------------------------------------------------------------


def _profile_place(place: str, root: Path) -> tuple[str, set[str]] | str:
    """The ``--out`` folder for ``place`` and what ``--force`` may replace there (the files of
    an earlier traceviz run, never a user's file)."""
    w = root / "work"
    if place == "web-project":
        fx.web_project(w / "site")
        return "site", set()
    if place == "run-with-user-file":
        fx.run_dir(w / "run")
        fx.user_file(w / "run" / "notes.txt")
        return "run", _run_files("work/run", w / "run")
    if place == "traceviz-run":
        fx.run_dir(w / "run")
        return "run", _run_files("work/run", w / "run")
    if place == "symlinked-run":
        fx.run_dir(w / "real")
        os.symlink("real", w / "runlink")
        return "runlink", _run_files("work/real", w / "real") | {"work/runlink"}
    if place == "fifo":
        fx.fifo(w / "pipe")
        return "pipe", set()
    if place == "device":
        return ("devnull", set()) if fx.null_device(w / "devnull") else NO_MKNOD
    if place == "file":
        fx.user_file(w / "notes.txt")
        return "notes.txt", set()
    if place == "below-file":
        fx.user_file(w / "notes.txt")
        return "notes.txt/run", set()
    raise ValueError(place)


def _run_files(rel: str, path: Path) -> set[str]:
    return {f"{rel}/{p.name}" for p in path.iterdir()} | {rel}


PROFILE_PLACES = ("web-project", "run-with-user-file", "symlinked-run", "traceviz-run", "fifo",
                  "device", "file", "below-file")


def _build_profile(place: str, force: bool, root: Path) -> Plan:
    wl = fx.workload(root / "elsewhere" / "tiny.py")
    got = _profile_place(place, root)
    if isinstance(got, str):
        return Plan([], skip=got)
    out, may = got
    argv = ("profile", os.path.relpath(wl, root / "work"), "--device", "cpu", "--modes",
            "eager", "--timing-budget-s", "0", "--no-stack", "--repeats", "1", "--warmup", "1",
            "--timeout", "120", "--out", out, *(["--force"] if force else []))
    return Plan([Step(argv, timeout_s=PROFILE_TIMEOUT_S)], may_change=may if force else set(),
                expect=exits(0) if (place, force) == ("traceviz-run", True) else None)


def cases() -> list[Case]:
    out = []
    for s in SUBJECTS:
        labels = [f"read:{k}" for k in s.reads]
        if s.reads[0] != "input":
            labels += ["symlink-to-read", "hardlink-to-read"]
        labels += list(GENERIC if s.full else SHORT)
        labels += [f"user:{k}" for k in s.users]
        for label in labels:
            for force in (False, True):
                cid = f"{CATEGORY}/{s.name}/{label.replace(':', '-')}"
                out.append(Case(cid + ("/force" if force else ""), CATEGORY,
                                partial(_build, s, label, force)))
    out.append(Case(f"{CATEGORY}/report-ranks/write-then-report-dir", CATEGORY,
                    _report_into_rank_dir))
    for place in PROFILE_PLACES:
        for force in (False, True):
            cid = f"{CATEGORY}/profile/{place}" + ("/force" if force else "")
            out.append(Case(cid, CATEGORY, partial(_build_profile, place, force)))
    return out

"""Mutation-testing campaign of the analysis core with mutmut 3 (issue 23, item 5).

``python -m benchmarks.mutation [--modules gaps,steps,links] [--max-children 2]`` mutates one
module at a time and runs, per mutant, only the tests of that module's test files that execute
the mutated function (mutmut records which tests call which function in one clean run, then forks
a worker per mutant from the already-imported process: no interpreter start per mutant). Each
module runs in its own scratch directory (``--workdir``, default ``/tmp/traceviz-mutation``)
holding a copy of ``traceviz/``, the tests and a ``pyproject.toml`` whose ``[tool.mutmut]``
names the module and its test files; the worktree itself is never touched.

The report (``benchmarks/results/<date>-mutation-<host>.json`` and ``.md``) gives per module:
total mutants, killed (timeouts count as killed: the mutant made a test hang), survivors with
``file:line`` and the mutated line, the justified equivalent mutants (``EQUIVALENTS`` in
``benchmarks/mutation_equivalents.py``, matched on the original and the mutated line) with the
reason, and the score = killed / (total − justified equivalents). ``--merge FILE`` keeps the
modules of an earlier report that this run did not redo; ``--collect`` rebuilds the report from
the scratch directories without running mutmut again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.mutation_equivalents import EQUIVALENTS

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "benchmarks" / "results"
MUTMUT = Path(sys.executable).with_name("mutmut")

# The hand-built tests of the core definitions. The real-trace tests are left out: they add
# ~2.5 s to every surviving mutant of gaps/steps/links, and an edge a definition names must be
# pinned by a trace whose answer is known by construction anyway.
_CORE = (
    "tests/test_metrics_handbuilt.py",
    "tests/test_gaps_edges.py",
    "tests/test_steps_edges.py",
    "tests/test_links_edges.py",
)


_VERDICT_TESTS = (
    "tests/test_verdicts_rules.py",
    "tests/test_baseline_drift.py",
    "tests/test_unprofiled_split.py",
    "tests/test_verdicts_real_traces.py",
    "tests/test_speed_edges.py",
    "tests/test_verdicts_edges.py",
)


@dataclass(frozen=True)
class Target:
    """One module under mutation and the test files run against its mutants."""

    path: str
    tests: tuple[str, ...]


TARGETS: dict[str, Target] = {
    "gaps": Target("traceviz/analyze/trace/gaps.py", _CORE),
    "steps": Target("traceviz/analyze/trace/steps.py", _CORE),
    "links": Target("traceviz/analyze/trace/links.py", _CORE),
    "intervals": Target(
        "traceviz/analyze/trace/intervals.py", (*_CORE, "tests/test_intervals_edges.py")
    ),
    "graphs": Target("traceviz/analyze/trace/graphs.py", (*_CORE, "tests/test_graphs_edges.py")),
    "families": Target(
        "traceviz/analyze/trace/families.py", (*_CORE, "tests/test_families_edges.py")
    ),
    "validity": Target(
        "traceviz/analyze/health/validity.py",
        ("tests/test_health_validity.py", "tests/test_metrics_handbuilt.py",
         "tests/test_validity_edges.py"),
    ),
    # The statistical calibration tests (tests/test_speed_calibration.py, 3-5 s each) are left
    # out: they check thresholds, not the definitions, and would run for every surviving mutant.
    "speed": Target("traceviz/analyze/compare/speed.py", _VERDICT_TESTS),
    "verdicts": Target(
        "traceviz/analyze/verdicts.py", (*_VERDICT_TESTS, "tests/test_thresholds_ranges.py")
    ),
    "decode": Target(
        "traceviz/trace/decode.py",
        ("tests/test_loader_hostile.py", "tests/test_loader_variants.py",
         "tests/test_decode_pool.py", "tests/test_loader_fast_split.py",
         "tests/test_text_file.py", "tests/test_ranks_comms_table.py", *_CORE),
    ),
    "tables": Target(
        "traceviz/trace/tables.py",
        ("tests/test_loader_hostile.py", "tests/test_loader_variants.py",
         "tests/test_ranks_comms_table.py", *_CORE),
    ),
}

# mutmut exit-code meanings (mutmut.stats.status_by_exit_code).
_KILLED = {1, 3, 36, -24, 24, 152, 255}  # test failure, pytest internal error, timeouts
_SURVIVED = {0}
_NO_TESTS = {5, 33}
#: Survivors listed per module in the markdown summary (the JSON lists all).
MD_SURVIVORS = 15


def _pyproject(target: Target) -> str:
    """The repo's pyproject.toml (pytest markers, options) plus this module's mutmut section."""
    base = (REPO / "pyproject.toml").read_text()
    tests = ", ".join(json.dumps(t) for t in target.tests if (REPO / t).exists())
    return (
        base
        + "\n[tool.mutmut]\n"
        + 'source_paths = ["traceviz"]\n'
        + f"only_mutate = [{json.dumps(target.path)}]\n"
        + f"pytest_add_cli_args_test_selection = [{tests}]\n"
        + 'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly"]\n'
        + "use_git_change_detection = false\n"
    )


def _prepare(work: Path, target: Target) -> None:
    """A fresh scratch directory: traceviz/ and tests/ copied, data dirs linked."""
    if work.exists():
        shutil.rmtree(work)
    (work / "mutants").mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "traceviz", work / "traceviz", ignore=skip)
    shutil.copytree(REPO / "tests", work / "tests", ignore=skip)
    (work / "pyproject.toml").write_text(_pyproject(target))
    for name in ("reports", "workloads", "docs", "benchmarks", "scripts", "README.md",
                 "CHANGELOG.md", "mkdocs.yml"):  # read by tests relative to the repo root
        (work / "mutants" / name).symlink_to(REPO / name)
    shared = REPO.parent / "shared"  # tests look for ../shared beside the checkout
    if shared.exists():
        (work / "shared").symlink_to(shared)


_DIFF_SNIPPET = """
import json, sys
from pathlib import Path
from mutmut.mutation.diff_apply import get_diff_for_mutant
path, names = sys.argv[1], json.loads(sys.argv[2])
print(json.dumps({n: get_diff_for_mutant(n, path=Path(path)) for n in names}))
"""


def _diffs(work: Path, path: str, names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    out = subprocess.run(
        [sys.executable, "-c", _DIFF_SNIPPET, path, json.dumps(names)],
        cwd=work, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def _changed_lines(diff: str) -> tuple[str, str]:
    """(original, mutated) text of the changed line of a one-line mutant diff."""
    minus = [ln[1:] for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " ".join(x.strip() for x in minus), " ".join(x.strip() for x in plus)


def _line_of(source_lines: list[str], function: str, diff: str) -> int | None:
    """1-based line of the first line the mutant changes: the diff's context lines before it
    and that line, found in order in the source after ``function``'s ``def``."""
    block: list[str] = []
    for ln in diff.splitlines():
        if ln.startswith(("---", "+++", "@@")):
            block = []
        elif ln.startswith(" "):
            block.append(ln[1:].strip())
        elif ln.startswith("-"):
            block.append(ln[1:].strip())
            break
    if not block:
        return None
    start = next((i for i, ln in enumerate(source_lines) if f"def {function}(" in ln), 0)
    stripped = [ln.strip() for ln in source_lines]
    for i in range(start, len(stripped) - len(block) + 1):
        if stripped[i:i + len(block)] == block:
            return i + len(block)
    return None


def _function_of(mutant: str) -> str:
    """The function a mutant changed (of a method: ``locate``).

    ``traceviz.analyze.trace.gaps.x__classify__mutmut_3`` -> ``_classify``."""
    tail = mutant.rsplit(".", 1)[-1]
    tail = tail.rsplit("__mutmut_", 1)[0]
    if tail.startswith("x_"):
        return tail[2:]
    if "ǁ" in tail:  # class methods: xǁClassǁmethod
        return tail.split("ǁ")[-1]
    return tail


def run_module(name: str, target: Target, work_root: Path, max_children: int) -> None:
    """Run mutmut on one module in a fresh scratch directory; records the wall time there."""
    work = work_root / name
    _prepare(work, target)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(MUTMUT), "run", "--max-children", str(max_children)],
        cwd=work, env=env, capture_output=True, text=True,
    )
    wall = time.perf_counter() - t0
    (work / "campaign.json").write_text(json.dumps({"wall_s": round(wall, 1),
                                                    "mutmut_exit": proc.returncode}))
    if proc.returncode != 0 or not (work / "mutants" / (target.path + ".meta")).exists():
        raise RuntimeError(f"mutmut failed on {name} (exit {proc.returncode}):\n"
                           f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def collect_module(name: str, target: Target, work_root: Path) -> dict:
    """The module's entry of the report, from the results mutmut left in its scratch dir."""
    work = work_root / name
    run = json.loads((work / "campaign.json").read_text())
    meta_path = work / "mutants" / (target.path + ".meta")
    codes: dict[str, int | None] = json.loads(meta_path.read_text())["exit_code_by_key"]
    source_lines = (REPO / target.path).read_text().splitlines()
    not_killed = sorted(
        (k for k, c in codes.items() if c not in _KILLED),
        key=lambda k: (_function_of(k), int(k.rsplit("_", 1)[1])),
    )
    diffs = _diffs(work, target.path, not_killed)
    survivors, equivalents = [], []
    for key in not_killed:
        original, mutated = _changed_lines(diffs[key])
        function = _function_of(key)
        line = _line_of(source_lines, function, diffs[key])
        code = codes[key]
        row = {
            "mutant": key,
            "where": f"{target.path}:{line}",
            "function": function,
            "original": original,
            "mutated": mutated,
            "status": "not run" if code is None else "no tests" if code in _NO_TESTS else (
                "survived" if code in _SURVIVED else f"exit {code}"),
        }
        reason = EQUIVALENTS.get((target.path, original, mutated))
        if reason is not None:
            equivalents.append({**row, "reason": reason})
        else:
            survivors.append(row)
    total = len(codes)
    killed = total - len(not_killed)
    denominator = total - len(equivalents)
    return {
        "module": target.path,
        "tests": [t for t in target.tests if (REPO / t).exists()],
        "total": total,
        "killed": killed,
        "equivalent": len(equivalents),
        "survived": len(survivors),
        "score": round(killed / denominator, 4) if denominator else None,
        **run,
        "survivors": survivors,
        "equivalents": equivalents,
    }


def markdown(report: dict) -> str:
    """The short markdown summary committed next to the JSON."""
    lines = [
        f"# Mutation campaign {report['date']} ({report['host']})",
        "",
        f"mutmut {report['mutmut']}, `--max-children {report['max_children']}`; score = killed / "
        "(total − justified equivalents); timeouts count as killed.",
        "",
        "| module | mutants | killed | equivalent | surviving | score | wall (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in report["modules"].values():
        score = "—" if m["score"] is None else f"{100 * m['score']:.1f} %"
        lines.append(
            f"| `{m['module']}` | {m['total']} | {m['killed']} | {m['equivalent']} | "
            f"{m['survived']} | {score} | {m['wall_s']} |"
        )
    for m in report["modules"].values():
        if m["survivors"]:
            lines += ["", f"## Survivors in `{m['module']}`", ""]
            lines += [f"- `{s['where']}` ({s['status']}): `{s['original']}` → `{s['mutated']}`"
                      for s in m["survivors"][:MD_SURVIVORS]]
            if len(m["survivors"]) > MD_SURVIVORS:
                lines.append(f"- … and {len(m['survivors']) - MD_SURVIVORS} more (the JSON "
                             "report lists every one)")
        if m["equivalents"]:
            lines += ["", f"## Equivalent mutants in `{m['module']}`", ""]
            by_reason: dict[str, list[str]] = {}
            for e in m["equivalents"]:
                by_reason.setdefault(e["reason"], []).append(
                    f"`{e['where'].rsplit(':', 1)[-1]}` `{e['original']}` → `{e['mutated']}`")
            for reason, where in by_reason.items():
                lines.append(f"- {reason} (line {'; '.join(where)})")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", default="gaps,steps,links",
                    help=f"comma-separated, from: {','.join(TARGETS)} (or 'all')")
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/traceviz-mutation"))
    ap.add_argument("--merge", type=Path, help="an earlier report whose other modules to keep")
    ap.add_argument("--out", type=Path, help="report path (default benchmarks/results/…json)")
    ap.add_argument("--render", type=Path, metavar="REPORT",
                    help="only rewrite the markdown summary of a JSON report")
    ap.add_argument("--collect", action="store_true",
                    help="do not run mutmut: rebuild the report from the scratch directories "
                         "(after editing benchmarks/mutation_equivalents.py)")
    args = ap.parse_args(argv)
    if args.render:
        args.render.with_suffix(".md").write_text(markdown(json.loads(args.render.read_text())))
        return 0
    names = list(TARGETS) if args.modules == "all" else args.modules.split(",")
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        ap.error(f"unknown modules {unknown}; known: {list(TARGETS)}")
    host = platform.node().split(".")[0] or "host"
    report = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H%M"),
        "host": host,
        "cpus": os.cpu_count(),
        "mutmut": importlib.metadata.version("mutmut"),
        "max_children": args.max_children,
        "modules": {},
    }
    if args.merge:
        report["modules"].update(json.loads(args.merge.read_text())["modules"])
    out = args.out or RESULTS_DIR / f"{report['date'][:10]}-mutation-{host}.json"
    for name in names:  # the report is rewritten after each module: a cut-off run keeps those done
        if not args.collect:
            print(f"mutating {TARGETS[name].path} …", flush=True)
            run_module(name, TARGETS[name], args.workdir, args.max_children)
        entry = collect_module(name, TARGETS[name], args.workdir)
        report["modules"][name] = entry
        print(f"  {entry['killed']}/{entry['total']} killed, {entry['equivalent']} equivalent, "
              f"{entry['survived']} surviving, score {entry['score']}, {entry['wall_s']} s",
              flush=True)
        out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        out.with_suffix(".md").write_text(markdown(report))
    print(f"wrote {out} and {out.with_suffix('.md').name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

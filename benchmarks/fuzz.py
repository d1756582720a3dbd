"""Mutation fuzzer: hostile variants of real traces through ``traceviz report --format json``.

``python -m benchmarks.fuzz --examples N --workers W --seed S [--out DIR]``

Each example takes one real trace of the corpus (``tests/data/gpu/*.json.gz`` and, when present,
``../shared/cases/hta/*.json.gz``), applies 1–3 mutations drawn from :data:`MUTATIONS` (drop
keys, change types, truncate, duplicate, reorder, huge numbers, NaN/∞/negative values,
non-UTF-8 bytes, deeply nested args, whitespace runs, corrupt gzip, and the ambiguities of
:data:`AMBIGUITY_MUTATIONS` …), writes it as ``.json``
or ``.json.gz`` and runs the report on it in a child process forked from this one (imports
are paid once). Example ``i`` depends only on ``(seed, i)``, so any example can be replayed
alone (``--only I``) whatever ``--workers`` was. Odd examples take the big-trace loader path
(skeleton split, events read from the file and decoded by 2 workers from 4 KB chunks), even ones the
small-trace path.

Each outcome is classified:

``ok``                    exit 0, valid JSON on stdout (no NaN/Infinity), nothing on stderr
``ok-health``             the same, with a non-empty ``health`` list
``clean-error``           exit 1 and exactly one stderr line ``traceviz: error: …``
``FAILURE``               anything else: a traceback, another exit code, several stderr lines,
                          invalid JSON output, "out of memory", a run past ``--timeout``
                          (killed: a hang), or a peak RSS growth above
                          ``1.5 × JSON size + 200 MiB`` (the child's peak RSS less the RSS it
                          inherited from this process at the fork)

A failing example's input is kept as a reproducer under ``OUT/failures/`` with a ``.txt``
holding its mutations, exit code, reason and stderr. The summary is printed and written to
``OUT/fuzz-result.json`` (examples, failures, per-class counts, seed, workers, wall time …).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import math
import os
import platform
import random
import resource
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: Default corpus folders (the second is skipped when absent).
CORPUS_DIRS = (REPO / "tests" / "data" / "gpu", REPO.parent / "shared" / "cases" / "hta")
#: Per-example limits.
TIMEOUT_S = 60.0
RSS_FACTOR = 1.5
RSS_SLACK_BYTES = 200 * 1024 * 1024
CLASSES = ("ok", "ok-health", "clean-error", "FAILURE")


# --- corpus ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One corpus trace as JSON text; ``traceEvents`` cut to ``max_events`` (metadata rows
    kept). Parsed afresh per example (faster than a deep copy)."""

    name: str
    text: bytes


def load_corpus(dirs: list[Path], max_events: int) -> list[Seed]:
    """The ``*.json.gz`` / ``*.json`` traces under ``dirs`` (missing folders skipped)."""
    seeds = []
    for d in dirs:
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.json*")):
            if not (p.name.endswith(".json") or p.name.endswith(".json.gz")):
                continue
            raw = p.read_bytes()
            doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
            if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list) and max_events:
                ev = doc["traceEvents"]
                meta = [e for e in ev if isinstance(e, dict) and e.get("ph") == "M"]
                timed = [e for e in ev if not (isinstance(e, dict) and e.get("ph") == "M")]
                doc["traceEvents"] = meta + timed[:max_events]
            seeds.append(Seed(p.name, json.dumps(doc).encode()))
    return seeds


# --- mutations -------------------------------------------------------------------------------

_HUGE = [2**64 + 1, -(2**70), 2**63, 10**30, 1e308, -1e308, 1e-320, 2**53 + 1, -1]
_ODD = [None, True, False, "", "N/A", "x", "1e5", [], {}, [1, 2], {"a": 1}, 0.5, -0.0,
        "stream 7", "\u2603", 12345678901234567890]
_FIELDS = ["ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id", "s", "bp"]
_ARG_FIELDS = ["correlation", "External id", "external id", "name", "labels", "stream",
               "device", "grid"]


def _events(doc: Any) -> list[Any]:
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return doc["traceEvents"]
    return doc if isinstance(doc, list) else []


def _some_event(rng: random.Random, doc: Any) -> dict[str, Any] | None:
    ev = [e for e in _events(doc) if isinstance(e, dict)]
    return rng.choice(ev) if ev else None


def m_drop_key(rng: random.Random, doc: Any) -> str:
    e = _some_event(rng, doc)
    if e is None or not e:
        return "drop_key: nothing"
    if isinstance(e.get("args"), dict) and e["args"] and rng.random() < 0.4:
        k = rng.choice(sorted(e["args"]))
        del e["args"][k]
        return f"drop_key args.{k}"
    k = rng.choice(sorted(e))
    del e[k]
    return f"drop_key {k}"


def m_change_type(rng: random.Random, doc: Any) -> str:
    e = _some_event(rng, doc)
    if e is None:
        return "change_type: nothing"
    v = copy.deepcopy(rng.choice(_ODD))
    if rng.random() < 0.4:
        args = e.setdefault("args", {}) if isinstance(e.get("args", {}), dict) else {}
        k = rng.choice(_ARG_FIELDS)
        args[k] = v
        return f"change_type args.{k}={v!r}"
    k = rng.choice(_FIELDS)
    e[k] = v
    return f"change_type {k}={v!r}"


def m_huge_number(rng: random.Random, doc: Any) -> str:
    e = _some_event(rng, doc)
    if e is None:
        return "huge_number: nothing"
    v = rng.choice(_HUGE)
    if rng.random() < 0.5:
        args = e.setdefault("args", {}) if isinstance(e.get("args", {}), dict) else {}
        k = rng.choice(["correlation", "External id", "external id"])
        args[k] = v
        return f"huge_number args.{k}={v!r}"
    k = rng.choice(["ts", "dur", "pid", "tid"])
    e[k] = v
    return f"huge_number {k}={v!r}"


def m_bad_float(rng: random.Random, doc: Any) -> str:
    """NaN / ±∞ (bare tokens in the JSON) or a negative value in ``ts``/``dur``."""
    e = _some_event(rng, doc)
    if e is None:
        return "bad_float: nothing"
    k = rng.choice(["ts", "dur"])
    v = rng.choice([math.nan, math.inf, -math.inf, -1.0, -1e6, -0.001])
    e[k] = v
    return f"bad_float {k}={v!r}"


def m_duplicate(rng: random.Random, doc: Any) -> str:
    ev = _events(doc)
    if not ev:
        return "duplicate: nothing"
    i = rng.randrange(len(ev))
    n = rng.randint(1, min(200, len(ev) - i))
    ev[i:i] = copy.deepcopy(ev[i : i + n])
    return f"duplicate {n} events at {i}"


def m_reorder(rng: random.Random, doc: Any) -> str:
    ev = _events(doc)
    if len(ev) < 2:
        return "reorder: nothing"
    i = rng.randrange(len(ev) - 1)
    j = rng.randint(i + 2, min(len(ev), i + 2 + rng.choice([2, 50, 5000])))
    part = ev[i:j]
    rng.shuffle(part)
    ev[i:j] = part
    return f"reorder events {i}:{j}"


def m_delete_events(rng: random.Random, doc: Any) -> str:
    ev = _events(doc)
    if not ev:
        return "delete: nothing"
    i = rng.randrange(len(ev))
    n = rng.randint(1, max(1, len(ev) - i) if rng.random() < 0.1 else min(100, len(ev) - i))
    del ev[i : i + n]
    return f"delete {n} events at {i}"


def m_deep_nest(rng: random.Random, doc: Any) -> str:
    e = _some_event(rng, doc)
    if e is None:
        return "deep_nest: nothing"
    depth = rng.choice([50, 500, 5000, 50000])
    # Built as text later (json.dumps would recurse): a marker replaced after serialisation.
    e.setdefault("args", {}) if isinstance(e.get("args", {}), dict) else None
    if isinstance(e.get("args"), dict):
        e["args"]["nested"] = f"@@NEST{depth}@@"
    else:
        e["args"] = f"@@NEST{depth}@@"
    return f"deep_nest depth={depth}"


def m_top_level(rng: random.Random, doc: Any) -> str:
    if not isinstance(doc, dict):
        return "top_level: array form"
    choice = rng.randrange(6)
    if choice == 0:
        doc.pop("traceEvents", None)
        return "top_level drop traceEvents"
    if choice == 1:
        doc["traceEvents"] = copy.deepcopy(rng.choice(_ODD))
        return f"top_level traceEvents={doc['traceEvents']!r}"
    if choice == 2:
        doc["deviceProperties"] = copy.deepcopy(rng.choice([*_ODD, [{"id": "x"}], [{}]]))
        return f"top_level deviceProperties={doc['deviceProperties']!r}"
    if choice == 3:
        doc["baseTimeNanoseconds"] = copy.deepcopy(rng.choice(_ODD + _HUGE))
        return f"top_level baseTimeNanoseconds={doc['baseTimeNanoseconds']!r}"
    if choice == 4:
        doc["distributedInfo"] = copy.deepcopy(
            rng.choice([*_ODD, {"rank": "x"}, {"rank": 2**70}]))
        return f"top_level distributedInfo={doc['distributedInfo']!r}"
    ev = _events(doc)
    doc.clear()
    doc["traceEvents"] = ev  # nothing but events
    return "top_level only traceEvents"


def m_odd_name(rng: random.Random, doc: Any) -> str:
    e = _some_event(rng, doc)
    if e is None:
        return "odd_name: nothing"
    v = rng.choice(["}, {", '"}, {"ph": "X"', "a\tb\x01c", "\ud800", "x" * 100_000, "",
                    "ProfilerStep#", "ProfilerStep#-1", "ProfilerStep#99999999999999999999",
                    "cudaLaunchKernel", "cudaGraphLaunch", "cudaDeviceSynchronize"])
    e["name"] = v
    return f"odd_name {v[:40]!r}"


# --- ambiguities (traceviz/analyze/health/ambiguity.py; docs/metrics.md, "Ambiguity") ------------

_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _correlated(doc: Any, cats: tuple[str, ...]) -> list[dict[str, Any]]:
    """``X`` events of ``cats`` with an int ``args.correlation`` and a numeric ``ts``."""
    return [e for e in _events(doc) if isinstance(e, dict) and e.get("ph") == "X"
            and e.get("cat") in cats and isinstance(e.get("args"), dict)
            and isinstance(e["args"].get("correlation"), int)
            and isinstance(e.get("ts"), (int, float))]


def _not_replayed(doc: Any) -> list[dict[str, Any]]:
    """GPU activities with a correlation id no graph launch carries (else every one)."""
    graphs = {e["args"]["correlation"] for e in _correlated(doc, ("cuda_runtime", "cuda_driver"))
              if "GraphLaunch" in str(e.get("name"))}
    gpu = _correlated(doc, _GPU_CATS)
    return [e for e in gpu if e["args"]["correlation"] not in graphs] or gpu


def m_one_launch_many(rng: random.Random, doc: Any) -> str:
    """``multi_activity_launch``: 1-40 copies of a GPU activity (not a graph node), same
    correlation id, each on a stream of its own (its launch then owns up to 41 kernels)."""
    gpu = _not_replayed(doc)
    if not gpu:
        return "one_launch_many: nothing"
    e = rng.choice(gpu)
    n = rng.randint(1, 40)
    for i in range(n):
        c = copy.deepcopy(e)
        c["tid"], c["ts"] = 50_000 + i, e["ts"] + i
        _events(doc).append(c)
    return f"one_launch_many {n} copies of correlation {e['args']['correlation']}"


def m_cross_device(rng: random.Random, doc: Any) -> str:
    """``launch_on_several_devices``: a copy of a GPU activity (not a graph node) on another
    device."""
    gpu = _not_replayed(doc)
    if not gpu:
        return "cross_device: nothing"
    e = rng.choice(gpu)
    c = copy.deepcopy(e)
    c["pid"] = (e["pid"] + 1) if isinstance(e.get("pid"), int) else 1
    c["args"]["device"] = c["pid"]
    _events(doc).append(c)
    return f"cross_device correlation {e['args']['correlation']} on pid {c['pid']}"


def m_flow_backwards(rng: random.Random, doc: Any) -> str:
    """``flow_end_before_start``: a flow end moved before its start (a pair is added at a
    launch call when the trace has no flow start)."""
    ev = _events(doc)
    starts = [e for e in ev if isinstance(e, dict) and e.get("ph") == "s"
              and isinstance(e.get("ts"), (int, float)) and "id" in e]
    delta = rng.choice([0.001, 1.0, 1000.0])
    if starts:
        s = rng.choice(starts)
        ends = [e for e in ev if isinstance(e, dict) and e.get("ph") == "f"
                and e.get("id") == s["id"] and e.get("name") == s.get("name")]
        if ends:
            rng.choice(ends)["ts"] = s["ts"] - delta
            return f"flow_backwards id {s['id']!r} end {delta} µs before start"
        ev.append({**s, "ph": "f", "bp": "e", "ts": s["ts"] - delta})
        return f"flow_backwards new end for id {s['id']!r}"
    calls = _correlated(doc, ("cuda_runtime", "cuda_driver"))
    if not calls:
        return "flow_backwards: nothing"
    c = rng.choice(calls)
    flow = {"id": c["args"]["correlation"], "cat": "ac2g", "name": "ac2g"}
    ev.append({"ph": "s", **flow, "pid": c.get("pid"), "tid": c.get("tid"), "ts": c["ts"]})
    ev.append({"ph": "f", "bp": "e", **flow, "pid": 0, "tid": 7, "ts": c["ts"] - delta})
    return f"flow_backwards new pair at correlation {flow['id']}"


def m_nested_step(rng: random.Random, doc: Any) -> str:
    """``nested_steps``: a ``ProfilerStep#N`` window inside another (around a random timed
    event, with its outer window, when the trace has no step)."""
    ev = _events(doc)
    steps = [e for e in ev if isinstance(e, dict) and e.get("ph") == "X"
             and str(e.get("name", "")).startswith("ProfilerStep#")
             and isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))
             and e["dur"] > 0]
    n = rng.randint(1, 3)
    if steps:
        outer = rng.choice(steps)
    else:
        timed = [e for e in ev if isinstance(e, dict) and isinstance(e.get("ts"), (int, float))]
        if not timed:
            return "nested_step: nothing"
        outer = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#90000",
                 "pid": 1, "tid": 1, "ts": rng.choice(timed)["ts"], "dur": 200.0, "args": {}}
        ev.append(outer)
    for i in range(n):
        inner = copy.deepcopy(outer)
        inner["name"] = f"ProfilerStep#{91_000 + i}"
        inner["ts"] = outer["ts"] + outer["dur"] * rng.random() / 2
        inner["dur"] = max(0.001, outer["dur"] * rng.random() / 2)
        ev.append(inner)
    return f"nested_step {n} windows inside {outer['name']}"


def m_shared_correlation(rng: random.Random, doc: Any) -> str:
    """``shared_correlation``: a runtime call copied to a later time, with its id."""
    calls = _correlated(doc, ("cuda_runtime", "cuda_driver"))
    if not calls:
        return "shared_correlation: nothing"
    c = rng.choice(calls)
    dup = copy.deepcopy(c)
    dup["ts"] = c["ts"] + rng.choice([0.0, 0.5, 100.0])
    _events(doc).append(dup)
    return f"shared_correlation {c['args']['correlation']}"


#: The mutations that make an ambiguity, by the code each aims at (it may raise others too:
#: a copied kernel on another device also gives its kernel launch two kernels).
AMBIGUITY_MUTATIONS = {
    "multi_activity_launch": m_one_launch_many,
    "launch_on_several_devices": m_cross_device,
    "flow_end_before_start": m_flow_backwards,
    "nested_steps": m_nested_step,
    "shared_correlation": m_shared_correlation,
}


#: Mutations on the parsed document, by name.
MUTATIONS = {
    "drop_key": m_drop_key,
    "change_type": m_change_type,
    "huge_number": m_huge_number,
    "bad_float": m_bad_float,
    "duplicate": m_duplicate,
    "reorder": m_reorder,
    "delete": m_delete_events,
    "deep_nest": m_deep_nest,
    "top_level": m_top_level,
    "odd_name": m_odd_name,
    "one_launch_many": m_one_launch_many,
    "cross_device": m_cross_device,
    "flow_backwards": m_flow_backwards,
    "nested_step": m_nested_step,
    "shared_correlation": m_shared_correlation,
}


def serialise(doc: Any) -> bytes:
    """JSON bytes as a profiler might write them (NaN/Infinity as bare tokens; ``\\ud800``
    lone surrogates kept as escapes); deep-nesting markers expanded."""
    text = json.dumps(doc, allow_nan=True)
    data = text.encode("utf-8")
    while b"@@NEST" in data:
        i = data.index(b'"@@NEST')
        j = data.index(b'@@"', i + 7)
        depth = int(data[i + 7 : j])
        data = data[:i] + b"[" * depth + b"1" + b"]" * depth + data[j + 3 :]
    return data


def byte_mutation(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One mutation of the serialised bytes."""
    n = len(data)
    kind = rng.randrange(6)
    if kind == 0:
        cut = rng.randrange(n)
        return data[:cut], f"truncate at {cut}/{n}"
    if kind == 1:
        pos = rng.randrange(n)
        bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff"])
        # Prefer the inside of a string: just after a quote.
        q = data.find(b'"', pos)
        at = q + 1 if q != -1 else pos
        return data[:at] + bad + data[at:], f"non-utf8 {bad!r} at {at}"
    if kind == 2:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(n)] = rng.randrange(256)
        return bytes(out), "flip bytes"
    if kind == 3:
        pos = data.find(b"},", rng.randrange(n))
        at = pos + 2 if pos != -1 else n
        run = rng.choice([b" ", b"\n", b"\t", b"\r\n"]) * rng.choice([100, 10_000, 1_000_000])
        return data[:at] + run + data[at:], f"whitespace {len(run)} at {at}"
    if kind == 4:
        return b" " * rng.choice([1, 100, 100_000]) + data + b"\n" * 70, "padding"
    i = rng.randrange(n)
    return data[:i] + data[i : i + rng.randint(1, 4096)] + data[i:], f"repeat bytes at {i}"


def make_example(seeds: list[Seed], seed: int, index: int) -> tuple[bytes, str, list[str]]:
    """Example ``index`` of campaign ``seed``: (file bytes, suffix, mutation descriptions)."""
    rng = random.Random(f"{seed}:{index}")
    base = rng.choice(seeds)
    doc = json.loads(base.text)
    done = [f"base {base.name}"]
    names = list(MUTATIONS)
    for _ in range(rng.randint(1, 3)):
        done.append(MUTATIONS[rng.choice(names)](rng, doc))
    data = serialise(doc)
    if rng.random() < 0.3:
        data, what = byte_mutation(rng, data)
        done.append(what)
    if rng.random() < 0.5:
        data = gzip.compress(data, compresslevel=1)
        if rng.random() < 0.1:
            cut = rng.randrange(len(data))
            data = data[:cut] if rng.random() < 0.5 else data + b"garbage"
            done.append(f"corrupt gzip (cut {cut} or trailing garbage)")
        return data, ".json.gz", done
    return data, ".json", done


# --- running and classifying -------------------------------------------------------------------


@dataclass
class Outcome:
    index: int
    cls: str
    reason: str = ""
    exit_code: int | None = None
    seconds: float = 0.0
    max_rss_bytes: int = 0
    rss_growth_bytes: int = 0
    json_bytes: int = 0
    mutations: list[str] = field(default_factory=list)
    reproducer: str | None = None


def rss_bound(json_bytes: int) -> int:
    """The memory bound of an example: 1.5 × its JSON size + 200 MiB."""
    return int(RSS_FACTOR * json_bytes) + RSS_SLACK_BYTES


def classify(exit_code: int | None, stdout: bytes, stderr: bytes) -> tuple[str, str]:
    """Class and reason for one finished run (see the module docstring)."""
    err = stderr.decode("utf-8", "replace")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if "Traceback" in err:
        return "FAILURE", "traceback: " + (lines[-1] if lines else "")
    if exit_code == 0:
        if lines:
            return "FAILURE", f"exit 0 with stderr: {lines[0][:200]}"
        try:
            report = json.loads(stdout, parse_constant=_reject_constant)
        except ValueError as exc:
            return "FAILURE", f"exit 0 but stdout is not strict JSON ({exc})"
        health = report.get("health") if isinstance(report, dict) else None
        return ("ok-health", f"{len(health)} health warning(s)") if health else ("ok", "")
    if exit_code == 1 and len(lines) == 1 and lines[0].startswith("traceviz: error: "):
        if "out of memory" in lines[0]:
            return "FAILURE", lines[0][:300]
        return "clean-error", lines[0][:300]
    return "FAILURE", f"exit {exit_code}, {len(lines)} stderr line(s): " + " | ".join(lines)[:300]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} in output")


def _child(seeds: list[Seed], seed: int, index: int, work: Path) -> None:
    """Body of a forked child: build example ``index``, run the report, ``os._exit``."""
    code = 99
    try:
        data, suffix, done = make_example(seeds, seed, index)
        trace = work / f"ex-{index}{suffix}"
        trace.write_bytes(data)
        (work / f"ex-{index}.meta").write_text(json.dumps(done))
        out = os.open(work / f"ex-{index}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = os.open(work / f"ex-{index}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        from traceviz.cli.app import app

        argv = ["report", str(trace), "--format", "json"]
        if index % 2:  # odd examples take the big-trace path: fast split, events read from
            # the file by 2 decode workers, and the analysis on 2 worker processes with host
            # wait in blocks of >= 256 events
            import importlib

            import traceviz.trace.loader as loader

            loader.PARALLEL_MIN_BYTES, loader.CHUNK_BYTES = 0, 4096
            importlib.import_module("traceviz.analyze.host_wait.blocks").MIN_BLOCK_EVENTS = 256
            argv += ["--workers", "2"]
        try:
            app(argv, prog_name="traceviz")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 98
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


@dataclass
class _Running:
    index: int
    started: float
    rss_at_fork: int


def _rss_now() -> int:
    """This process's resident set, in bytes."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _finish(index: int, status: int | None, rusage: Any, r: _Running, work: Path,
            out_dir: Path, reason_override: str | None = None) -> Outcome:
    meta = work / f"ex-{index}.meta"
    done = json.loads(meta.read_text()) if meta.exists() else []
    traces = [p for p in work.glob(f"ex-{index}.json*")]
    trace = traces[0] if traces else None
    json_bytes = 0
    if trace is not None:
        raw = trace.read_bytes()
        try:
            json_bytes = len(gzip.decompress(raw)) if raw[:2] == b"\x1f\x8b" else len(raw)
        except (OSError, EOFError, ValueError):
            json_bytes = len(raw)
    stdout = _read(work / f"ex-{index}.out")
    stderr = _read(work / f"ex-{index}.err")
    exit_code = None
    if status is not None:
        exit_code = os.waitstatus_to_exitcode(status)
    max_rss = rusage.ru_maxrss * 1024 if rusage is not None else 0
    growth = max(0, max_rss - r.rss_at_fork)
    if reason_override is not None:
        cls, reason = "FAILURE", reason_override
    else:
        cls, reason = classify(exit_code, stdout, stderr)
        if cls != "FAILURE" and growth > rss_bound(json_bytes):
            cls, reason = "FAILURE", (f"peak RSS growth {growth / 1e6:.0f} MB > bound "
                                      f"{rss_bound(json_bytes) / 1e6:.0f} MB")
    o = Outcome(index, cls, reason, exit_code, time.monotonic() - r.started, max_rss, growth,
                json_bytes, done)
    if cls == "FAILURE" and trace is not None:
        fail_dir = out_dir / "failures"
        fail_dir.mkdir(parents=True, exist_ok=True)
        kept = fail_dir / trace.name
        kept.write_bytes(trace.read_bytes())
        (fail_dir / f"ex-{index}.txt").write_text(
            f"mutations: {done}\nexit: {exit_code}\nreason: {reason}\n"
            f"replay: python -m benchmarks.fuzz --only {index} (with the campaign's --seed, "
            f"--max-events and --corpus; see fuzz-result.json 'replay')\n"
            f"--- stderr ---\n{stderr.decode('utf-8', 'replace')[-20000:]}"
        )
        o.reproducer = str(kept)
    for p in work.glob(f"ex-{index}.*"):
        p.unlink()
    return o


def _read(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError:
        return b""


def _warm_up(seed: Seed, out_dir: Path) -> None:
    """Import what a report needs once, here: forked children inherit it instead of paying
    the imports per example."""
    import contextlib
    import io

    from traceviz.cli.app import app

    p = out_dir / "warm-up.json"
    p.write_bytes(seed.text)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        app(["report", str(p), "--format", "json"], prog_name="traceviz")
    p.unlink()


def run_campaign(seeds: list[Seed], seed: int, indices: list[int], workers: int,
                 out_dir: Path, timeout_s: float = TIMEOUT_S,
                 progress_every: int = 500, budget_s: float | None = None) -> list[Outcome]:
    """Run the examples ``indices`` with at most ``workers`` forked children at a time.

    With ``budget_s``, no example starts after that many seconds: the campaign ends with the
    examples started by then (a prefix of ``indices``, each run to its end)."""
    _warm_up(seeds[0], out_dir)
    work = out_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    running: dict[int, _Running] = {}
    outcomes: list[Outcome] = []
    todo = list(reversed(indices))
    t0 = time.monotonic()
    while todo or running:
        if budget_s is not None and time.monotonic() - t0 > budget_s:
            todo.clear()
        while todo and len(running) < workers:
            index = todo.pop()
            rss = _rss_now()
            pid = os.fork()
            if pid == 0:
                _child(seeds, seed, index, work)
            running[pid] = _Running(index, time.monotonic(), rss)
        pid, status, rusage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for cpid, r in list(running.items()):
                if now - r.started > timeout_s:
                    os.kill(cpid, signal.SIGKILL)
                    _, _, ru = os.wait4(cpid, 0)
                    del running[cpid]
                    outcomes.append(_finish(r.index, None, ru, r, work, out_dir,
                                            f"hang: killed after {timeout_s:.0f} s"))
            time.sleep(0.002)
            continue
        r = running.pop(pid)
        outcomes.append(_finish(r.index, status, rusage, r, work, out_dir))
        if progress_every and len(outcomes) % progress_every == 0:
            fails = sum(o.cls == "FAILURE" for o in outcomes)
            print(f"fuzz: {len(outcomes)}/{len(indices)} examples, {fails} failures, "
                  f"{time.monotonic() - t0:.0f} s", file=sys.stderr)
    outcomes.sort(key=lambda o: o.index)
    return outcomes


def summarise(outcomes: list[Outcome], seed: int, workers: int, wall_s: float,
              seeds: list[Seed], timeout_s: float) -> dict[str, Any]:
    counts = {c: sum(o.cls == c for o in outcomes) for c in CLASSES}
    failures = [asdict(o) for o in outcomes if o.cls == "FAILURE"]
    errors: dict[str, int] = {}
    for o in outcomes:
        if o.cls == "clean-error":
            key = o.reason.split(": ", 3)[-1].split(" (")[0][:60]  # without the path
            errors[key] = errors.get(key, 0) + 1
    return {
        "examples": len(outcomes),
        "failures": counts["FAILURE"],
        "counts": counts,
        "seed": seed,
        "workers": workers,
        "wall_s": round(wall_s, 1),
        "examples_per_s": round(len(outcomes) / wall_s, 2) if wall_s else None,
        "timeout_s": timeout_s,
        "rss_bound": f"{RSS_FACTOR} x JSON bytes + {RSS_SLACK_BYTES // 2**20} MiB",
        "max_rss_mb": round(max((o.max_rss_bytes for o in outcomes), default=0) / 1e6, 1),
        "max_rss_growth_mb": round(
            max((o.rss_growth_bytes for o in outcomes), default=0) / 1e6, 1),
        "slowest_s": round(max((o.seconds for o in outcomes), default=0.0), 2),
        "corpus": [s.name for s in seeds],
        "top_clean_errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])[:15]),
        "failure_list": failures[:200],
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - wall_s)),
    }


def _git_commit() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first example index")
    ap.add_argument("--only", type=int, action="append", help="replay these example indices")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per example")
    ap.add_argument("--max-events", type=int, default=5000,
                    help="timed events kept per corpus trace (0: all); metadata rows always")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no example after this many seconds (the result records how "
                    "many ran)")
    ap.add_argument("--corpus", type=Path, action="append",
                    help="folder of traces (repeatable; default tests/data/gpu and "
                    "../shared/cases/hta)")
    args = ap.parse_args(argv)
    seeds = load_corpus(args.corpus or list(CORPUS_DIRS), args.max_events)
    if not seeds:
        print("fuzz: no corpus traces found", file=sys.stderr)
        return 2
    indices = args.only or list(range(args.start, args.start + args.examples))
    args.out.mkdir(parents=True, exist_ok=True)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    t0 = time.monotonic()
    outcomes = run_campaign(seeds, args.seed, indices, max(1, args.workers), args.out,
                            args.timeout, budget_s=args.budget_s)
    result = summarise(outcomes, args.seed, args.workers, time.monotonic() - t0, seeds,
                       args.timeout)
    result["requested_examples"] = len(indices)
    result["budget_s"] = args.budget_s
    result["replay"] = (f"python -m benchmarks.fuzz --only INDEX --seed {args.seed} "
                        f"--max-events {args.max_events} --out replay "
                        + " ".join(f"--corpus {d}" for d in args.corpus or CORPUS_DIRS))
    (args.out / "fuzz-result.json").write_text(json.dumps(result, indent=2) + "\n")
    c = result["counts"]
    print(f"fuzz: {result['examples']} examples in {result['wall_s']} s "
          f"({result['examples_per_s']}/s, {args.workers} workers, seed {args.seed}): "
          f"ok {c['ok']}, ok-health {c['ok-health']}, clean-error {c['clean-error']}, "
          f"FAILURE {c['FAILURE']}; max RSS {result['max_rss_mb']} MB "
          f"(growth {result['max_rss_growth_mb']} MB); "
          f"result {args.out / 'fuzz-result.json'}")
    for f in result["failure_list"][:20]:
        print(f"  FAILURE ex {f['index']}: {f['reason']}  ({'; '.join(f['mutations'])})",
              file=sys.stderr)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

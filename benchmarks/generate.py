"""Build large Kineto traces by replicating the profiler steps of a real one.

The events of the step window (CPU ops and annotations, runtime/driver calls, the GPU
activities they launched, their flows) form a *template* that is written ``copies`` times,
copy ``k`` shifted by ``k × period_ns`` in time, its ``args.correlation`` / flow ``id`` by
``k × id_stride``, its ``args["External id"]`` by ``k × ext_stride`` and its
``ProfilerStep#N`` names by ``k × step_stride``, so launches, GPU work, flows and steps stay
linked inside each copy and never collide across copies.  Everything else is written once:
``M`` metadata rows; events before the window unchanged; events after it shifted past the
last copy; events that span the whole window (the ``Trace`` span) with their ``dur`` extended.

Classification of an event (``ph`` other than ``M``):

* events carrying a correlation (``args.correlation``, or the ``id`` of an ``ac2g`` /
  ``async_cpu_to_gpu`` flow) follow the runtime/driver call with that correlation, so GPU work
  launched inside the window is replicated even when it runs past the window's end;
* every other event (and orphan correlations) goes by its start time: before the window,
  inside it ``[W0, W1)``, or after it; an ``X`` event that starts before ``W0`` and ends after
  ``W1`` spans the window.

The period is the largest of the step period (window length plus the smallest gap between
consecutive steps) and the extent of the template on each (pid, tid) lane, so copies never
overlap on a CPU thread or a GPU stream.  All time arithmetic is in integer nanoseconds;
``ts`` is written back the way Kineto writes it (``"{us}.{ns:03}"``, or integer microseconds
where the source had integers).

The output is streamed: the template is serialised once into a ``bytes`` %-format string and
each copy is one C-level ``template % values`` call, so a 1 GB trace is written without ever
holding more than one copy in memory.  Sizes are decimal: ``10MB`` = 10 × 10⁶ bytes of
uncompressed JSON.

Usage::

    python -m benchmarks.generate --size 100MB            # → benchmarks/data/eager-100MB.json
    python -m benchmarks.generate --source cudagraph --copies 10 --gzip
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import msgspec
from isal import igzip, igzip_threaded

#: Bump when the output of :func:`replicate` changes, so cached files are rebuilt.
GENERATOR_VERSION = 2

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "benchmarks" / "data"
SHARED_CASES = Path("/work/shared/cases/hta")

_GPU_DATA = REPO / "tests" / "data" / "gpu"
#: Named sources: first existing path wins.  ``tests/data/gpu/`` holds the project's own
#: captured GPU traces (torch 2.11, H200); HTA's test traces (A100/V100, 2022–2024) are the
#: fallback and can be asked for by name.
SOURCES: dict[str, tuple[Path, ...]] = {
    "eager": (
        _GPU_DATA / "elementwise_eager.pt.trace.json.gz",
        SHARED_CASES / "a100_eager_nccl_2024_rank0.json.gz",
    ),
    "cudagraph": (
        _GPU_DATA / "elementwise_cudagraph.pt.trace.json.gz",
        SHARED_CASES / "v100_compiled_cudagraph_nccl_rank1.json.gz",
    ),
    "hta-eager": (SHARED_CASES / "a100_eager_nccl_2024_rank0.json.gz",),
    "hta-cudagraph": (SHARED_CASES / "v100_compiled_cudagraph_nccl_rank1.json.gz",),
}

_STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
_CORRELATED_FLOW_CATS = frozenset({"ac2g", "async_cpu_to_gpu", "async"})
_RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver", "runtime"})
_EXT_KEYS = ("External id", "external id")
_GRAPH_LAUNCH = re.compile(r"^(cudaGraphLaunch|cuGraphLaunch|hipGraphLaunch)(_v\d+|_ptsz|_ptds)*$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]?B)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9}

# Placeholders put into an event before serialising it; replaced by %-format directives.
_PH = {kind: f"\u0001{kind}\u0001" for kind in ("TS", "TSI", "CORR", "ID", "EXT", "STEP")}
_PH_RE = re.compile(rb'"\\u0001(TS|TSI|CORR|ID|EXT|STEP)\\u0001"')
_PH_FORMAT = {
    b"TS": b"%d.%03d",  # two slots: microseconds, nanoseconds
    b"TSI": b"%d",
    b"CORR": b"%d",
    b"ID": b"%d",
    b"EXT": b"%d",
    b"STEP": b'"ProfilerStep#%d"',
}


class GeneratorError(Exception):
    """The source trace cannot be replicated (no steps, non-integer ids, …)."""


def parse_size(text: str) -> int:
    """``"10MB"`` → 10_000_000 bytes (decimal units B, KB, MB, GB)."""
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 10MB, 1GB)")
    return int(float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "B").upper()])


def size_label(n_bytes: int) -> str:
    """10_000_000 → ``"10MB"`` (inverse of :func:`parse_size` for round sizes)."""
    for unit in ("GB", "MB", "KB"):
        if n_bytes % _SIZE_UNITS[unit] == 0:
            return f"{n_bytes // _SIZE_UNITS[unit]}{unit}"
    return f"{n_bytes}B"


def resolve_source(name_or_path: str) -> Path:
    """A named source (``eager``, ``cudagraph``) or a path to a ``.json``/``.json.gz`` trace."""
    if name_or_path in SOURCES:
        for path in SOURCES[name_or_path]:
            if path.exists():
                return path
        raise GeneratorError(f"no file for source {name_or_path!r}: {SOURCES[name_or_path]}")
    path = Path(name_or_path)
    if not path.exists():
        raise GeneratorError(f"source trace not found: {path}")
    return path


def read_trace_bytes(path: Path) -> bytes:
    """The uncompressed JSON bytes of a ``.json`` or gzip file (gzip sniffed by magic)."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        with igzip.open(path, "rb") as gz:
            return gz.read()
    return path.read_bytes()


def _raw_number(text: str) -> msgspec.Raw:
    """Keep a JSON float's exact text (re-encoded verbatim, parsed exactly for ``ts``)."""
    return msgspec.Raw(text.encode())


def load_source(path: Path) -> dict[str, Any]:
    """Decode a Kineto trace keeping float literals verbatim (as :class:`msgspec.Raw`)."""
    doc = json.loads(read_trace_bytes(path), parse_float=_raw_number)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise GeneratorError(f"{path}: not a Kineto trace object with a traceEvents list")
    return doc


def _to_ns(value: Any) -> tuple[int, bool]:
    """A ``ts``/``dur`` value in µs → (exact integer ns, was it an integer in the file)."""
    if isinstance(value, msgspec.Raw):
        return int((Decimal(bytes(value).decode()) * 1000).to_integral_value()), False
    if isinstance(value, int):
        return value * 1000, True
    raise GeneratorError(f"unexpected time value {value!r}")


def _fmt_us(ns: int, as_int: bool) -> msgspec.Raw:
    """Integer ns → Kineto's µs literal: ``"{us}.{ns:03}"``, or ``"{us}"`` for integer sources."""
    us, rem = divmod(ns, 1000)
    if as_int and rem == 0:
        return msgspec.Raw(str(us).encode())
    return msgspec.Raw(f"{us}.{rem:03}".encode())


def _ext_key(args: dict[str, Any]) -> str | None:
    return next((k for k in _EXT_KEYS if k in args), None)


@dataclass(frozen=True)
class ReplicationPlan:
    """Where the template sits and how copies are shifted.  Times in ns, ids are strides."""

    window_start_ns: int
    window_end_ns: int
    period_ns: int
    id_stride: int
    ext_stride: int
    step_stride: int
    steps: tuple[str, ...]
    graph_launches: int
    n_template: int
    n_before: int
    n_after: int
    n_spanning: int
    n_metadata: int


@dataclass(frozen=True)
class GeneratedTrace:
    """What :func:`replicate` wrote; ``bytes``/``gz_bytes`` are file sizes in bytes."""

    path: str
    gz_path: str | None
    source: str
    source_sha256: str
    copies: int
    events: int
    bytes: int
    gz_bytes: int | None
    seconds: float
    generator_version: int
    plan: ReplicationPlan


class _Template:
    """The template events as one ``bytes`` %-format string plus its slot values.

    Each slot is an integer: base value plus ``k × stride`` for copy ``k``; a ``ts`` slot pair
    (µs, ns) is computed from one integer ns time.
    """

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.kinds: list[bytes] = []  # one per placeholder, in order of appearance
        self.bases: list[int] = []

    def add(self, encoded: bytes, values: dict[bytes, int]) -> None:
        """Add one event serialised with placeholders; ``values`` maps kind → base value."""
        escaped = encoded.replace(b"%", b"%%")

        def sub(m: re.Match[bytes]) -> bytes:
            kind = m.group(1)
            self.kinds.append(kind)
            self.bases.append(values[kind])
            return _PH_FORMAT[kind]

        self.parts.append(_PH_RE.sub(sub, escaped))

    def compile(self, period_ns: int, id_stride: int, ext_stride: int, step_stride: int) -> None:
        """Freeze the format string and per-slot strides (one slot per kind occurrence)."""
        self.format = b",\n".join(self.parts)
        stride = {
            b"TS": period_ns,
            b"TSI": period_ns,
            b"CORR": id_stride,
            b"ID": id_stride,
            b"EXT": ext_stride,
            b"STEP": step_stride,
        }
        self.strides = [stride[k] for k in self.kinds]

    def render(self, k: int) -> bytes:
        """The template's events for copy ``k`` (comma-separated, no brackets)."""
        values: list[int] = []
        for kind, base, stride in zip(self.kinds, self.bases, self.strides, strict=True):
            v = base + k * stride
            if kind == b"TS":
                values.extend(divmod(v, 1000))
            elif kind == b"TSI":
                values.append(v // 1000)
            else:
                values.append(v)
        return self.format % tuple(values)


def _lane(ev: dict[str, Any]) -> tuple[str, str]:
    return (str(ev.get("pid")), str(ev.get("tid")))


def _correlation(ev: dict[str, Any]) -> int | None:
    """The CUPTI correlation id an event carries (args.correlation or a launch-flow id)."""
    args = ev.get("args")
    if isinstance(args, dict) and isinstance(args.get("correlation"), int):
        return args["correlation"]
    if ev.get("ph") in ("s", "f") and ev.get("cat") in _CORRELATED_FLOW_CATS:
        flow_id = ev.get("id")
        return flow_id if isinstance(flow_id, int) else None
    return None


def plan_replication(events: list[dict[str, Any]]) -> tuple[ReplicationPlan, list[str]]:
    """Classify every event and compute the shifts; returns the plan and one class per event.

    Classes: ``"M"`` metadata, ``"before"``, ``"template"``, ``"span"``, ``"after"``.
    """
    steps = [
        ev
        for ev in events
        if ev.get("ph") == "X"
        and ev.get("cat") != "gpu_user_annotation"
        and isinstance(ev.get("name"), str)
        and _STEP_NAME.match(ev["name"])
    ]
    if not steps:
        raise GeneratorError("the source has no ProfilerStep#N CPU annotations to replicate")
    spans = sorted((_to_ns(s["ts"])[0], _to_ns(s["ts"])[0] + _to_ns(s["dur"])[0]) for s in steps)
    w0, w1 = spans[0][0], max(end for _, end in spans)
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(spans)]
    step_gap = max(0, min(gaps)) if gaps else 0
    numbers = [int(_STEP_NAME.match(s["name"]).group(1)) for s in steps]  # type: ignore[union-attr]

    def by_time(start: int, end: int) -> str:
        if start < w0:
            return "span" if end > w1 else "before"
        return "template" if start < w1 else "after"

    corr_class: dict[int, str] = {}
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat", "").lower() in _RUNTIME_CATS:
            corr = _correlation(ev)
            if corr is not None:
                corr_class[corr] = by_time(_to_ns(ev["ts"])[0], _to_ns(ev["ts"])[0])

    classes: list[str] = []
    graph_launches = 0
    lanes: dict[tuple[str, str], list[int]] = {}
    max_id = max_ext = 0
    for ev in events:
        if ev.get("ph") == "M" or "ts" not in ev:
            classes.append("M")
            continue
        start = _to_ns(ev["ts"])[0]
        end = start + (_to_ns(ev["dur"])[0] if "dur" in ev else 0)
        corr = _correlation(ev)
        cls = corr_class.get(corr, by_time(start, end)) if corr is not None else by_time(start, end)
        classes.append(cls)
        if cls != "template":
            continue
        if ev.get("cat", "").lower() in _RUNTIME_CATS and _GRAPH_LAUNCH.match(ev.get("name", "")):
            graph_launches += 1
        lane = lanes.setdefault(_lane(ev), [start, end])
        lane[0], lane[1] = min(lane[0], start), max(lane[1], end)
        if corr is not None:
            max_id = max(max_id, corr)
        if ev.get("ph") in ("s", "f"):
            if not isinstance(ev.get("id"), int):
                raise GeneratorError(f"flow event with a non-integer id: {ev!r}")
            max_id = max(max_id, ev["id"])
        args = ev.get("args")
        key = _ext_key(args) if isinstance(args, dict) else None
        if key is not None:
            if not isinstance(args[key], int):  # type: ignore[index]
                raise GeneratorError(f"non-integer External id: {ev!r}")
            max_ext = max(max_ext, args[key])  # type: ignore[index]
    lane_extent = max(end - start for start, end in lanes.values())
    period = max(w1 - w0 + step_gap, lane_extent)
    plan = ReplicationPlan(
        window_start_ns=w0,
        window_end_ns=w1,
        period_ns=period,
        id_stride=max_id + 1,
        ext_stride=max_ext + 1,
        step_stride=max(numbers) - min(numbers) + 1,
        steps=tuple(s["name"] for s in sorted(steps, key=lambda s: _to_ns(s["ts"])[0])),
        graph_launches=graph_launches,
        n_template=classes.count("template"),
        n_before=classes.count("before"),
        n_after=classes.count("after"),
        n_spanning=classes.count("span"),
        n_metadata=classes.count("M"),
    )
    return plan, classes


def _templated(ev: dict[str, Any]) -> tuple[dict[str, Any], dict[bytes, int]]:
    """A copy of ``ev`` with placeholders in its shifted fields, and their base values."""
    out = dict(ev)
    values: dict[bytes, int] = {}
    ts_ns, ts_int = _to_ns(ev["ts"])
    kind = "TSI" if ts_int else "TS"
    out["ts"] = _PH[kind]
    values[kind.encode()] = ts_ns
    if ev.get("ph") in ("s", "f"):
        out["id"] = _PH["ID"]
        values[b"ID"] = ev["id"]
    name = ev.get("name")
    m = _STEP_NAME.match(name) if isinstance(name, str) else None
    if m:
        out["name"] = _PH["STEP"]
        values[b"STEP"] = int(m.group(1))
    args = ev.get("args")
    if isinstance(args, dict):
        new_args = dict(args)
        if isinstance(args.get("correlation"), int):
            new_args["correlation"] = _PH["CORR"]
            values[b"CORR"] = args["correlation"]
        key = _ext_key(args)
        if key is not None:
            new_args[key] = _PH["EXT"]
            values[b"EXT"] = args[key]
        out["args"] = new_args
    return out, values


def _shifted(ev: dict[str, Any], shift_ns: int, extend_ns: int = 0) -> dict[str, Any]:
    """``ev`` moved by ``shift_ns`` and its ``dur`` lengthened by ``extend_ns``."""
    if not shift_ns and not extend_ns:
        return ev
    out = dict(ev)
    ts_ns, ts_int = _to_ns(ev["ts"])
    out["ts"] = _fmt_us(ts_ns + shift_ns, ts_int)
    if extend_ns and "dur" in ev:
        dur_ns, dur_int = _to_ns(ev["dur"])
        out["dur"] = _fmt_us(dur_ns + extend_ns, dur_int)
    return out


def encode_event(ev: dict[str, Any]) -> bytes:
    """Serialise one event laid out like Kineto's writer (indented, ``", "`` separators)."""
    enc = msgspec.json.encode
    fields = b", ".join(enc(k) + b": " + enc(v) for k, v in ev.items() if k != "args")
    out = b"  {\n    " + fields
    args = ev.get("args")
    if isinstance(args, dict):
        items = b", ".join(enc(k) + b": " + enc(v) for k, v in args.items())
        out += b',\n    "args": {\n      ' + items + b"\n    }"
    return out + b"\n  }"


def copies_for_size(target_bytes: int, fixed_bytes: int, per_copy_bytes: int) -> int:
    """Number of copies whose output is closest to ``target_bytes`` (at least 1)."""
    return max(1, round((target_bytes - fixed_bytes) / per_copy_bytes))


class _Sink:
    """Writes the same bytes to the ``.json`` file and, optionally, a gzip twin."""

    def __init__(self, path: Path, gz_path: Path | None) -> None:
        self.fh: IO[bytes] = path.open("wb")
        self.gz: IO[bytes] | None = (
            igzip_threaded.open(gz_path, "wb", compresslevel=1, threads=1) if gz_path else None
        )

    def write(self, data: bytes) -> None:
        self.fh.write(data)
        if self.gz is not None:
            self.gz.write(data)

    def close(self) -> None:
        self.fh.close()
        if self.gz is not None:
            self.gz.close()


def _write_events(sink: _Sink, chunks: Iterable[bytes], first: bool) -> bool:
    for chunk in chunks:
        if not chunk:
            continue
        sink.write(chunk if first else b",\n" + chunk)
        first = False
    return first


def replicate(
    source: Path,
    out: Path,
    *,
    copies: int | None = None,
    target_bytes: int | None = None,
    gzip_out: bool = False,
) -> GeneratedTrace:
    """Write ``out`` (and ``out.gz`` when ``gzip_out``) with the source's steps replicated.

    Give either ``copies`` or ``target_bytes`` (uncompressed size to approach).
    """
    if (copies is None) == (target_bytes is None):
        raise ValueError("give exactly one of copies, target_bytes")
    t0 = time.perf_counter()
    raw = source.read_bytes()
    doc = load_source(source)
    events: list[dict[str, Any]] = doc["traceEvents"]
    plan, classes = plan_replication(events)
    encode = msgspec.json.encode
    template = _Template()
    meta, before, span, after = [], [], [], []
    for ev, cls in zip(events, classes, strict=True):
        if cls == "template":
            templated, values = _templated(ev)
            template.add(encode_event(templated), values)
        elif cls == "M":
            meta.append(ev)
        elif cls == "before":
            before.append(ev)
        elif cls == "span":
            span.append(ev)
        else:
            after.append(ev)
    template.compile(plan.period_ns, plan.id_stride, plan.ext_stride, plan.step_stride)
    header = [(k, v) for k, v in doc.items()]
    fixed = [encode_event(e) for e in meta + before + span + after]
    fixed_bytes = sum(len(b) + 2 for b in fixed) + sum(len(encode(v)) for _, v in header)
    if copies is None:
        assert target_bytes is not None
        copies = copies_for_size(target_bytes, fixed_bytes, len(template.render(0)) + 2)
    extend = (copies - 1) * plan.period_ns

    out.parent.mkdir(parents=True, exist_ok=True)
    gz_path = out.with_name(out.name + ".gz") if gzip_out else None
    sink = _Sink(out, gz_path)
    try:
        sink.write(b"{\n")
        for i, (key, value) in enumerate(header):
            sep = b",\n" if i else b""
            if key != "traceEvents":
                sink.write(sep + encode(key) + b": " + encode(value))
                continue
            sink.write(sep + b'"traceEvents": [\n')
            first = _write_events(sink, (encode_event(e) for e in meta + before), True)
            spanning = (encode_event(_shifted(e, 0, extend)) for e in span)
            first = _write_events(sink, spanning, first)
            first = _write_events(sink, (template.render(k) for k in range(copies)), first)
            _write_events(sink, (encode_event(_shifted(e, extend)) for e in after), first)
            sink.write(b"\n]")
        sink.write(b"\n}\n")
    finally:
        sink.close()
    return GeneratedTrace(
        path=str(out),
        gz_path=str(gz_path) if gz_path else None,
        source=str(source),
        source_sha256=hashlib.sha256(raw).hexdigest(),
        copies=copies,
        events=len(events) + (copies - 1) * plan.n_template,
        bytes=out.stat().st_size,
        gz_bytes=gz_path.stat().st_size if gz_path else None,
        seconds=time.perf_counter() - t0,
        generator_version=GENERATOR_VERSION,
        plan=plan,
    )


def meta_path(out: Path) -> Path:
    """The sidecar JSON that records how ``out`` was generated."""
    return out.with_name(out.name + ".meta.json")


def generate_cached(
    source: Path, out: Path, *, target_bytes: int | None = None, copies: int | None = None
) -> GeneratedTrace:
    """Like :func:`replicate` with ``gzip_out=True``, reusing ``out`` when its sidecar matches."""
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    side = meta_path(out)
    if side.exists() and out.exists() and out.with_name(out.name + ".gz").exists():
        info = json.loads(side.read_text())
        want = {"source_sha256": sha, "generator_version": GENERATOR_VERSION}
        if all(info.get(k) == v for k, v in want.items()) and (
            info.get("target_bytes") == target_bytes and info.get("requested_copies") == copies
        ):
            plan = ReplicationPlan(**{**info["plan"], "steps": tuple(info["plan"]["steps"])})
            fields = {k: info[k] for k in GeneratedTrace.__dataclass_fields__ if k != "plan"}
            return GeneratedTrace(**fields, plan=plan)
    gen = replicate(source, out, copies=copies, target_bytes=target_bytes, gzip_out=True)
    side.write_text(
        json.dumps({**asdict(gen), "target_bytes": target_bytes, "requested_copies": copies})
    )
    return gen


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m benchmarks.generate --size 100MB [--source cudagraph] [--gzip]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", default="eager", help=f"{', '.join(SOURCES)}, or a trace path")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--size", type=parse_size, help="target uncompressed size, e.g. 10MB, 1GB")
    g.add_argument("--copies", type=int, help="number of copies of the step window")
    p.add_argument("-o", "--out", type=Path, help="output .json (default benchmarks/data/…)")
    p.add_argument("--gzip", action="store_true", help="also write OUT.gz (isal, level 1)")
    a = p.parse_args(argv)
    try:
        source = resolve_source(a.source)
        label = size_label(a.size) if a.size else f"x{a.copies}"
        stem = a.source if a.source in SOURCES else source.name.split(".")[0]
        out = a.out or DATA_DIR / f"{stem}-{label}.json"
        gen = replicate(source, out, copies=a.copies, target_bytes=a.size, gzip_out=a.gzip)
    except GeneratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    mb = gen.bytes / 1e6
    print(
        f"{gen.path}: {gen.copies} copies of {len(gen.plan.steps)} steps, {gen.events} events, "
        f"{mb:.1f} MB"
        + (f", gz {gen.gz_bytes / 1e6:.1f} MB" if gen.gz_bytes else "")
        + f", period {gen.plan.period_ns / 1e6:.3f} ms, {gen.seconds:.1f} s "
        f"({mb / max(gen.seconds, 1e-9):.0f} MB/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The "fast parse reference": a typed msgspec decode of only the fields traceviz needs.

This is the floor a Python trace analyzer can hope to approach: one C-level pass that turns
the whole ``traceEvents`` array into a list of small typed structs (``ph, cat, name, pid,
tid, ts, dur, args.correlation, args["External id"]``), every other key skipped.  It does no
analysis; traceviz's end-to-end time is compared against it.

Gzip input is decompressed with isal (the fastest inflate available here) before decoding.

Usage: ``python -m benchmarks.msgspec_reference TRACE`` prints a JSON line with the event
count and the seconds spent reading (+ gunzipping) and decoding.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import msgspec
from isal import igzip


class Args(msgspec.Struct, gc=False):
    """The two linking ids of an event's ``args`` (absent ⇒ ``None``)."""

    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name="External id")


class Event(msgspec.Struct, gc=False):
    """One trace event; ``ts``/``dur`` in microseconds as written by Kineto."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    args: Args | None = None


class KinetoTrace(msgspec.Struct):
    """The top-level object; only ``traceEvents`` is decoded."""

    traceEvents: list[Event]


_DECODER = msgspec.json.Decoder(KinetoTrace)


def read_bytes(path: Path) -> bytes:
    """The file's uncompressed bytes (gzip sniffed by its magic and inflated with isal)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        return igzip.decompress(data)
    return data


def decode(data: bytes) -> list[Event]:
    """Decode a Kineto trace's events into typed structs."""
    return _DECODER.decode(data).traceEvents


def main(argv: list[str] | None = None) -> int:
    """Time read + decode of one trace; print ``{"events", "read_s", "decode_s"}``."""
    path = Path((argv or sys.argv[1:])[0])
    t0 = time.perf_counter()
    data = read_bytes(path)
    t1 = time.perf_counter()
    events = decode(data)
    t2 = time.perf_counter()
    print(json.dumps({"events": len(events), "read_s": t1 - t0, "decode_s": t2 - t1}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

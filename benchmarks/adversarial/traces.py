"""Category ``traces``: hostile trace files through ``report`` (JSON, text, Markdown),
``compare``, ``kernel-diff`` and ``export``.

Silently-wrong variants must be named (:func:`~.expect.names`): a duplicate top-level
``traceEvents`` key, scalar documents (called "not a trace", not "not JSON"), out-of-range,
non-finite, negative or string ``dur`` values, ``{"traceEvents": []}`` (the documented "no timed
events" error), ``B``/``E`` ``ProfilerStep`` spans (counted as steps, or named in health). Names
holding Rich markup must print verbatim; names holding ESC / OSC / BEL / C1 bytes must not reach
text or Markdown output raw. The rest (truncated gzip, not JSON, invalid UTF-8, nesting a few
thousand deep, megabyte names, a FIFO, a directory) must simply end cleanly.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.adversarial import fixtures as fx
from benchmarks.adversarial.expect import exits, names, no_bytes, shows, steps_total
from benchmarks.adversarial.harness import Case, Plan, Step, Verdict

CATEGORY = "traces"
T = "t.json"  # the hostile trace, in the work folder
GOOD = "good.pt.trace.json.gz"
#: Bytes that must not reach a terminal: ESC, BEL, and C1 CSI (U+009B) in UTF-8.
CONTROL_BYTES = (b"\x1b", b"\x07", b"\xc2\x9b")


def _doc_text(doc: object) -> bytes:
    return json.dumps(doc).encode()


def _events_json(doc: dict[str, object]) -> str:
    return json.dumps(doc["traceEvents"])


# --- writers: each writes work/t.json (or returns another path to use) --------------------------


def _dup_events(order: str, w: Path) -> str:
    """Two top-level ``traceEvents`` keys: the full array and an empty one (``full-first``:
    the empty one wins in a last-wins parser), or both full."""
    doc = fx.good_document()
    events = _events_json(doc)
    head = json.dumps({k: v for k, v in doc.items() if k != "traceEvents"})[:-1]
    first, second = {"full-first": (events, "[]"), "empty-first": ("[]", events),
                     "both-full": (events, events)}[order]
    (w / T).write_text(f'{head}, "traceEvents": {first}, "traceEvents": {second}}}')
    return T


def _scalar(text: str, w: Path) -> str:
    (w / T).write_text(text)
    return T


def _bad_dur(token: str, where: str, w: Path) -> str:
    """A ``dur`` written as ``token`` (raw JSON text) on one kernel, or on every kernel."""
    doc = fx.good_document()
    marker = 987654321.125
    hit = 0
    for ev in doc["traceEvents"]:
        if ev.get("cat") == "kernel" and (where == "all" or hit == 0):
            ev["dur"] = marker
            hit += 1
    (w / T).write_text(json.dumps(doc).replace(repr(marker), token))
    return T


def _no_events(w: Path) -> str:
    (w / T).write_text('{"traceEvents": []}')
    return T


def _begin_end(steps: int, paired_ends: bool, w: Path) -> str:
    fx.begin_end_steps(steps, paired_ends).write(w / T)
    return T


def _raw(data: bytes, w: Path, name: str = T) -> str:
    (w / name).write_bytes(data)
    return name


def _truncated_gzip(w: Path) -> str:
    data = gzip.compress(_doc_text(fx.good_document()))
    return _raw(data[: len(data) // 2], w, "t.json.gz")


def _gzip_garbage(w: Path) -> str:
    return _raw(gzip.compress(_doc_text(fx.good_document())) + b"garbage", w, "t.json.gz")


def _mislabelled_gzip(w: Path) -> str:
    return _raw(_doc_text(fx.good_document()), w, "t.json.gz")


def _non_utf8_names(w: Path) -> str:
    b = fx.named_trace("cpu_op_NAME1", "kernel_NAME2")
    text = json.dumps(b.document()).encode()
    return _raw(text.replace(b"NAME1", b"\xff\xfe\xc3(").replace(b"NAME2", b"\x80\xbf"), w)


def _truncated_json(w: Path) -> str:
    text = _doc_text(fx.good_document())
    return _raw(text[: len(text) * 2 // 3], w)


def _deep(depth: int, launches: int, w: Path) -> str:
    fx.deep_nesting(depth, launches).write(w / T)
    return T


def _named(cpu: str, kernel: str, w: Path) -> str:
    fx.named_trace(cpu, kernel).write(w / T)
    return T


def _huge_name(size: int, w: Path) -> str:
    fx.named_trace("aten::" + "c" * size, "k" * size).write(w / T)
    return T


def _fifo(w: Path) -> str:
    fx.fifo(w / "pipe.json")
    return "pipe.json"


def _directory(w: Path) -> str:
    (w / "dir.json").mkdir()
    return "dir.json"


def _symlink_loop(w: Path) -> str:
    (w / "loop.json").symlink_to("loop.json")
    return "loop.json"


def _huge_ints(w: Path) -> str:
    doc = fx.good_document()
    for ev in doc["traceEvents"][2:6]:
        ev["ts"] = 10**30
        ev.setdefault("args", {})["correlation"] = -(10**25)
    return _raw(_doc_text(doc), w)


def _events_not_list(value: str, w: Path) -> str:
    return _raw(f'{{"traceEvents": {value}}}'.encode(), w)


def _bom(w: Path) -> str:
    return _raw(b"\xef\xbb\xbf" + _doc_text(fx.good_document()), w)


# --- commands ---------------------------------------------------------------------------------

#: name → argv for a trace path (``GOOD`` is a good trace beside it).
COMMANDS: dict[str, Callable[[str], tuple[str, ...]]] = {
    "json": lambda t: ("report", t, "-f", "json"),
    "text": lambda t: ("report", t, "-f", "text"),
    "md": lambda t: ("report", t, "-f", "md"),
    "compare": lambda t: ("compare", GOOD, t, "-f", "json"),
    "compare-text": lambda t: ("compare", GOOD, t, "-f", "text"),
    "kernel-diff": lambda t: ("kernel-diff", GOOD, t, "-f", "text"),
    "kernel-diff-md": lambda t: ("kernel-diff", GOOD, t, "-f", "md"),
    "export": lambda t: ("export", t, "-o", "-"),
}


def _build(write: Callable[[Path], str], command: str, verdict: Verdict | None,
           expect: Verdict | None, root: Path) -> Plan:
    w = root / "work"
    fx.trace(w / GOOD)
    target = write(w)
    return Plan([Step(COMMANDS[command](target))], named=verdict, expect=expect)


def _case(cases: list[Case], name: str, write: Callable[[Path], str], commands: tuple[str, ...],
          problem: str | None = None, verdict: Verdict | None = None,
          expect: Verdict | None = None) -> None:
    for cmd in commands:
        cases.append(Case(f"{CATEGORY}/{name}/{cmd}", CATEGORY,
                          partial(_build, write, cmd, verdict, expect), silently_wrong=problem))


def cases() -> list[Case]:
    out: list[Case] = []
    dup = names(r"duplicate|twice|more than once|traceEvents.*(?:again|repeated)")
    for order in ("full-first", "empty-first", "both-full"):
        _case(out, f"duplicate-traceEvents-{order}", partial(_dup_events, order),
              ("json", "export", "compare"), "duplicate top-level traceEvents", dup)
    not_trace = names(r"not a (?:chrome |kineto |profiler )?trace|no traceEvents|"
                      r"not an? (?:json )?object", not_said=r"not (?:valid )?JSON\b")
    for label, text in (("null", "null"), ("number", "123"), ("string", '"x"'),
                        ("true", "true"), ("false", "false"), ("float", "1e400")):
        _case(out, f"scalar-{label}", partial(_scalar, text), ("json", "export"),
              "a scalar JSON document is not a trace", not_trace)
    # docs/reliability.md: a ts/dur that is not a number, not finite or out of range is
    # tolerated (turned to 0, a health warning), not a reason to refuse the trace.
    tolerated = exits(0)
    dur = names(r"\bdur\b|duration|infinit|\bnan\b|not finite|non-finite|out of range|"
                r"negative|not a number")
    for label, token in (("1e400", "1e400"), ("-1e400", "-1e400"), ("NaN", "NaN"),
                         ("Infinity", "Infinity"), ("negative", "-5000.0"),
                         ("string", '"abc"'), ("null", "null"),
                         ("1e30", "1e30"), ("bool", "true")):
        for where in ("one", "all"):
            _case(out, f"dur-{label}-{where}", partial(_bad_dur, token, where),
                  ("json",) if where == "one" else ("json", "text"),
                  f"a kernel dur of {token}", dur, expect=tolerated)
    _case(out, "empty-traceEvents", _no_events, ("json", "export", "compare"),
          "no timed events (documented error)", names(r"no (?:timed )?events|empty"))
    be = "B/E ProfilerStep spans"
    _case(out, "begin-end-steps-paired", partial(_begin_end, 5, True), ("json",), be,
          steps_total(5, r"\bB/E\b|begin/end|\"B\"|phase B|unpaired|unmatched"))
    _case(out, "begin-end-steps-unmatched", partial(_begin_end, 5, False), ("json",), be,
          steps_total(4, r"\bB/E\b|begin/end|\"B\"|phase B|unpaired|unmatched|without (an )?"
                         r"end"))
    clean = ("json", "text", "export")
    _case(out, "dur-string-number", partial(_bad_dur, '"12.5"', "all"), ("json",))  # read as 12.5
    _case(out, "truncated-gzip", _truncated_gzip, clean)
    _case(out, "gzip-then-garbage", _gzip_garbage, ("json", "export"))
    _case(out, "gz-name-plain-json", _mislabelled_gzip, ("json",))
    _case(out, "not-json", partial(_raw, b"hello, I am not a trace\n"), clean)
    _case(out, "empty-file", partial(_raw, b""), ("json", "export"))
    _case(out, "binary-junk", partial(_raw, bytes(range(256)) * 64), ("json",))
    _case(out, "truncated-json", _truncated_json, ("json", "text"))
    _case(out, "non-utf8-names", _non_utf8_names, ("json", "text", "md", "export"))
    _case(out, "huge-ints", _huge_ints, ("json", "text"))
    _case(out, "traceEvents-object", partial(_events_not_list, "{}"), ("json",))
    _case(out, "traceEvents-string", partial(_events_not_list, '"x"'), ("json",))
    _case(out, "utf8-bom", _bom, ("json",))
    for depth, launches in ((3000, 200), (5000, 1000)):
        _case(out, f"deep-nesting-{depth}x{launches}", partial(_deep, depth, launches),
              ("json", "text"))
    markup = (("close-tag", "[/bold]evil_op", "[/bold]evil_kernel", "evil"),
              ("param-cuda", "[param|cuda]", "[param|cuda]k", "param"),
              ("style", "[red]op[/red]", "[bold red]kern[/]", "kern"),
              ("link", "[link=https://example.com]op", "[link=https://example.com]kern",
               "example.com"))
    for label, cpu, kernel, word in markup:
        _case(out, f"markup-{label}", partial(_named, cpu, kernel), ("text",),
              expect=shows(kernel, cpu))  # the CPU op as a host-wait source
        _case(out, f"markup-{label}", partial(_named, cpu, kernel), ("kernel-diff",),
              expect=shows(kernel))
        _case(out, f"markup-{label}", partial(_named, cpu, kernel), ("md",), expect=shows(word))
        _case(out, f"markup-{label}", partial(_named, cpu, kernel), ("compare-text",))
    escapes = (("esc-clear", "\x1b[2J\x1b[H"), ("osc-title", "\x1b]0;pwned\x07"),
               ("bel", "\x07\x07"), ("c1-csi", "\x9b31m"), ("esc-colour", "\x1b[31mred"))
    for label, seq in escapes:
        _case(out, f"control-{label}", partial(_named, f"op{seq}x", f"kern{seq}y"),
              ("text", "md", "kernel-diff", "kernel-diff-md", "compare-text"),
              expect=no_bytes(*CONTROL_BYTES))
    _case(out, "huge-names-1MB", partial(_huge_name, 1 << 20), ("json", "text"))
    _case(out, "fifo", _fifo, ("json", "compare", "export"))
    _case(out, "directory", _directory, ("json", "kernel-diff", "export"))
    _case(out, "symlink-loop", _symlink_loop, ("json", "export"))
    return out

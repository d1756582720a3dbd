"""Source labels: what each CPU event is called in the host-wait tables (its name, prefixed
by the compiled region it runs in; object addresses dropped), the per-block label ids, and
the short display form of a label."""

from __future__ import annotations

import re

import numpy as np

from traceviz.analyze.host_wait.grouping import _unique_pairs
from traceviz.vocab import COMPILED_FX_GRAPH_PREFIX, COMPILED_REGION

#: Source of time when no CPU event is open on the launch thread.
UNTRACED = "(python / untraced)"
#: Separator between a compiled region and what ran inside it.
IN_REGION = " › "
#: Leaf name of copies inside a CompiledFxGraph call (CUDA-graph input copies).
INPUT_COPIES = "input copies"


#: `` at 0x7eff10006e40`` in ``<built-in method add_ of Tensor object at 0x…>``: an object
#: address, different in every run, so it is dropped from the source name.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>$)")


def _short(name: str) -> str:
    """``## Call CompiledFxGraph fxyz… ##`` → ``CompiledFxGraph fxyz…`` (first 8 chars); object
    addresses dropped from Python built-in frames (so sources match across runs)."""
    if name.startswith(COMPILED_FX_GRAPH_PREFIX):
        h = name[len(COMPILED_FX_GRAPH_PREFIX):].strip(" #")
        return f"CompiledFxGraph {h[:8]}" if h else "CompiledFxGraph"
    return _ADDRESS.sub("", name)


#: A Python frame as the profiler names it: ``path/to/file.py(LINE): function``.
_FRAME = re.compile(r"^(?P<path>.+?)\((?P<line>\d+)\): (?P<func>.*)$")
#: ``<built-in method NAME of TYPE object>``: the type is often a long pybind11 record name.
_BUILTIN_METHOD = re.compile(r"^<built-in method (?P<name>\S*) of .+>$")
#: Longest file stem shown (generated inductor modules are named by a 52-char hash).
_MAX_STEM = 24


def display_name(source: str) -> str:
    """Short form of a source label for tables, figures and sentences; the label itself (JSON,
    comparisons) is unchanged. Per part of a ``region › name`` label: a Python frame keeps its
    file name and line (``/work/main/workloads/train_step.py(30): step`` →
    ``train_step.py(30): step``; a stem over 24 characters is cut to 23 and ``…``), a
    built-in method drops its type (``<built-in method add_>``, ``<built-in method (unnamed)>``
    for an empty name); other names are kept."""
    return IN_REGION.join(_display_part(p) for p in source.split(IN_REGION))


def _display_part(name: str) -> str:
    if m := _FRAME.match(name):
        file = m["path"].replace("\\", "/").rsplit("/", 1)[-1]
        stem, dot, ext = file.rpartition(".")
        if not dot:
            stem, ext = file, ""
        if len(stem) > _MAX_STEM:
            stem = stem[:_MAX_STEM - 1] + "…"
        return f"{stem}{dot}{ext}({m['line']}): {m['func']}"
    if m := _BUILTIN_METHOD.match(name):
        return f"<built-in method {m['name'] or '(unnamed)'}>"
    return name


def _region_label(names: list[str], region_name: int, fx_name: int, name: int) -> str:
    """Label of an event: its name, prefixed by the compiled region it runs in (if any);
    copies inside a CompiledFxGraph call are that region's ``input copies``. A compiled
    region marker is named by itself, also when nested in another region."""
    own = _short(names[name])
    if COMPILED_REGION.match(names[name]):
        return own
    region = names[region_name] if region_name >= 0 else (
        _short(names[fx_name]) if fx_name >= 0 else None)
    if region is None:
        return own
    leaf = INPUT_COPIES if fx_name >= 0 and "copy" in names[name].lower() else own
    return f"{region}{IN_REGION}{leaf}"


class _Labels:
    """One block's label ids: each distinct label (:func:`_region_label` of an event's
    (region, CompiledFxGraph, name) codes, or :data:`UNTRACED`) gets one id, in the order
    first met (the merge maps every block's labels onto the sorted sources)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.ids: dict[str, int] = {}

    def of(self, region: np.ndarray, fx: np.ndarray, name: np.ndarray) -> np.ndarray:
        """Label id per event, from its code arrays (one label per distinct triple)."""
        r, f, rf = _unique_pairs(region, fx)
        rfi, own, inv = _unique_pairs(rf, name)
        triples = zip(r[rfi].tolist(), f[rfi].tolist(), own.tolist(), strict=True)
        ids = [self.ids.setdefault(_region_label(self.names, *t), len(self.ids))
               for t in triples]
        return np.array(ids, np.int64)[inv] if ids else np.zeros(0, np.int64)

    def untraced(self) -> int:
        return self.ids.setdefault(UNTRACED, len(self.ids))

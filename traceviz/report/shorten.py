"""Shortening long names (kernels, call paths) for display so distinct names stay distinct.

Kernel names share long prefixes (``void at::native::vectorized_elementwise_kernel<4, …``) and
often differ only in the middle (the functor) or at the end (the template arguments); cutting
the tail off makes several rows read the same. :func:`shorten_names` keeps the head and the
tail around a middle ellipsis, and where two different names would still read the same, shows
the part where each differs from its nearest neighbour; failing that, the whole name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

ELLIPSIS = "…"
#: Narrowest width a name is shortened to (head + "…" + tail need some room).
MIN_WIDTH = 12


def middle_ellipsis(name: str, width: int) -> str:
    """``name`` whole when at most ``width`` characters, else its head and tail around "…"
    (``width`` characters in all; the tail gets the extra character)."""
    width = max(width, MIN_WIDTH)
    if len(name) <= width:
        return name
    keep = width - 1
    head = keep // 2
    return name[:head] + ELLIPSIS + name[len(name) - (keep - head):]


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _around(name: str, at: int, width: int) -> str:
    """Head, "…", the text from just before index ``at`` (where ``name`` differs from its
    nearest neighbour), "…", tail: ``width`` characters at most (one "…" when the difference
    lies close enough to the end)."""
    if len(name) <= width:
        return name
    budget = width - 2
    head = tail = budget // 4
    mid = budget - head - tail
    start = max(head, at - mid // 4)
    if start + mid >= len(name) - tail:  # the window reaches the tail: keep it all
        return name[:width - 1 - (len(name) - start)] + ELLIPSIS + name[start:]
    return name[:head] + ELLIPSIS + name[start:start + mid] + ELLIPSIS + name[len(name) - tail:]


def shorten_names(names: Sequence[str], width: int) -> list[str]:
    """Each name shortened to at most ``width`` characters (:func:`middle_ellipsis`) such that
    different names never read the same (equal names stay equal); a name that cannot be told
    apart within ``width`` is shown whole."""
    width = max(width, MIN_WIDTH)
    unique = list(dict.fromkeys(names))
    shown = {n: middle_ellipsis(n, width) for n in unique}
    for _ in range(2):  # middle ellipsis, then the differing part; whole names after that
        clashes = _clashes(shown)
        if not clashes:
            break
        for group in clashes:
            for n in group:
                at = max(_common_prefix(n, o) for o in group if o != n)
                shown[n] = _around(n, at, width)
    for group in _clashes(shown):
        for n in group:
            shown[n] = n
    return [shown[n] for n in names]


def _clashes(shown: dict[str, str]) -> list[list[str]]:
    """Groups of different names shown the same."""
    by_text: dict[str, list[str]] = defaultdict(list)
    for name, text in shown.items():
        by_text[text].append(name)
    return [g for g in by_text.values() if len(g) > 1]

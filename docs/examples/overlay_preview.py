"""Draw the tracks of a ``traceviz export`` file as a plotly timeline (HTML), for a PNG preview.

This is NOT a Perfetto screenshot (ui.perfetto.dev needs the internet, unavailable where the
docs are built): it reads the exported file back with ``json``, takes the GPU activities and
every ``traceviz`` overlay slice inside a window of ``--steps`` steps, and draws one row per
track, as a timeline viewer would. Usage::

    .venv/bin/python docs/examples/overlay_preview.py OUT.traceviz.json.gz preview.html
    .venv/bin/python reports/screenshot.py preview.html docs/overlay.png
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from traceviz.vocab import OVERLAY_CATEGORY

COLOURS = {"host_wait": "#E45756", "sync_wait": "#F58518", "graph_internal": "#72B7B2",
           "other_idle": "#9D9DA0", "kernel": "#4C78A8", "gpu_memcpy": "#54A24B",
           "gpu_memset": "#54A24B", "step": "#B279A2", "replay": "#EECA3B"}


def _read(path: Path) -> Any:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def preview(src: Path, steps: int) -> go.Figure:
    events = _read(src)["traceEvents"]
    own = [e for e in events if e.get("cat") == OVERLAY_CATEGORY]
    pid = own[0]["pid"]
    tracks = {e["tid"]: e["args"]["name"] for e in own if e["name"] == "thread_name"}
    step_slices = sorted((e for e in own if e["ph"] == "X" and tracks[e["tid"]] == "steps"),
                         key=lambda e: e["ts"])[:steps]
    # half a nanosecond of slack: float µs sums land a hair past the next step's start
    t0 = step_slices[0]["ts"]
    t1 = step_slices[-1]["ts"] + step_slices[-1]["dur"] - 0.0005
    rows: list[tuple[str, str, float, float, str]] = []  # track, name, start µs, dur µs, colour
    for e in events:
        if e.get("ph") != "X" or e["ts"] + e["dur"] <= t0 or e["ts"] >= t1:
            continue
        cat = e.get("cat", "")
        if e.get("pid") == pid:
            track = tracks[e["tid"]]
            colour = (COLOURS["step"] if track == "steps" else COLOURS["replay"]
                      if track.startswith("CUDA graph") else COLOURS.get(e["name"], "#999"))
            rows.append((f"traceviz · {track}", e["name"], e["ts"], e["dur"], colour))
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            rows.append((f"GPU {e['pid']} stream {e['tid']} (trace)", e["name"][:60], e["ts"],
                         e["dur"], COLOURS[cat]))
    order = sorted({r[0] for r in rows}, key=lambda t: (not t.startswith("GPU"), t))
    fig = go.Figure()
    for track, name, start, dur, colour in rows:
        fig.add_trace(go.Bar(
            y=[track], x=[dur], base=[start - t0], orientation="h", marker_color=colour,
            marker_line_width=0, hovertext=name, hoverinfo="text", showlegend=False,
            width=0.6))
    for label in ("kernel", "host_wait", "sync_wait", "graph_internal", "other_idle", "step",
                  "replay"):
        fig.add_trace(go.Bar(y=[order[0]], x=[0], base=[0], orientation="h", name=label,
                             marker_color=COLOURS[label], showlegend=True, hoverinfo="skip"))
    fig.update_layout(legend={"orientation": "h", "y": -0.35},
        title=f"{src.name}: the trace's GPU streams and the traceviz overlay tracks "
        f"({steps} steps; a plotly rendering of the exported file, not a Perfetto screenshot)",
        barmode="overlay", height=260 + 60 * len(order), template="plotly_white",
        xaxis_title="µs from the first step's GPU start", margin={"l": 260, "r": 30},
        yaxis={"categoryorder": "array", "categoryarray": order[::-1]},
        font={"size": 12})
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    preview(args.src, args.steps).write_html(args.out, include_plotlyjs="inline")


if __name__ == "__main__":
    main()

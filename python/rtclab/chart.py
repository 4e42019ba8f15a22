"""Figures for the core's chart renderer (`crates/rtclab-chart`): a figure is described as data —
panels of lines, filled areas, vertical spans, horizontal lines and bars — and drawn to PNG in
Rust (plotters, DejaVu Sans), with the GIL released. This is what the run report draws with, so
that `rtclab run` never imports matplotlib (whose import alone costs more time and memory than a
benchmark run; docs/benchmarks.md).

    fig = Figure(10, 3.2)                       # inches, at 100 pixels per inch
    ax = fig.panel(title="queue", xlabel="time (s)", ylabel="kB", xlim=(0, 60), ylim=(0, None))
    ax.fill(t, q_max, color="C0", alpha=0.25, step=True, label="max in bin")
    ax.line(t, q_mean, color="C0", width=1.2, step=True, label="mean")
    fig.save("queue.png")

Colours are `#rrggbb` or matplotlib's cycle names `C0`-`C9` (tab10), so plots keep the colours
users know.
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from pathlib import Path
from typing import Optional, Sequence

DPI = 100
#: matplotlib's tab10 and tab20 colour cycles.
TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
TAB20 = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896", "#9467bd", "#c5b0d5",
         "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"]


def color(c: str) -> str:
    """`C0`-`C9` as tab10's hex colours; `#rrggbb` as it is."""
    if len(c) == 2 and c[0] == "C" and c[1].isdigit():
        return TAB10[int(c[1])]
    if c.startswith("#") and len(c) == 7:
        return c
    raise ValueError(f"colour {c!r}: expected #rrggbb or C0-C9")


def colors(n: int) -> list[str]:
    """n distinct colours: tab10 up to 10, tab20 up to 20 (beyond, plots show the spread)."""
    table = TAB10 if n <= 10 else TAB20
    return [table[i % len(table)] for i in range(n)]


def _limit(v) -> Optional[float]:
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


class Panel:
    """One set of axes of a `Figure`."""

    def __init__(self, fig: "Figure", **settings):
        self._fig = fig
        self.spec: dict = {"items": []}
        self.set(**settings)

    def set(self, title: Optional[str] = None, xlabel: Optional[str] = None, ylabel: Optional[str] = None,
            xlim=None, ylim=None, xscale: Optional[str] = None, legend: Optional[bool] = None,
            categories: Optional[Sequence[str]] = None, title_left: Optional[bool] = None) -> "Panel":
        """Axis labels, limits ((lo, hi), either None for the data's extent), `xscale` ("linear"
        or "symlog"), whether labelled items get a legend, a categorical y axis."""
        s = self.spec
        if title is not None:
            s["title"] = title
        if title_left is not None:
            s["title_left"] = bool(title_left)
        if xlabel is not None:
            s["xlabel"] = xlabel
        if ylabel is not None:
            s["ylabel"] = ylabel
        if xlim is not None:
            s["xlim"] = [_limit(xlim[0]), _limit(xlim[1])]
        if ylim is not None:
            s["ylim"] = [_limit(ylim[0]), _limit(ylim[1])]
        if xscale is not None:
            s["xscale"] = xscale
        if legend is not None:
            s["legend"] = bool(legend)
        if categories is not None:
            s["categories"] = [str(c) for c in categories]
        return self

    def _item(self, kind: str, c: str, alpha: float, label: Optional[str], **fields) -> "Panel":
        item = {"kind": kind, "color": color(c), "alpha": float(alpha), **fields}
        if label is not None:
            item["label"] = str(label)
        self.spec["items"].append(item)
        return self

    def line(self, x, y, color: str = "C0", width: float = 1.0, alpha: float = 1.0, dash: bool = False,
             step: bool = False, label: Optional[str] = None) -> "Panel":
        """A line through (x, y), broken at missing values; `step` holds each y over the interval
        that ends at its x (matplotlib's `where="pre"`)."""
        return self._item("line", color, alpha, label, x=self._fig.buffer(x), y=self._fig.buffer(y),
                          width=float(width), dash=bool(dash), step=bool(step))

    def fill(self, x, y, y0=None, color: str = "C0", alpha: float = 1.0, step: bool = False,
             label: Optional[str] = None) -> "Panel":
        """The area between y0 (or zero) and y."""
        fields = {"x": self._fig.buffer(x), "y": self._fig.buffer(y), "step": bool(step)}
        if y0 is not None:
            fields["y0"] = self._fig.buffer(y0)
        return self._item("fill", color, alpha, label, **fields)

    def span(self, x0: float, x1: float, color: str, alpha: float = 1.0, ymin: float = 0.0, ymax: float = 1.0,
             label: Optional[str] = None) -> "Panel":
        """A vertical band from x0 to x1, between fractions ymin and ymax of the axes' height."""
        return self._item("span", color, alpha, label, x0=float(x0), x1=float(x1), ymin=float(ymin), ymax=float(ymax))

    def hline(self, y: float, color: str = "#000000", width: float = 1.0, dash: bool = False,
              label: Optional[str] = None) -> "Panel":
        return self._item("hline", color, 1.0, label, y=float(y), width=float(width), dash=bool(dash))

    def hbar(self, left, length, color: str = "C0", label: Optional[str] = None) -> "Panel":
        """One horizontal bar per category (the panel's `categories`, first on top)."""
        return self._item("hbar", color, 1.0, label, left=self._fig.buffer(left), length=self._fig.buffer(length))


class Figure:
    """An image of `rows` × `cols` panels (filled row by row), `width` × `height` inches."""

    def __init__(self, width: float, height: float, rows: int = 1, cols: int = 1, title: Optional[str] = None):
        self.spec: dict = {"width": int(round(width * DPI)), "height": int(round(height * DPI)),
                           "rows": int(rows), "cols": int(cols), "panels": []}
        if title is not None:
            self.spec["title"] = title
        self._buffers: list[bytes] = []
        self.panels: list[Panel] = []

    def buffer(self, values) -> int:
        """Keeps a series — float64 values in place (`array("d")`, a memoryview of format "d"), or
        any sequence of numbers — as little-endian float64 bytes for the renderer; returns its
        index."""
        try:
            view = memoryview(values)
        except TypeError:
            view = None
        if view is not None and view.format == "d" and view.ndim == 1 and view.c_contiguous:
            if sys.byteorder == "little":
                self._buffers.append(view.tobytes())
                return len(self._buffers) - 1
            a = array("d")
            a.frombytes(view.cast("B"))
        else:
            a = array("d", values)
        if sys.byteorder != "little":
            a.byteswap()
        self._buffers.append(a.tobytes())
        return len(self._buffers) - 1

    def panel(self, **settings) -> Panel:
        p = Panel(self, **settings)
        self.panels.append(p)
        return p

    def save(self, path: str | Path) -> Path:
        from rtclab import _core

        self.spec["panels"] = [p.spec for p in self.panels]
        _core.render_chart(json.dumps(self.spec, allow_nan=False), self._buffers, str(path))
        return Path(path)

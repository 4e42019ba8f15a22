"""Self-contained HTML reports (plots embedded as base64 PNG), rendered from Jinja2 templates
(`templates/report.html.j2`, `templates/repro.html.j2`; autoescaped)."""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from rtclab.runner import RunResult

#: Media flows listed in the viewers' table; beyond it the table says how many more there are.
MEDIA_ROWS = 50
#: Beyond this many flows the flow table is folded (a click shows it).
FOLD_FLOWS = 50


@lru_cache(maxsize=1)
def _env():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("rtclab", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _fmt(x, digits: int = 3) -> str:
    """A value for a table: missing reads "–", never 0."""
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def render_report(result: RunResult, plots: Iterable) -> str:
    """The report of one run as HTML text; `plots` are `rtclab.plots.Plot`s (or plain paths,
    shown in the network section)."""
    s = result.summary
    shown = []
    for p in plots:
        if isinstance(p, (str, Path)):
            shown.append({"src": _data_uri(Path(p)), "title": Path(p).stem.replace("_", " "), "section": "network"})
        else:
            shown.append({"src": _data_uri(p.path), "title": p.title, "section": p.section})
    media = [f for f in s["flows"] if f.get("media")]
    engine = s.get("engine", "sim")
    return _env().get_template("report.html.j2").render(
        s=s,
        link=s["link"],
        media=media[:MEDIA_ROWS],
        media_more=max(0, len(media) - MEDIA_ROWS),
        plots=shown,
        flows_folded=len(s["flows"]) > FOLD_FLOWS,
        emu=s.get("emulator"),
        engine_name="emulator (real packets, TUN devices)" if engine == "emu" else "simulator",
        time_label="emulated" if engine == "emu" else "simulated",
        scenario_text=result.scenario_text,
        fmt=_fmt,
        pct=_pct,
    )


def write_report(result: RunResult, plots: Iterable, path: Path) -> None:
    Path(path).write_text(render_report(result, plots), encoding="utf-8")


def write_repro_report(repro, rows, images, path: Path, wall: float) -> None:
    """A self-contained report for `rtclab repro`."""
    from rtclab import _core
    from rtclab.repro import tally_line

    html = _env().get_template("repro.html.j2").render(
        repro=repro,
        rows=rows,
        tally=tally_line(rows),
        images=[(title, _data_uri(img)) for title, img in images],
        wall=wall,
        version=_core.__version__,
        fmt=_fmt,
    )
    Path(path).write_text(html, encoding="utf-8")

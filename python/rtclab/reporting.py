"""Self-contained HTML reports (plots embedded as base64 PNG). The templates (Jinja syntax,
`crates/rtclab-py/templates/*.html.j2`) are compiled into the core and rendered there with
MiniJinja (docs/adr/0007): no template engine to import and no template to compile on a run's
path. Values are HTML-escaped; `fmt(x, digits=3)` and `pct(x)` are the templates' number
formats (a missing value reads "–", never 0)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from rtclab.runner import RunResult

#: Media flows listed in the viewers' table; beyond it the table says how many more there are.
MEDIA_ROWS = 50
#: Beyond this many flows the flow table is folded (a click shows it).
FOLD_FLOWS = 50


def render(template: str, **context) -> str:
    """One of the core's report templates ("report.html", "repro.html", "suite.html",
    "sweep.html") rendered with `context` (plain data: dicts, lists, strings, numbers; an image
    is its PNG file's path, embedded by the template's `png(path)`)."""
    from rtclab import _core

    return _core.render_report(template, context)


def write(template: str, path: str | os.PathLike, **context) -> None:
    """`render` straight into the file `path` (the page is never held whole)."""
    from rtclab import _core

    _core.render_report(template, context, os.fspath(path))


def _report_context(result: RunResult, plots: Iterable) -> dict:
    s = result.summary
    shown = []
    for p in plots:
        if isinstance(p, (str, Path)):
            shown.append({"path": os.fspath(p), "title": Path(p).stem.replace("_", " "), "section": "network"})
        else:
            shown.append({"path": os.fspath(p.path), "title": p.title, "section": p.section})
    media = [f for f in s["flows"] if f.get("media")]
    engine = s.get("engine", "sim")
    return dict(
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
    )


def render_report(result: RunResult, plots: Iterable) -> str:
    """The report of one run as HTML text; `plots` are `rtclab.plots.Plot`s (or plain paths,
    shown in the network section)."""
    return render("report.html", **_report_context(result, plots))


def write_report(result: RunResult, plots: Iterable, path: Path) -> None:
    """The report of one run written to `path`."""
    write("report.html", path, **_report_context(result, plots))


def write_repro_report(repro, rows, images, path: Path, wall: float) -> None:
    """A self-contained report for `rtclab repro`."""
    from rtclab import _core
    from rtclab.repro import tally_line

    write(
        "repro.html",
        path,
        repro={"name": repro.name, "title": repro.title, "jobs": len(repro.jobs), "notes": list(repro.notes)},
        rows=[{"experiment": r.experiment, "variant": r.variant, "metric": r.metric, "ours": r.ours, "paper": r.paper,
               "verdict": r.verdict, "cause": r.cause} for r in rows],
        tally=tally_line(rows),
        images=[(title, os.fspath(img)) for title, img in images],
        wall=wall,
        version=_core.__version__,
    )

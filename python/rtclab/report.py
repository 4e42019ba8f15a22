"""A self-contained HTML report (plots embedded as base64 PNG)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from rtclab.runner import RunResult


def _fmt(x, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return html.escape(str(x))


def write_report(result: RunResult, images: list[Path], path: Path) -> None:
    s = result.summary
    link = s["link"]
    rows = []
    for f in s["flows"]:
        q = f["queuing_delay_ms"]
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{_fmt(v)}</td>"
                for v in [
                    f["id"],
                    f["name"],
                    f["kind"],
                    f["cc"],
                    f["rtt_ms"],
                    f["throughput_mbps"],
                    f["goodput_mbps"],
                    f["share"],
                    f["loss_ratio"],
                    q["p50"],
                    q["p95"],
                    q["p99"],
                ]
            )
            + "</tr>"
        )
    figs = []
    for img in images:
        data = base64.b64encode(img.read_bytes()).decode("ascii")
        figs.append(f'<figure><img alt="{html.escape(img.stem)}" src="data:image/png;base64,{data}"></figure>')
    lq = link["queuing_delay_ms"]
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>rtclab report: {html.escape(s['scenario'])}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 980px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }}
th {{ background: #f3f3f3; }}
td:nth-child(2), td:nth-child(3), td:nth-child(4) {{ text-align: left; }}
figure {{ margin: 1em 0; }} img {{ max-width: 100%; }}
.kv td:first-child {{ text-align: left; font-weight: 600; }}
</style></head><body>
<h1>{html.escape(s['scenario'])}</h1>
<p>{html.escape(s.get('description', ''))}</p>
<table class="kv">
<tr><td>engine</td><td>{_fmt(s['engine'])}</td></tr>
<tr><td>seed</td><td>{_fmt(s['seed'])}</td></tr>
<tr><td>simulated / wall time</td><td>{_fmt(s['duration_s'], 1)} s / {_fmt(s['wall_time_s'], 3)} s</td></tr>
<tr><td>measurement window</td><td>{_fmt(s['measurement_window_s'][0], 1)}–{_fmt(s['measurement_window_s'][1], 1)} s</td></tr>
<tr><td>bottleneck capacity</td><td>{_fmt(link['capacity'])} (mean {_fmt(link['mean_capacity_mbps'], 2)} Mbit/s)</td></tr>
<tr><td>utilization</td><td>{_fmt(link['utilization'])}</td></tr>
<tr><td>loss ratio</td><td>{_fmt(link['loss_ratio'], 5)}</td></tr>
<tr><td>queuing delay p50 / p95 / p99</td><td>{_fmt(lq['p50'], 2)} / {_fmt(lq['p95'], 2)} / {_fmt(lq['p99'], 2)} ms</td></tr>
<tr><td>Jain index (run / mean per window)</td><td>{_fmt(s['fairness']['jain'])} / {_fmt(s['fairness']['jain_windows_mean'])}</td></tr>
</table>
<h2>Flows</h2>
<table><tr><th>id</th><th>name</th><th>kind</th><th>cc</th><th>RTT ms</th><th>throughput Mbit/s</th>
<th>goodput Mbit/s</th><th>share</th><th>loss</th><th>qdelay p50 ms</th><th>p95</th><th>p99</th></tr>
{''.join(rows)}
</table>
<h2>Plots</h2>
{''.join(figs)}
<p style="color:#888;font-size:0.8em">rtclab — scenario source: {html.escape(result.scenario_origin)}</p>
</body></html>
"""
    path.write_text(doc, encoding="utf-8")


def write_repro_report(repro, rows, images, path: Path, wall: float) -> None:
    """A self-contained report for `rtclab repro`."""
    trs = "".join(
        "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in (r.experiment, r.variant, r.metric, r.ours, r.paper)) + "</tr>"
        for r in rows
    )
    figs = []
    for title, img in images:
        data = base64.b64encode(img.read_bytes()).decode("ascii")
        figs.append(f'<figure><figcaption>{html.escape(title)}</figcaption><img alt="" src="data:image/png;base64,{data}"></figure>')
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in repro.notes)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rtclab repro {html.escape(repro.name)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; }} th, td {{ border: 1px solid #ccc; padding: 3px 8px; }}
th {{ background: #f3f3f3; }} img {{ max-width: 100%; }} figcaption {{ font-weight: 600; }}
</style></head><body>
<h1>{html.escape(repro.title)}</h1>
<p>{len(repro.jobs)} simulation runs in {wall:.1f} s wall time.</p>
<ul>{notes}</ul>
<table><tr><th>experiment</th><th>variant</th><th>metric</th><th>ours</th><th>paper</th></tr>{trs}</table>
<h2>Plots</h2>{''.join(figs)}
</body></html>
"""
    path.write_text(doc, encoding="utf-8")

"""PNG plots of a run, QoE first.

Media flows: frame delay over time with freezes and stalls marked, its CDF, where the displayed
frames' delay went (stages stacked over time, and each stage's CDF), rendered frame rate, target vs
sent vs delivered rate, traffic composition. Every flow: throughput against capacity, delay
(one-way per flow, the bottleneck's queuing delay once), delay CDFs, RTT, drops, queue, cwnd,
fairness, GCC's detector. The warm-up (outside the measurement window) is shaded on every time
axis. Up to `MANY_FLOWS` flows get a line each, in colours that do not repeat; beyond that the
plots show the spread across flows (median and 10-90 % band), so 50 or 2,000 flows stay readable
and quick to draw.

The plots read the engine's columns in place (float64 memoryviews, `Data`), never numpy or
pandas, and are described as data for the core's chart renderer (`rtclab.chart`,
`crates/rtclab-chart`), never matplotlib: those imports would cost more time and memory than the
benchmark run itself (issue 16 point 9, issue 45 point 3; docs/benchmarks.md). The two passes
over every row of a 1,000-flow table are the core's: the time × flow pivot
(`_core.flow_series`, numpy's `unique` and scatter) and the spread across flows
(`_core.spread`, numpy's `nanpercentile`, linear method, step for step), so the images are the
ones the numpy-based plots drew. The renderer releases the GIL, so `plot_report` can draw on
several threads (`workers`).
"""

from __future__ import annotations

from array import array
from itertools import filterfalse
from math import isnan
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Sequence

from rtclab import _core
from rtclab.chart import Figure, Panel, colors
from rtclab.runner import DISTRIBUTION_METRICS, FRAME_STAGES, RunResult

#: Beyond this many flows, per-flow lines give way to the spread across flows.
MANY_FLOWS = 12
#: Media flows that get a panel each in the target/sent/delivered figure.
MEDIA_PANELS = 6
WARMUP_COLOR = "#d9d9d9"
FREEZE_COLOR = "#d62728"
STALL_COLOR = "#ff7f0e"


class Plot(NamedTuple):
    """One image of the report: its file, caption and section ("media" or "network")."""

    path: Path
    title: str
    section: str


NAN = float("nan")

#: A result table's column: its float64 values, read in place.
Col = Sequence[float]


def floats(raw) -> memoryview:
    """A column's bytes (a `_core.Column`, bytes, an array) as float64 values, without a copy."""
    m = memoryview(raw)
    if m.format != "d":
        m = m.cast("B").cast("d")
    return m


def all_nan(values: Col) -> bool:
    return all(map(isnan, values))


def no_nan(values: Col) -> list[float]:
    """numpy's `nan_to_num` for the values plots meet: missing counts as 0."""
    return [0.0 if isnan(x) else x for x in values]


class Data:
    """A result's tables as float64 columns (column name -> memoryview), and the per-flow series
    over the run's bins that the plots draw."""

    def __init__(self, result: RunResult):
        self.result = result
        self.summary = result.summary
        t = result.tables
        self.flows = {k: floats(v) for k, v in t["flows"].items()}
        self.link = {k: floats(v) for k, v in t["link"].items()}
        self.fairness = {k: floats(v) for k, v in t["fairness"].items()}
        self.interruptions = {k: floats(v) for k, v in t["interruptions"].items()}
        self.distributions = {k: floats(v) for k, v in t["distributions"].items()}

    def matrix(self, column: str, ids: Optional[list[int]] = None) -> tuple[memoryview, list[int], list[memoryview]]:
        """(bin end times, flow ids, one series per flow over those bins; NaN where a flow has
        no row), the flows in id order (the core's pivot of the table: `np.unique` of times and
        ids, as the numpy code it replaces)."""
        values = self.flows.get(column)
        if values is None or len(values) == 0:
            return memoryview(b"").cast("d"), [], []
        table = self.result.tables["flows"]
        times, found, series = _core.flow_series(table["time_s"], table["flow"], table[column],
                                                 None if ids is None else [int(i) for i in ids])
        return floats(times), found, [floats(s) for s in series]


def _empty(times, series) -> bool:
    return not series or not times


def _flow_names(d: Data) -> dict[int, str]:
    return {f["id"]: f"{f['id']}: {f['name']}" for f in d.summary["flows"]}


def _media_ids(d: Data) -> list[int]:
    return [f["id"] for f in d.summary["flows"] if f.get("media")]


def _shade_warmup(ax: Panel, d: Data) -> None:
    w = d.summary.get("warmup_s") or 0.0
    if w > 0:
        # Over the data (dimming it), so that filled areas never hide it.
        ax.span(0, w, color=WARMUP_COLOR, alpha=0.45, label="warm-up (not measured)")


def _time_axes(ax: Panel, d: Data, ylabel: str, ylim=(0, None)) -> None:
    _shade_warmup(ax, d)
    ax.set(xlabel="time (s)", ylabel=ylabel, xlim=(0, d.summary["duration_s"]), ylim=ylim)


def _lines(ax: Panel, times, ids, series, names: dict[int, str], step: bool = False, width: float = 1.0) -> None:
    """A line per flow (≤ MANY_FLOWS), else the median across flows and its 10-90 % band."""
    if _empty(times, series):
        return
    if len(ids) <= MANY_FLOWS:
        for c, fid, col in zip(colors(len(ids)), ids, series):
            ax.line(times, col, color=c, width=width, step=step, label=names.get(int(fid), str(fid)))
        return
    lo, med, hi = (floats(b) for b in _core.spread(series, [10, 50, 90]))  # per bin, NaN ignored
    ax.fill(times, hi, lo, color="C0", alpha=0.25, label=f"10-90 % of {len(ids)} flows")
    ax.line(times, med, color="C0", width=1.2, label="median flow")


# --- media ---------------------------------------------------------------------------------


def _mark_freezes(ax: Panel, d: Data, ids: list[int]) -> None:
    """Freezes of the display as red spans, stalls of frame completion as orange ones below
    them (the lower fifth of the axes)."""
    fr = d.interruptions
    if not len(fr.get("flow", ())):
        return
    wanted = set(ids)
    mine = [int(f) in wanted for f in fr["flow"]]
    # At least 1/300 of the run wide, so that a 200 ms freeze in a 10-minute run stays visible.
    least = d.summary["duration_s"] / 300
    for code, label, c, (y0, y1) in ((0, "freeze", FREEZE_COLOR, (0.0, 1.0)), (1, "stall", STALL_COLOR, (0.0, 0.2))):
        keep = [r for r, (m, kind) in enumerate(zip(mine, fr["kind"])) if m and kind == code]
        for k, (start, dur) in enumerate((fr["start_s"][r], fr["duration_s"][r]) for r in keep):
            ax.span(start, start + max(dur, least), color=c, alpha=0.35, ymin=y0, ymax=y1,
                    label=label if k == 0 else None)


def plot_frame_delay(d: Data, path: Path) -> Optional[Path]:
    ids = _media_ids(d)
    times, fids, m = d.matrix("frame_delay_ms_mean", ids)
    if _empty(times, m) or all(all_nan(c) for c in m):
        return None
    fig = Figure(10, 3.6)
    ax = fig.panel(title="frame delay over time (display freezes red, frame stalls orange)")
    names = _flow_names(d)
    _mark_freezes(ax, d, ids)
    _lines(ax, times, fids, m, {k: f"{v} (bin mean)" for k, v in names.items()}, width=1.2)
    if len(fids) == 1:
        _, _, mx = d.matrix("frame_delay_ms_max", ids)
        ax.line(times, mx[0], color="C0", width=0.8, alpha=0.5, dash=True, label="bin max")
    _time_axes(ax, d, "frame delay (ms, capture to complete)")
    return fig.save(path)


def plot_rendered_fps(d: Data, path: Path) -> Optional[Path]:
    ids = _media_ids(d)
    times, fids, m = d.matrix("rendered_fps", ids)
    if _empty(times, m):
        return None
    fig = Figure(10, 3.0)
    ax = fig.panel(title="rendered frame rate (what the viewer saw)")
    _mark_freezes(ax, d, ids)
    _lines(ax, times, fids, m, _flow_names(d), step=True, width=1.1)
    _time_axes(ax, d, "frames shown per second")
    return fig.save(path)


def plot_media_rates(d: Data, path: Path) -> Optional[Path]:
    """Per media flow: the controller's target, what the sender sent, what was delivered."""
    ids = _media_ids(d)[:MEDIA_PANELS]
    if not ids:
        return None
    names = _flow_names(d)
    series = {c: d.matrix(c, ids) for c in ("target_mbps", "sending_rate_mbps", "throughput_mbps")}
    times = series["throughput_mbps"][0]
    more = len(_media_ids(d)) - len(ids)
    title = "media rate: target vs sent vs delivered" + (f" (first {len(ids)}; {more} more in flows.parquet)" if more > 0 else "")
    fig = Figure(10, 0.3 + 2.6 * len(ids), rows=len(ids), title=title)
    for k, fid in enumerate(ids):
        ax = fig.panel(title=names[fid], title_left=True)
        target = series["target_mbps"][2][k] if not _empty(*series["target_mbps"][::2]) else []
        if len(target) and not all_nan(target):
            ax.line(times, target, color="C2", width=1.2, step=True, label="target")
        ax.line(times, series["sending_rate_mbps"][2][k], color="C1", label="sent")
        ax.line(times, series["throughput_mbps"][2][k], color="C0", label="delivered")
        _time_axes(ax, d, "Mbit/s")
        if k < len(ids) - 1:
            ax.set(xlabel="")
    return fig.save(path)


def plot_composition(d: Data, path: Path) -> Optional[Path]:
    media = [f for f in d.summary["flows"] if f.get("media")]
    if not media:
        return None
    media = media[: max(MANY_FLOWS, 1)]
    parts = {"media": "C0", "fec": "C2", "rtx": "C3", "padding": "C7"}
    fig = Figure(10, 1.2 + 0.4 * len(media))
    ax = fig.panel(title="traffic composition of the media flows", xlabel="share of the bytes sent",
                   xlim=(0, 1), categories=[f"{f['id']}: {f['name']}" for f in media])
    left = [0.0] * len(media)
    for p, c in parts.items():
        vals = [NAN if f["media"]["composition"][p] is None else float(f["media"]["composition"][p]) for f in media]
        ax.hbar(left, vals, color=c, label=p)
        left = [a + b for a, b in zip(left, no_nan(vals))]
    return fig.save(path)


def _cdf(ax: Panel, d: Data, metric: str, ids: list[int]) -> bool:
    dist = d.distributions
    if not len(dist.get("flow", ())):
        return False
    rows_of = _distribution_rows(d, metric, ids)
    if not rows_of:
        return False
    names = _flow_names(d)
    groups = [(fid, *_cdf_points(d, rows_of[fid])) for fid in sorted(rows_of)]
    if len(groups) <= MANY_FLOWS:
        for c, (fid, x, y) in zip(colors(len(groups)), groups):
            ax.line(x, y, color=c, width=1.2, label=names.get(fid, str(fid)))
    else:
        alpha = max(0.03, 3 / len(groups))
        for k, (_, x, y) in enumerate(groups):
            ax.line(x, y, color="C0", alpha=alpha, width=0.8,
                    label=f"{len(groups)} flows, one line each" if k == 0 else None)
    ax.set(ylim=(0, 1.0), xlim=(0, None))
    return True


def _distribution_rows(d: Data, metric: str, ids: list[int]) -> dict[int, list[int]]:
    """flow id -> the `distributions` rows of `metric` for that flow (table order), for `ids`."""
    dist = d.distributions
    code = DISTRIBUTION_METRICS.index(metric)
    wanted = set(ids)
    rows_of: dict[int, list[int]] = {}
    for r, (m, f) in enumerate(zip(dist["metric"], dist["flow"])):
        if m == code and int(f) in wanted:
            rows_of.setdefault(int(f), []).append(r)
    return rows_of


def _cdf_points(d: Data, rows: list[int]) -> tuple[list[float], list[float]]:
    """(values, fractions) of one flow's distribution rows, in percentile order (stable)."""
    dist = d.distributions
    pct, val = dist["percentile"], dist["value_ms"]
    rows = sorted(rows, key=lambda r: pct[r])
    return [val[r] for r in rows], [pct[r] / 100 for r in rows]


def plot_frame_delay_cdf(d: Data, path: Path) -> Optional[Path]:
    fig = Figure(10, 3.4)
    ax = fig.panel(title="frame delay CDF (measurement window)", xlabel="frame delay (ms)", ylabel="fraction of frames")
    if not _cdf(ax, d, "frame_delay", _media_ids(d)):
        return None
    return fig.save(path)


#: Stage colours, pipeline order (sender side warm, network blue/grey, receiver green/purple).
STAGE_COLORS = ["#8c564b", "#ff7f0e", "#d62728", "#1f77b4", "#7f7f7f", "#2ca02c", "#9467bd", "#e377c2"]


def plot_breakdown(d: Data, path: Path) -> Optional[Path]:
    """The displayed frames' mean delay per bin, stacked by stage (first media flow; the
    stages of each frame sum to its display delay, so the stack's top is the mean display
    delay)."""
    ids = _media_ids(d)
    if not ids:
        return None
    fid = ids[0]
    cols = [d.matrix(f"stage_{s}_ms", [fid]) for s in FRAME_STAGES]
    if not cols or _empty(cols[0][0], cols[0][2]) or all_nan(cols[0][2][0]):
        return None
    times = cols[0][0]
    vals = [no_nan(c[2][0]) for c in cols]
    more = f" (flow {_flow_names(d)[fid]}; {len(ids) - 1} more in flows.parquet)" if len(ids) > 1 else ""
    fig = Figure(10, 3.8)
    ax = fig.panel(title="where the frame delay went, per bin" + more)
    base = [0.0] * len(times)
    for s, c, v in zip(FRAME_STAGES, STAGE_COLORS, vals):
        top = [a + b for a, b in zip(base, v)]
        ax.fill(times, top, base, color=c, step=True, label=s)
        base = top
    _time_axes(ax, d, "mean delay of frames shown (ms)")
    return fig.save(path)


def plot_breakdown_cdf(d: Data, path: Path) -> Optional[Path]:
    """Each stage's CDF over the displayed frames (first media flow)."""
    ids = _media_ids(d)[:1]
    dist = d.distributions
    if not ids or not len(dist.get("flow", ())):
        return None
    fig = Figure(10, 3.6)
    ax = fig.panel(title=f"per-stage delay CDF, flow {_flow_names(d)[ids[0]]} (measurement window)",
                   xlabel="time in the stage (ms, log above 1 ms)", ylabel="fraction of frames shown",
                   xscale="symlog", xlim=(0, None), ylim=(0, 1.0))
    drawn = 0
    for s, c in zip(FRAME_STAGES, STAGE_COLORS):
        rows = _distribution_rows(d, f"stage_{s}", ids).get(ids[0])
        if not rows:
            continue
        x, y = _cdf_points(d, rows)
        present = [v for v in x if v == v]
        if present and max(present) <= 0:
            continue  # a stage this run never spent time in
        ax.line(x, y, color=c, width=1.3, label=s)
        drawn += 1
    if not drawn:
        return None
    return fig.save(path)


# --- every flow --------------------------------------------------------------------------


def plot_throughput(d: Data, path: Path) -> Path:
    if not isinstance(d, Data):  # the repro reports call this with a RunResult
        d = Data(d)
    fig = Figure(10, 4)
    ax = fig.panel(title="throughput at the receiver vs bottleneck capacity")
    link = d.link
    ax.fill(link["time_s"], link["capacity_mbps"], color="#e3efe1", step=True, label="capacity")
    ax.line(link["time_s"], link["capacity_mbps"], color="#5a9a50", width=0.8, step=True)
    ax.line(link["time_s"], link["delivered_mbps"], color="#000000", width=1.2, step=True, label="all flows together")
    _lines(ax, *d.matrix("throughput_mbps"), _flow_names(d))
    _time_axes(ax, d, "throughput (Mbit/s)")
    return fig.save(path)


def plot_delay(d: Data, path: Path) -> Path:
    """One-way delay per flow; the bottleneck's queuing delay once (every flow shares it)."""
    fig = Figure(10, 3.6)
    ax = fig.panel(title="one-way delay per flow and the bottleneck's queuing delay")
    ax.line(d.link["time_s"], d.link["queue_delay_ms_mean"], color="#000000", dash=True, label="bottleneck queuing delay")
    _lines(ax, *d.matrix("one_way_delay_ms_mean"), {k: f"{v} one-way" for k, v in _flow_names(d).items()})
    _time_axes(ax, d, "delay (ms, bin mean)")
    return fig.save(path)


def plot_delay_cdfs(d: Data, path: Path) -> Optional[Path]:
    ids = [f["id"] for f in d.summary["flows"]]
    fig = Figure(11, 3.4, cols=2, title="packet delay CDFs per flow (measurement window)")
    a1 = fig.panel(xlabel="queuing delay (ms)", ylabel="fraction of packets", legend=False)
    a2 = fig.panel(xlabel="one-way delay (ms)")
    ok1 = _cdf(a1, d, "queuing_delay", ids)
    ok2 = _cdf(a2, d, "one_way_delay", ids)
    if not (ok1 or ok2):
        return None
    return fig.save(path)


def plot_rtt(d: Data, path: Path) -> Optional[Path]:
    """The sender's RTT estimate: TCP's smoothed RTT, a media controller's RTT."""
    cols = [c for c in ("srtt_ms", "rtt_ms") if c in d.flows]
    if not cols:
        return None
    times, ids, m = d.matrix(cols[0])
    for c in cols[1:]:
        _, _, other = d.matrix(c)
        m = [array("d", [o if x != x else x for x, o in zip(mine, theirs)]) for mine, theirs in zip(m, other)]
    return _flow_series(d, times, ids, m, path, "RTT (ms, sender's estimate)", "round-trip time over time", 3.4)


def _flow_series(d: Data, times, ids, m, path: Path, ylabel: str, title: str, height: float) -> Optional[Path]:
    """One line per flow that has any value (or their spread), on the run's time axis."""
    if _empty(times, m):
        return None
    keep = [k for k, col in enumerate(m) if not all_nan(col)]
    if not keep:
        return None
    fig = Figure(10, height)
    ax = fig.panel(title=title)
    _lines(ax, times, [ids[k] for k in keep], [m[k] for k in keep], _flow_names(d))
    _time_axes(ax, d, ylabel)
    return fig.save(path)


def plot_drops(d: Data, path: Path) -> Optional[Path]:
    link = d.link
    zero = [0.0] * len(link["time_s"])
    over = no_nan(link.get("drops_overflow", zero))
    rand = no_nan(link.get("drops_random", zero))
    flow_drops = any(filterfalse(isnan, d.flows.get("drops", ())))  # any non-zero count
    if not any(over) and not any(rand) and not flow_drops:  # counts: none drawn when all are zero
        return None
    fig = Figure(10, 3.0)
    ax = fig.panel(title="drops at the bottleneck over time")
    # Stacked step areas: one item each however many bins (bars would be one per bin).
    ax.fill(link["time_s"], over, color="C3", step=True, label="queue overflow / AQM")
    ax.fill(link["time_s"], [a + b for a, b in zip(over, rand)], over, color="C1", step=True, label="random / burst loss")
    _time_axes(ax, d, "packets dropped per bin")
    return fig.save(path)


def plot_queue(d: Data, path: Path) -> Path:
    fig = Figure(10, 3.2)
    ax = fig.panel(title="bottleneck queue occupancy")
    link = d.link
    ax.fill(link["time_s"], [x / 1e3 for x in link["queue_bytes_max"]], color="C0", alpha=0.25, step=True,
            label="max in bin")
    ax.line(link["time_s"], [x / 1e3 for x in link["queue_bytes_mean"]], color="C0", width=1.2, step=True, label="time-weighted mean")
    limit = d.summary["link"]["queue_limit"]
    if "bytes" in limit:
        ax.hline(limit["bytes"] / 1e3, color="#ff0000", dash=True, label="limit")
    _time_axes(ax, d, "bottleneck queue (kB)")
    return fig.save(path)


def plot_cwnd(d: Data, path: Path) -> Optional[Path]:
    # The emulator's kernel flows do not report their window: no plot then.
    return _flow_series(d, *d.matrix("cwnd_packets"), path, "cwnd (packets, end of bin)", "congestion windows", 3.2)


def plot_delay_detector(d: Data, path: Path) -> Optional[Path]:
    """GCC flows: the detector's statistic against its (adaptive) threshold."""
    times, ids, grad = d.matrix("delay_gradient")
    if _empty(times, grad):
        return None
    keep = [k for k, col in enumerate(grad) if not all_nan(col)]
    if not keep:
        return None
    _, _, thr = d.matrix("threshold")
    cols = keep[:MEDIA_PANELS]
    names = _flow_names(d)
    fig = Figure(10, 3.2)
    ax = fig.panel(title="GCC over-use detector: statistic vs adaptive threshold (end of each bin)")
    for c, k in zip(colors(len(cols)), cols):
        name = names[int(ids[k])]
        ax.line(times, grad[k], color=c, label=f"{name} statistic")
        ax.line(times, thr[k], color=c, dash=True, alpha=0.7, label=f"{name} ± threshold")
        ax.line(times, [-x for x in thr[k]], color=c, dash=True, alpha=0.7)
    _time_axes(ax, d, "delay trend statistic (ms)", ylim=(None, None))
    return fig.save(path)


def plot_fairness(d: Data, path: Path) -> Optional[Path]:
    fr = d.fairness
    if not len(fr.get("jain", ())):
        return None
    keep = [r for r, (j, n) in enumerate(zip(fr["jain"], fr["active_flows"])) if j == j and n >= 2]
    if not keep:
        return None
    fig = Figure(10, 2.8)
    ax = fig.panel(title=f"fairness per {d.summary['fairness']['window_s']:g} s window (flows active throughout)")
    ax.line([fr["time_s"][r] for r in keep], [fr["jain"][r] for r in keep], color="C0", width=1.2, step=True)
    _time_axes(ax, d, "Jain index", ylim=(0, 1.05))
    return fig.save(path)


#: (file stem, caption, section, function), in display order.
PLOTS: list[tuple[str, str, str, Callable[[Data, Path], Optional[Path]]]] = [
    ("frame_delay", "Frame delay over time", "media", plot_frame_delay),
    ("frame_delay_cdf", "Frame delay CDF", "media", plot_frame_delay_cdf),
    ("breakdown", "Latency breakdown over time", "media", plot_breakdown),
    ("breakdown_cdf", "Latency breakdown: per-stage CDF", "media", plot_breakdown_cdf),
    ("rendered_fps", "Rendered frame rate", "media", plot_rendered_fps),
    ("media_rates", "Target vs sent vs delivered", "media", plot_media_rates),
    ("composition", "Traffic composition", "media", plot_composition),
    ("throughput", "Throughput vs capacity", "network", plot_throughput),
    ("delay", "Delay over time", "network", plot_delay),
    ("delay_cdf", "Delay CDFs", "network", plot_delay_cdfs),
    ("rtt", "Round-trip time", "network", plot_rtt),
    ("drops", "Drops over time", "network", plot_drops),
    ("queue", "Queue occupancy", "network", plot_queue),
    ("cwnd", "Congestion windows", "network", plot_cwnd),
    ("gcc_detector", "GCC over-use detector", "network", plot_delay_detector),
    ("fairness", "Fairness over time", "network", plot_fairness),
]


def plot_report(result: RunResult, out_dir: Path, workers: int = 1) -> list[Plot]:
    """Writes every applicable plot into `out_dir`; returns them in display order.

    The renderer releases the GIL, so `workers` > 1 draws the plots on that many threads. One
    is the default: in a whole `rtclab run bench-10-cubic` on two cores, two threads saved
    about 2 ms of the ~50 ms the plots and report take and raised the process's peak memory by
    2.3 MiB (each thread holds an image and its PNG encoder; docs/benchmarks.md, 2026-12-01).
    """
    d = Data(result)
    jobs = [(k, Path(out_dir) / f"{stem}.png") for k, (stem, _, _, _) in enumerate(PLOTS)]

    def draw(job):
        idx, path = job
        return PLOTS[idx][3](d, path)

    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rtclab-plot") as pool:
            made = list(pool.map(draw, jobs))
    else:
        made = [draw(j) for j in jobs]
    return [Plot(p, PLOTS[idx][1], PLOTS[idx][2]) for (idx, _), p in zip(jobs, made) if p is not None]

"""PNG plots of a run, QoE first.

Media flows: frame delay over time with freezes and stalls marked, its CDF, where the displayed
frames' delay went (stages stacked over time, and each stage's CDF), rendered frame rate, target vs
sent vs delivered rate, traffic composition. Every flow: throughput against capacity, delay
(one-way per flow, the bottleneck's queuing delay once), delay CDFs, RTT, drops, queue, cwnd,
fairness, GCC's detector. The warm-up (outside the measurement window) is shaded on every time
axis. Up to `MANY_FLOWS` flows get a line each, in colours that do not repeat; beyond that the
plots show the spread across flows (median and 10-90 % band), so 50 or 2,000 flows stay readable
and quick to draw.

The plots read the engine's columns as numpy arrays (`Data`), never pandas (whose import alone
costs more than a benchmark run), and are drawn in parallel worker processes where there are
several cores (`plot_report`): the whole-process benchmark of issue 16 point 9.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Callable, NamedTuple, Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from rtclab.runner import DISTRIBUTION_METRICS, FRAME_STAGES, RunResult  # noqa: E402

DPI = 100
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


class Data:
    """A result's tables as numpy arrays (column name -> float64 array), and the time × flow
    matrices the plots draw."""

    def __init__(self, result: RunResult):
        self.result = result
        self.summary = result.summary
        t = result.tables
        self.flows = {k: np.frombuffer(v, "<f8") for k, v in t["flows"].items()}
        self.link = {k: np.frombuffer(v, "<f8") for k, v in t["link"].items()}
        self.fairness = {k: np.frombuffer(v, "<f8") for k, v in t["fairness"].items()}
        self.interruptions = {k: np.frombuffer(v, "<f8") for k, v in t["interruptions"].items()}
        self.distributions = {k: np.frombuffer(v, "<f8") for k, v in t["distributions"].items()}

    @cached_property
    def _index(self):
        """Row -> (bin index, flow column) and the bins' times and flow ids, once."""
        t, f = self.flows.get("time_s", np.empty(0)), self.flows.get("flow", np.empty(0))
        times, ti = np.unique(t, return_inverse=True)
        ids, fi = np.unique(f.astype(np.int64), return_inverse=True)
        return times, ids, ti, fi

    def matrix(self, column: str, ids: Optional[list[int]] = None):
        """(bin end times, flow ids, time × flow values; NaN where a flow has no row)."""
        if column not in self.flows or len(self.flows[column]) == 0:
            return np.empty(0), np.empty(0, dtype=np.int64), np.empty((0, 0))
        times, all_ids, ti, fi = self._index
        m = np.full((len(times), len(all_ids)), np.nan)
        m[ti, fi] = self.flows[column]
        if ids is not None:
            keep = np.isin(all_ids, ids)
            return times, all_ids[keep], m[:, keep]
        return times, all_ids, m


def _colors(n: int) -> list:
    """n distinct colours (tab10, then tab20 up to MANY_FLOWS; never repeating)."""
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def _flow_names(d: Data) -> dict[int, str]:
    return {f["id"]: f"{f['id']}: {f['name']}" for f in d.summary["flows"]}


def _media_ids(d: Data) -> list[int]:
    return [f["id"] for f in d.summary["flows"] if f.get("media")]


def _legend(ax, ncol: int = 1) -> None:
    """Legend outside the axes, so it never hides data."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, ncol=ncol)


def _save(fig, path: Path, tight: bool = False) -> Path:
    """Saves and closes. Margins are fixed in inches (room on the right for the legend) rather
    than measured (`bbox_inches="tight"` draws the figure twice: a third of the plotting time);
    figures with a suptitle or several panels ask for `tight`."""
    if tight:
        fig.savefig(path, dpi=DPI, bbox_inches="tight", pil_kwargs={"compress_level": 1})
    else:
        w, h = fig.get_size_inches()
        has_legend = any(ax.get_legend() is not None for ax in fig.axes)
        fig.subplots_adjust(left=0.8 / w, right=1 - (2.4 if has_legend else 0.3) / w, bottom=0.55 / h, top=1 - 0.4 / h)
        # Light PNG compression: a quarter faster to write than zlib's default, 20 % larger.
        fig.savefig(path, dpi=DPI, pil_kwargs={"compress_level": 1})
    plt.close(fig)
    return path


def _shade_warmup(ax, d: Data) -> None:
    w = d.summary.get("warmup_s") or 0.0
    if w > 0:
        # Over the data (dimming it), so that filled areas never hide it.
        ax.axvspan(0, w, color=WARMUP_COLOR, alpha=0.45, lw=0, label="warm-up (not measured)", zorder=2.5)


def _time_axes(ax, d: Data, ylabel: str, ylim=(0, None)) -> None:
    _shade_warmup(ax, d)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, d.summary["duration_s"])
    ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)


def finish_figure(fig, ax, path: Path, xlabel: str, ylabel: str, title: str, legend: bool = True) -> Path:
    """Axes labels, title and legend for a figure that is not a run's time series, then save."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend:
        _legend(ax)
    ax.grid(alpha=0.3)
    return _save(fig, path, tight=True)


def _lines(ax, times, ids, m, names: dict[int, str], step: bool = False, **kw) -> None:
    """A line per flow (≤ MANY_FLOWS), else the median across flows and its 10-90 % band."""
    if m.size == 0:
        return
    if len(ids) <= MANY_FLOWS:
        for color, fid, col in zip(_colors(len(ids)), ids, m.T):
            label = names.get(int(fid), str(fid))
            if step:
                ax.step(times, col, where="pre", color=color, label=label, **kw)
            else:
                ax.plot(times, col, color=color, label=label, **kw)
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # bins where no flow has a value
        lo, med, hi = np.nanpercentile(m, [10, 50, 90], axis=1)
    ax.fill_between(times, lo, hi, color="C0", alpha=0.25, lw=0, label=f"10-90 % of {len(ids)} flows")
    ax.plot(times, med, color="C0", lw=1.2, label="median flow")


# --- media ---------------------------------------------------------------------------------


def _mark_freezes(ax, d: Data, ids: list[int]) -> None:
    """Freezes of the display as red spans, stalls of frame completion as orange ones below
    them (the lower fifth of the axes)."""
    fr = d.interruptions
    if not len(fr.get("flow", ())):
        return
    mine = np.isin(fr["flow"].astype(np.int64), ids)
    # At least 1/300 of the run wide, so that a 200 ms freeze in a 10-minute run stays visible.
    least = d.summary["duration_s"] / 300
    for code, label, color, (y0, y1) in ((0, "freeze", FREEZE_COLOR, (0.0, 1.0)), (1, "stall", STALL_COLOR, (0.0, 0.2))):
        keep = mine & (fr["kind"] == code)
        for k, (start, dur) in enumerate(zip(fr["start_s"][keep], fr["duration_s"][keep])):
            ax.axvspan(start, start + max(dur, least), ymin=y0, ymax=y1, color=color, alpha=0.35, lw=0,
                       label=label if k == 0 else None)


def plot_frame_delay(d: Data, path: Path) -> Optional[Path]:
    ids = _media_ids(d)
    times, fids, m = d.matrix("frame_delay_ms_mean", ids)
    if m.size == 0 or np.isnan(m).all():
        return None
    fig, ax = plt.subplots(figsize=(10, 3.6))
    names = _flow_names(d)
    _mark_freezes(ax, d, ids)
    _lines(ax, times, fids, m, {k: f"{v} (bin mean)" for k, v in names.items()}, lw=1.2)
    if len(fids) == 1:
        _, _, mx = d.matrix("frame_delay_ms_max", ids)
        ax.plot(times, mx[:, 0], color="C0", lw=0.8, alpha=0.5, ls=":", label="bin max")
    _time_axes(ax, d, "frame delay (ms, capture to complete)")
    ax.set_title("frame delay over time (display freezes red, frame stalls orange)")
    _legend(ax)
    return _save(fig, path)


def plot_rendered_fps(d: Data, path: Path) -> Optional[Path]:
    ids = _media_ids(d)
    times, fids, m = d.matrix("rendered_fps", ids)
    if m.size == 0:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.0))
    _mark_freezes(ax, d, ids)
    _lines(ax, times, fids, m, _flow_names(d), step=True, lw=1.1)
    _time_axes(ax, d, "frames shown per second")
    ax.set_title("rendered frame rate (what the viewer saw)")
    _legend(ax)
    return _save(fig, path)


def plot_media_rates(d: Data, path: Path) -> Optional[Path]:
    """Per media flow: the controller's target, what the sender sent, what was delivered."""
    ids = _media_ids(d)[:MEDIA_PANELS]
    if not ids:
        return None
    names = _flow_names(d)
    series = {c: d.matrix(c, ids) for c in ("target_mbps", "sending_rate_mbps", "throughput_mbps")}
    times = series["throughput_mbps"][0]
    fig, axes = plt.subplots(len(ids), 1, figsize=(10, 2.6 * len(ids)), sharex=True, squeeze=False)
    for k, (ax, fid) in enumerate(zip(axes[:, 0], ids)):
        target = series["target_mbps"][2][:, k] if series["target_mbps"][2].size else np.empty(0)
        if target.size and not np.isnan(target).all():
            ax.step(times, target, where="pre", color="C2", lw=1.2, label="target")
        ax.plot(times, series["sending_rate_mbps"][2][:, k], color="C1", lw=1.0, label="sent")
        ax.plot(times, series["throughput_mbps"][2][:, k], color="C0", lw=1.0, label="delivered")
        _time_axes(ax, d, "Mbit/s")
        ax.set_title(names[fid], fontsize=9, loc="left")
        _legend(ax)
    for ax in axes[:-1, 0]:
        ax.set_xlabel("")
    more = len(_media_ids(d)) - len(ids)
    fig.suptitle("media rate: target vs sent vs delivered" + (f" (first {len(ids)}; {more} more in flows.parquet)" if more > 0 else ""))
    return _save(fig, path, tight=True)


def plot_composition(d: Data, path: Path) -> Optional[Path]:
    media = [f for f in d.summary["flows"] if f.get("media")]
    if not media:
        return None
    media = media[: max(MANY_FLOWS, 1)]
    parts = ["media", "fec", "rtx", "padding"]
    colors = {"media": "C0", "fec": "C2", "rtx": "C3", "padding": "C7"}
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.4 * len(media)))
    left = np.zeros(len(media))
    labels = [f"{f['id']}: {f['name']}" for f in media]
    for p in parts:
        vals = np.array([f["media"]["composition"][p] for f in media])
        ax.barh(labels, vals, left=left, color=colors[p], label=p)
        left += vals
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    return finish_figure(fig, ax, path, "share of the bytes sent", "", "traffic composition of the media flows")


def _cdf(ax, d: Data, metric: str, ids: list[int]) -> bool:
    dist = d.distributions
    if not len(dist.get("flow", ())):
        return False
    code = DISTRIBUTION_METRICS.index(metric)
    flow = dist["flow"].astype(np.int64)
    keep = (dist["metric"] == code) & np.isin(flow, ids)
    if not keep.any():
        return False
    names = _flow_names(d)
    groups = []
    for fid in np.unique(flow[keep]):
        rows = keep & (flow == fid)
        order = np.argsort(dist["percentile"][rows], kind="stable")
        groups.append((int(fid), dist["value_ms"][rows][order], dist["percentile"][rows][order] / 100))
    if len(groups) <= MANY_FLOWS:
        for color, (fid, x, y) in zip(_colors(len(groups)), groups):
            ax.plot(x, y, color=color, lw=1.2, label=names.get(fid, str(fid)))
    else:
        segs = [np.column_stack([x, y]) for _, x, y in groups]
        ax.add_collection(LineCollection(segs, colors="C0", alpha=max(0.03, 3 / len(segs)), lw=0.8))
        ax.autoscale_view()
        ax.plot([], [], color="C0", alpha=0.5, label=f"{len(groups)} flows, one line each")
    ax.set_ylim(0, 1.0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    return True


def plot_frame_delay_cdf(d: Data, path: Path) -> Optional[Path]:
    fig, ax = plt.subplots(figsize=(10, 3.4))
    if not _cdf(ax, d, "frame_delay", _media_ids(d)):
        plt.close(fig)
        return None
    return finish_figure(fig, ax, path, "frame delay (ms)", "fraction of frames",
                         "frame delay CDF (measurement window)")


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
    if not cols or cols[0][2].size == 0 or np.isnan(cols[0][2]).all():
        return None
    times = cols[0][0]
    vals = np.vstack([np.nan_to_num(c[2][:, 0]) for c in cols])
    fig, ax = plt.subplots(figsize=(10, 3.8))
    ax.stackplot(times, vals, labels=FRAME_STAGES, colors=STAGE_COLORS, step="pre", lw=0)
    _time_axes(ax, d, "mean delay of frames shown (ms)")
    more = f" (flow {_flow_names(d)[fid]}; {len(ids) - 1} more in flows.parquet)" if len(ids) > 1 else ""
    ax.set_title("where the frame delay went, per bin" + more)
    _legend(ax)
    return _save(fig, path)


def plot_breakdown_cdf(d: Data, path: Path) -> Optional[Path]:
    """Each stage's CDF over the displayed frames (first media flow)."""
    ids = _media_ids(d)[:1]
    dist = d.distributions
    if not ids or not len(dist.get("flow", ())):
        return None
    flow = dist["flow"].astype(np.int64)
    fig, ax = plt.subplots(figsize=(10, 3.6))
    drawn = 0
    for s, color in zip(FRAME_STAGES, STAGE_COLORS):
        rows = (dist["metric"] == DISTRIBUTION_METRICS.index(f"stage_{s}")) & (flow == ids[0])
        if not rows.any():
            continue
        order = np.argsort(dist["percentile"][rows], kind="stable")
        x, y = dist["value_ms"][rows][order], dist["percentile"][rows][order] / 100
        if np.nanmax(x) <= 0:
            continue  # a stage this run never spent time in
        ax.plot(x, y, color=color, lw=1.3, label=s)
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_ylim(0, 1.0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    return finish_figure(fig, ax, path, "time in the stage (ms, log above 1 ms)", "fraction of frames shown",
                         f"per-stage delay CDF, flow {_flow_names(d)[ids[0]]} (measurement window)")


# --- every flow --------------------------------------------------------------------------


def plot_throughput(d: Data, path: Path) -> Path:
    if not isinstance(d, Data):  # the repro reports call this with a RunResult
        d = Data(d)
    fig, ax = plt.subplots(figsize=(10, 4))
    link = d.link
    ax.fill_between(link["time_s"], link["capacity_mbps"], step="pre", color="#e3efe1", lw=0, label="capacity")
    ax.step(link["time_s"], link["capacity_mbps"], where="pre", color="#5a9a50", lw=0.8)
    ax.step(link["time_s"], link["delivered_mbps"], where="pre", color="black", lw=1.2, label="all flows together")
    _lines(ax, *d.matrix("throughput_mbps"), _flow_names(d), lw=1.0)
    _time_axes(ax, d, "throughput (Mbit/s)")
    ax.set_title("throughput at the receiver vs bottleneck capacity")
    _legend(ax)
    return _save(fig, path)


def plot_delay(d: Data, path: Path) -> Path:
    """One-way delay per flow; the bottleneck's queuing delay once (every flow shares it)."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(d.link["time_s"], d.link["queue_delay_ms_mean"], color="black", lw=1.0, ls="--",
            label="bottleneck queuing delay")
    _lines(ax, *d.matrix("one_way_delay_ms_mean"), {k: f"{v} one-way" for k, v in _flow_names(d).items()}, lw=1.0)
    _time_axes(ax, d, "delay (ms, bin mean)")
    ax.set_title("one-way delay per flow and the bottleneck's queuing delay")
    _legend(ax)
    return _save(fig, path)


def plot_delay_cdfs(d: Data, path: Path) -> Optional[Path]:
    ids = [f["id"] for f in d.summary["flows"]]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.4))
    ok1 = _cdf(a1, d, "queuing_delay", ids)
    ok2 = _cdf(a2, d, "one_way_delay", ids)
    if not (ok1 or ok2):
        plt.close(fig)
        return None
    a1.set_xlabel("queuing delay (ms)")
    a1.set_ylabel("fraction of packets")
    a2.set_xlabel("one-way delay (ms)")
    fig.suptitle("packet delay CDFs per flow (measurement window)")
    _legend(a2)
    return _save(fig, path, tight=True)


def plot_rtt(d: Data, path: Path) -> Optional[Path]:
    """The sender's RTT estimate: TCP's smoothed RTT, a media controller's RTT."""
    cols = [c for c in ("srtt_ms", "rtt_ms") if c in d.flows]
    if not cols:
        return None
    times, ids, m = d.matrix(cols[0])
    for c in cols[1:]:
        _, _, other = d.matrix(c)
        m = np.where(np.isnan(m), other, m)
    return _flow_series(d, times, ids, m, path, "RTT (ms, sender's estimate)", "round-trip time over time", 3.4)


def _flow_series(d: Data, times, ids, m, path: Path, ylabel: str, title: str, height: float) -> Optional[Path]:
    """One line per flow that has any value (or their spread), on the run's time axis."""
    if m.size == 0:
        return None
    keep = ~np.isnan(m).all(axis=0)
    if not keep.any():
        return None
    fig, ax = plt.subplots(figsize=(10, height))
    _lines(ax, times, ids[keep], m[:, keep], _flow_names(d), lw=1.0)
    _time_axes(ax, d, ylabel)
    ax.set_title(title)
    _legend(ax)
    return _save(fig, path)


def plot_drops(d: Data, path: Path) -> Optional[Path]:
    link = d.link
    zero = np.zeros(len(link["time_s"]))
    over = np.nan_to_num(link.get("drops_overflow", zero))
    rand = np.nan_to_num(link.get("drops_random", zero))
    flow_drops = np.nan_to_num(d.flows.get("drops", np.zeros(0))).sum()
    if over.sum() + rand.sum() == 0 and flow_drops == 0:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.0))
    # Stacked step areas: one artist each however many bins (bars would be one per bin).
    ax.fill_between(link["time_s"], over, step="pre", color="C3", lw=0, label="queue overflow / AQM")
    ax.fill_between(link["time_s"], over, over + rand, step="pre", color="C1", lw=0, label="random / burst loss")
    _time_axes(ax, d, "packets dropped per bin")
    ax.set_title("drops at the bottleneck over time")
    _legend(ax)
    return _save(fig, path)


def plot_queue(d: Data, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 3.2))
    link = d.link
    ax.fill_between(link["time_s"], link["queue_bytes_max"] / 1e3, step="pre", color="C0", alpha=0.25, lw=0, label="max in bin")
    ax.step(link["time_s"], link["queue_bytes_mean"] / 1e3, where="pre", color="C0", lw=1.2, label="time-weighted mean")
    limit = d.summary["link"]["queue_limit"]
    if "bytes" in limit:
        ax.axhline(limit["bytes"] / 1e3, color="red", ls="--", lw=1, label="limit")
    _time_axes(ax, d, "bottleneck queue (kB)")
    ax.set_title("bottleneck queue occupancy")
    _legend(ax)
    return _save(fig, path)


def plot_cwnd(d: Data, path: Path) -> Optional[Path]:
    # The emulator's kernel flows do not report their window: no plot then.
    return _flow_series(d, *d.matrix("cwnd_packets"), path, "cwnd (packets, end of bin)", "congestion windows", 3.2)


def plot_delay_detector(d: Data, path: Path) -> Optional[Path]:
    """GCC flows: the detector's statistic against its (adaptive) threshold."""
    times, ids, grad = d.matrix("delay_gradient")
    if grad.size == 0:
        return None
    keep = ~np.isnan(grad).all(axis=0)
    if not keep.any():
        return None
    _, _, thr = d.matrix("threshold")
    cols = np.flatnonzero(keep)[:MEDIA_PANELS]
    names = _flow_names(d)
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for color, k in zip(_colors(len(cols)), cols):
        name = names[int(ids[k])]
        ax.plot(times, grad[:, k], lw=1, color=color, label=f"{name} statistic")
        ax.plot(times, thr[:, k], lw=1, ls="--", color=color, alpha=0.7, label=f"{name} ± threshold")
        ax.plot(times, -thr[:, k], lw=1, ls="--", color=color, alpha=0.7)
    _time_axes(ax, d, "delay trend statistic (ms)", ylim=(None, None))
    ax.set_title("GCC over-use detector: statistic vs adaptive threshold (end of each bin)")
    _legend(ax)
    return _save(fig, path)


def plot_fairness(d: Data, path: Path) -> Optional[Path]:
    fr = d.fairness
    if not len(fr.get("jain", ())):
        return None
    keep = ~np.isnan(fr["jain"]) & (fr["active_flows"] >= 2)
    if not keep.any():
        return None
    fig, ax = plt.subplots(figsize=(10, 2.8))
    ax.step(fr["time_s"][keep], fr["jain"][keep], where="pre", lw=1.2, color="C0")
    _time_axes(ax, d, "Jain index", ylim=(0, 1.05))
    ax.set_title(f"fairness per {d.summary['fairness']['window_s']:g} s window (flows active throughout)")
    return _save(fig, path)


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


#: Below this many plots, one process draws them all.
MIN_PARALLEL = 4


def _draw_share(d: Data, jobs: list[tuple[int, Path]], counter) -> None:
    """Draws plots until none is left, taking the next one from the shared counter (so the
    processes balance themselves whatever each plot costs)."""
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value += 1
        if k >= len(jobs):
            return
        idx, path = jobs[k]
        PLOTS[idx][3](d, path)


#: Seconds the plotting child gets once the parent is done with its share; then it is killed
#: and the parent draws what is missing.
CHILD_TIMEOUT_S = 60.0


def _wait_child(pid: int, timeout: float) -> int:
    """The child's exit code, or -9 after killing it when it is not done within `timeout`."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return -9
        time.sleep(0.002)


def plot_report(result: RunResult, out_dir: Path, workers: Optional[int] = None) -> list[Plot]:
    """Writes every applicable plot into `out_dir`; returns them in display order.

    With two or more cores the plots are shared with one forked child (matplotlib is not
    thread-safe; the fork inherits the imported modules and the data, so it starts in a few
    milliseconds); the two take plots from a shared counter until none is left. `workers=1`
    draws them all here. A child that fails leaves its plots to the parent.
    """
    d = Data(result)
    jobs = [(k, out_dir / f"{stem}.png") for k, (stem, _, _, _) in enumerate(PLOTS)]
    if workers is None:
        workers = 2 if (os.cpu_count() or 1) >= 2 and len(jobs) >= MIN_PARALLEL else 1
    if workers > 1 and hasattr(os, "fork"):
        import multiprocessing as mp

        counter = mp.get_context("fork").Value("i", 0)
        pid = os.fork()
        if pid == 0:  # the child: draw a share, then leave without running the parent's cleanup
            code = 1
            try:
                import signal

                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _draw_share(d, jobs, counter)
                code = 0
            finally:
                os._exit(code)
        try:
            _draw_share(d, jobs, counter)
        except BaseException:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise
        if _wait_child(pid, CHILD_TIMEOUT_S) != 0:
            for idx, path in jobs:  # redraw here what the child may have left undone
                if not path.exists():
                    PLOTS[idx][3](d, path)
        return [Plot(path, PLOTS[idx][1], PLOTS[idx][2]) for idx, path in jobs if path.exists()]
    made = []
    for idx, path in jobs:
        p = PLOTS[idx][3](d, path)
        if p is not None:
            made.append(Plot(p, PLOTS[idx][1], PLOTS[idx][2]))
    return made

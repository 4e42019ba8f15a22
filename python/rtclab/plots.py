"""PNG plots of a run, QoE first.

Media flows: frame delay over time with freezes marked, its CDF, rendered frame rate, target vs
sent vs delivered rate, traffic composition. Every flow: throughput against capacity, delay
(one-way per flow, the bottleneck's queuing delay once), delay CDFs, RTT, drops, queue, cwnd,
fairness, GCC's detector. The warm-up (outside the measurement window) is shaded on every time
axis. Up to `MANY_FLOWS` flows get a line each, in colours that do not repeat; beyond that the
plots show the spread across flows (median and 10-90 % band), so 50 or 2,000 flows stay readable
and quick to draw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, NamedTuple, Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from rtclab.runner import RunResult  # noqa: E402

DPI = 100
#: Beyond this many flows, per-flow lines give way to the spread across flows.
MANY_FLOWS = 12
#: Media flows that get a panel each in the target/sent/delivered figure.
MEDIA_PANELS = 6
WARMUP_COLOR = "#d9d9d9"
FREEZE_COLOR = "#d62728"


class Plot(NamedTuple):
    """One image of the report: its file, caption and section ("media" or "network")."""

    path: Path
    title: str
    section: str


def _colors(n: int) -> list:
    """n distinct colours (tab10, then tab20 up to MANY_FLOWS; never repeating)."""
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def _flow_names(result: RunResult) -> dict[int, str]:
    return {f["id"]: f"{f['id']}: {f['name']}" for f in result.summary["flows"]}


def _media_ids(result: RunResult) -> list[int]:
    return [f["id"] for f in result.summary["flows"] if f.get("media")]


def _legend(ax, ncol: int = 1) -> None:
    """Legend outside the axes, so it never hides data."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, ncol=ncol)


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _shade_warmup(ax, result: RunResult) -> None:
    w = result.summary.get("warmup_s") or 0.0
    if w > 0:
        # Over the data (dimming it), so that filled areas never hide it.
        ax.axvspan(0, w, color=WARMUP_COLOR, alpha=0.45, lw=0, label="warm-up (not measured)", zorder=2.5)


def _time_axes(ax, result: RunResult, ylabel: str, ylim=(0, None)) -> None:
    _shade_warmup(ax, result)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, result.summary["duration_s"])
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
    return _save(fig, path)


def _per_flow(result: RunResult, column: str, ids: Optional[list[int]] = None) -> pd.DataFrame:
    """time × flow table of one column (NaN where a flow was not active or has no value)."""
    df = result.flows
    if ids is not None:
        df = df[df["flow"].isin(ids)]
    if column not in df or df.empty:
        return pd.DataFrame()
    return df.pivot_table(index="time_s", columns="flow", values=column, aggfunc="first", dropna=False)


def _lines(ax, table: pd.DataFrame, names: dict[int, str], step: bool = False, **kw) -> None:
    """A line per flow (≤ MANY_FLOWS), else the median across flows and its 10-90 % band."""
    if table.empty:
        return
    if table.shape[1] <= MANY_FLOWS:
        for color, fid in zip(_colors(table.shape[1]), table.columns):
            s = table[fid]
            if step:
                ax.step(s.index, s.values, where="pre", color=color, label=names.get(fid, str(fid)), **kw)
            else:
                ax.plot(s.index, s.values, color=color, label=names.get(fid, str(fid)), **kw)
        return
    values = table.to_numpy()
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # bins where no flow has a value
            lo, med, hi = np.nanpercentile(values, [10, 50, 90], axis=1)
    ax.fill_between(table.index, lo, hi, color="C0", alpha=0.25, lw=0, label=f"10-90 % of {table.shape[1]} flows")
    ax.plot(table.index, med, color="C0", lw=1.2, label="median flow")


# --- media ---------------------------------------------------------------------------------


def _mark_freezes(ax, result: RunResult, ids: list[int]) -> None:
    fr = result.freezes
    if fr is None or fr.empty:
        return
    fr = fr[fr["flow"].isin(ids)]
    # At least 1/300 of the run wide, so that a 200 ms freeze in a 10-minute run stays visible.
    least = result.summary["duration_s"] / 300
    for k, row in enumerate(fr.itertuples()):
        ax.axvspan(row.start_s, row.start_s + max(row.duration_s, least), color=FREEZE_COLOR, alpha=0.35, lw=0,
                   label="freeze" if k == 0 else None)


def plot_frame_delay(result: RunResult, path: Path) -> Optional[Path]:
    ids = _media_ids(result)
    table = _per_flow(result, "frame_delay_ms_mean", ids)
    if table.empty or table.isna().all().all():
        return None
    fig, ax = plt.subplots(figsize=(10, 3.6))
    names = _flow_names(result)
    _mark_freezes(ax, result, ids)
    _lines(ax, table, {k: f"{v} (bin mean)" for k, v in names.items()}, lw=1.2)
    if table.shape[1] == 1:
        mx = _per_flow(result, "frame_delay_ms_max", ids)
        ax.plot(mx.index, mx.iloc[:, 0], color="C0", lw=0.8, alpha=0.5, ls=":", label="bin max")
    _time_axes(ax, result, "frame delay (ms, capture to complete)")
    ax.set_title("frame delay over time (freezes of the display in red)")
    _legend(ax)
    return _save(fig, path)


def plot_rendered_fps(result: RunResult, path: Path) -> Optional[Path]:
    ids = _media_ids(result)
    table = _per_flow(result, "rendered_fps", ids)
    if table.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.0))
    _mark_freezes(ax, result, ids)
    _lines(ax, table, _flow_names(result), step=True, lw=1.1)
    _time_axes(ax, result, "frames shown per second")
    ax.set_title("rendered frame rate (what the viewer saw)")
    _legend(ax)
    return _save(fig, path)


def plot_media_rates(result: RunResult, path: Path) -> Optional[Path]:
    """Per media flow: the controller's target, what the sender sent, what was delivered."""
    ids = _media_ids(result)[:MEDIA_PANELS]
    if not ids:
        return None
    names = _flow_names(result)
    fig, axes = plt.subplots(len(ids), 1, figsize=(10, 2.6 * len(ids)), sharex=True, squeeze=False)
    for ax, fid in zip(axes[:, 0], ids):
        g = result.flows[result.flows["flow"] == fid]
        if "target_mbps" in g and g["target_mbps"].notna().any():
            ax.step(g["time_s"], g["target_mbps"], where="pre", color="C2", lw=1.2, label="target")
        ax.plot(g["time_s"], g["sending_rate_mbps"], color="C1", lw=1.0, label="sent")
        ax.plot(g["time_s"], g["throughput_mbps"], color="C0", lw=1.0, label="delivered")
        _time_axes(ax, result, "Mbit/s")
        ax.set_title(names[fid], fontsize=9, loc="left")
        _legend(ax)
    for ax in axes[:-1, 0]:
        ax.set_xlabel("")
    more = len(_media_ids(result)) - len(ids)
    fig.suptitle("media rate: target vs sent vs delivered" + (f" (first {len(ids)}; {more} more in flows.parquet)" if more > 0 else ""))
    return _save(fig, path)


def plot_composition(result: RunResult, path: Path) -> Optional[Path]:
    media = [f for f in result.summary["flows"] if f.get("media")]
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


def _cdf(ax, result: RunResult, metric: str, ids: list[int]) -> bool:
    d = result.distributions
    if d is None or d.empty:
        return False
    d = d[(d["metric"] == metric) & d["flow"].isin(ids)]
    if d.empty:
        return False
    names = _flow_names(result)
    groups = [(fid, g.sort_values("percentile")) for fid, g in d.groupby("flow", sort=True)]
    if len(groups) <= MANY_FLOWS:
        for color, (fid, g) in zip(_colors(len(groups)), groups):
            ax.plot(g["value_ms"], g["percentile"] / 100, color=color, lw=1.2, label=names.get(fid, str(fid)))
    else:
        segs = [np.column_stack([g["value_ms"], g["percentile"] / 100]) for _, g in groups]
        ax.add_collection(LineCollection(segs, colors="C0", alpha=max(0.03, 3 / len(segs)), lw=0.8))
        ax.autoscale_view()
        ax.plot([], [], color="C0", alpha=0.5, label=f"{len(groups)} flows, one line each")
    ax.set_ylim(0, 1.0)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    return True


def plot_frame_delay_cdf(result: RunResult, path: Path) -> Optional[Path]:
    fig, ax = plt.subplots(figsize=(10, 3.4))
    if not _cdf(ax, result, "frame_delay", _media_ids(result)):
        plt.close(fig)
        return None
    return finish_figure(fig, ax, path, "frame delay (ms)", "fraction of frames",
                         "frame delay CDF (measurement window)")


# --- every flow --------------------------------------------------------------------------


def plot_throughput(result: RunResult, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 4))
    link = result.link
    ax.fill_between(link["time_s"], link["capacity_mbps"], step="pre", color="#e3efe1", lw=0, label="capacity")
    ax.step(link["time_s"], link["capacity_mbps"], where="pre", color="#5a9a50", lw=0.8)
    ax.step(link["time_s"], link["delivered_mbps"], where="pre", color="black", lw=1.2, label="all flows together")
    _lines(ax, _per_flow(result, "throughput_mbps"), _flow_names(result), lw=1.0)
    _time_axes(ax, result, "throughput (Mbit/s)")
    ax.set_title("throughput at the receiver vs bottleneck capacity")
    _legend(ax)
    return _save(fig, path)


def plot_delay(result: RunResult, path: Path) -> Path:
    """One-way delay per flow; the bottleneck's queuing delay once (every flow shares it)."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    link = result.link
    ax.plot(link["time_s"], link["queue_delay_ms_mean"], color="black", lw=1.0, ls="--",
            label="bottleneck queuing delay")
    _lines(ax, _per_flow(result, "one_way_delay_ms_mean"), {k: f"{v} one-way" for k, v in _flow_names(result).items()}, lw=1.0)
    _time_axes(ax, result, "delay (ms, bin mean)")
    ax.set_title("one-way delay per flow and the bottleneck's queuing delay")
    _legend(ax)
    return _save(fig, path)


def plot_delay_cdfs(result: RunResult, path: Path) -> Optional[Path]:
    ids = [f["id"] for f in result.summary["flows"]]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.4))
    ok1 = _cdf(a1, result, "queuing_delay", ids)
    ok2 = _cdf(a2, result, "one_way_delay", ids)
    if not (ok1 or ok2):
        plt.close(fig)
        return None
    a1.set_xlabel("queuing delay (ms)")
    a1.set_ylabel("fraction of packets")
    a2.set_xlabel("one-way delay (ms)")
    fig.suptitle("packet delay CDFs per flow (measurement window)")
    _legend(a2)
    return _save(fig, path)


def plot_rtt(result: RunResult, path: Path) -> Optional[Path]:
    """The sender's RTT estimate: TCP's smoothed RTT, a media controller's RTT."""
    df = result.flows
    cols = [c for c in ("srtt_ms", "rtt_ms") if c in df]
    if not cols:
        return None
    rtt = df[cols[0]].copy()
    for c in cols[1:]:
        rtt = rtt.fillna(df[c])
    work = df[["time_s", "flow"]].assign(rtt=rtt)
    if work["rtt"].isna().all():
        return None
    table = work.pivot_table(index="time_s", columns="flow", values="rtt", aggfunc="first", dropna=False)
    table = table.loc[:, table.notna().any()]
    fig, ax = plt.subplots(figsize=(10, 3.4))
    _lines(ax, table, _flow_names(result), lw=1.0)
    _time_axes(ax, result, "RTT (ms, sender's estimate)")
    ax.set_title("round-trip time over time")
    _legend(ax)
    return _save(fig, path)


def plot_drops(result: RunResult, path: Path) -> Optional[Path]:
    link = result.link
    over = link.get("drops_overflow", pd.Series(0, index=link.index))
    rand = link.get("drops_random", pd.Series(0, index=link.index))
    if (over.fillna(0).sum() + rand.fillna(0).sum()) == 0 and result.flows.get("drops", pd.Series(dtype=float)).fillna(0).sum() == 0:
        return None
    bin_s = float(np.diff(link["time_s"]).min()) if len(link) > 1 else 0.2
    fig, ax = plt.subplots(figsize=(10, 3.0))
    ax.bar(link["time_s"] - bin_s, over, width=bin_s, align="edge", color="C3", label="queue overflow / AQM")
    ax.bar(link["time_s"] - bin_s, rand, width=bin_s, align="edge", bottom=over, color="C1", label="random / burst loss")
    _time_axes(ax, result, "packets dropped per bin")
    ax.set_title("drops at the bottleneck over time")
    _legend(ax)
    return _save(fig, path)


def plot_queue(result: RunResult, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 3.2))
    link = result.link
    ax.fill_between(link["time_s"], link["queue_bytes_max"] / 1e3, step="pre", color="C0", alpha=0.25, lw=0, label="max in bin")
    ax.step(link["time_s"], link["queue_bytes_mean"] / 1e3, where="pre", color="C0", lw=1.2, label="time-weighted mean")
    limit = result.summary["link"]["queue_limit"]
    if "bytes" in limit:
        ax.axhline(limit["bytes"] / 1e3, color="red", ls="--", lw=1, label="limit")
    _time_axes(ax, result, "bottleneck queue (kB)")
    ax.set_title("bottleneck queue occupancy")
    _legend(ax)
    return _save(fig, path)


def plot_cwnd(result: RunResult, path: Path) -> Optional[Path]:
    if "cwnd_packets" not in result.flows:
        return None  # the emulator's kernel flows do not report their window
    table = _per_flow(result, "cwnd_packets")
    if table.empty:
        return None
    table = table.loc[:, table.notna().any()]
    if table.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.2))
    _lines(ax, table, _flow_names(result), lw=1.1)
    _time_axes(ax, result, "cwnd (packets, end of bin)")
    ax.set_title("congestion windows")
    _legend(ax)
    return _save(fig, path)


def plot_delay_detector(result: RunResult, path: Path) -> Optional[Path]:
    """GCC flows: the detector's statistic against its (adaptive) threshold."""
    if "delay_gradient" not in result.flows:
        return None
    media = result.flows.dropna(subset=["delay_gradient"])
    if media.empty:
        return None
    ids = sorted(media["flow"].unique())[:MEDIA_PANELS]
    names = _flow_names(result)
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for color, fid in zip(_colors(len(ids)), ids):
        g = media[media["flow"] == fid]
        ax.plot(g["time_s"], g["delay_gradient"], lw=1, color=color, label=f"{names[fid]} statistic")
        ax.plot(g["time_s"], g["threshold"], lw=1, ls="--", color=color, alpha=0.7, label=f"{names[fid]} ± threshold")
        ax.plot(g["time_s"], -g["threshold"], lw=1, ls="--", color=color, alpha=0.7)
    _time_axes(ax, result, "delay trend statistic (ms)", ylim=(None, None))
    ax.set_title("GCC over-use detector: statistic vs adaptive threshold (end of each bin)")
    _legend(ax)
    return _save(fig, path)


def plot_fairness(result: RunResult, path: Path) -> Optional[Path]:
    fr = result.fairness.dropna(subset=["jain"])
    fr = fr[fr["active_flows"] >= 2]
    if fr.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 2.8))
    ax.step(fr["time_s"], fr["jain"], where="pre", lw=1.2, color="C0")
    _time_axes(ax, result, "Jain index", ylim=(0, 1.05))
    ax.set_title(f"fairness per {result.summary['fairness']['window_s']:g} s window (flows active throughout)")
    return _save(fig, path)


#: (file stem, caption, section, function), in display order.
PLOTS: list[tuple[str, str, str, Callable[[RunResult, Path], Optional[Path]]]] = [
    ("frame_delay", "Frame delay over time", "media", plot_frame_delay),
    ("frame_delay_cdf", "Frame delay CDF", "media", plot_frame_delay_cdf),
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


def plot_report(result: RunResult, out_dir: Path) -> list[Plot]:
    """Writes every applicable plot into `out_dir`; returns them in display order."""
    made = []
    for stem, title, section, fn in PLOTS:
        p = fn(result, out_dir / f"{stem}.png")
        if p is not None:
            made.append(Plot(p, title, section))
    return made


def plot_all(result: RunResult, out_dir: Path) -> list[Path]:
    """Writes every applicable plot; returns their paths in display order."""
    return [p.path for p in plot_report(result, out_dir)]

"""PNG plots of a run: throughput vs capacity, queuing delay, queue occupancy, cwnd, fairness."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rtclab.runner import RunResult  # noqa: E402

DPI = 100


def _flows(result: RunResult):
    for fid, g in result.flows.groupby("flow", sort=True):
        yield fid, g["flow_name"].iloc[0], g


def _legend(ax) -> None:
    """Legend outside the axes, so it never hides data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def finish_figure(fig, ax, path: Path, xlabel: str, ylabel: str, title: str, legend: bool = True) -> Path:
    """Axes labels, title and legend for a figure that is not a run's time series, then save."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend:
        _legend(ax)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def _finish(fig, ax, path: Path, result: RunResult, ylabel: str, what: str, ylim=(0, None), legend: bool = True) -> Path:
    """Common axes dressing, then save."""
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(*ylim)
    ax.set_title(f"{result.summary['scenario']}: {what}")
    if legend:
        _legend(ax)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_throughput(result: RunResult, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.step(result.link["time_s"], result.link["capacity_mbps"], where="pre", color="black", lw=1.5, label="capacity")
    ax.plot(result.link["time_s"], result.link["delivered_mbps"], color="grey", lw=1, alpha=0.6, label="link total")
    for _, name, g in _flows(result):
        (line,) = ax.plot(g["time_s"], g["throughput_mbps"], lw=1.2, label=name)
        if "target_mbps" in g and g["target_mbps"].notna().any():
            ax.plot(g["time_s"], g["target_mbps"], lw=1, ls="--", color=line.get_color(), label=f"{name} target")
    return _finish(fig, ax, path, result, "throughput (Mbit/s)", "per-flow throughput vs capacity")


def plot_queuing_delay(result: RunResult, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 3.5))
    for _, name, g in _flows(result):
        ax.plot(g["time_s"], g["queuing_delay_ms_mean"], lw=1.2, label=name)
    return _finish(fig, ax, path, result, "queuing delay (ms, bin mean)", "queuing delay per flow")


def plot_queue(result: RunResult, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(10, 3.5))
    link = result.link
    ax.fill_between(link["time_s"], link["queue_bytes_max"] / 1e3, step="pre", alpha=0.25, label="max in bin")
    ax.step(link["time_s"], link["queue_bytes_mean"] / 1e3, where="pre", lw=1.2, label="time-weighted mean")
    limit = result.summary["link"]["queue_limit"]
    if "bytes" in limit:
        ax.axhline(limit["bytes"] / 1e3, color="red", ls="--", lw=1, label="limit")
    return _finish(fig, ax, path, result, "bottleneck queue (kB)", "bottleneck queue occupancy")


def plot_cwnd(result: RunResult, path: Path) -> Path | None:
    if "cwnd_packets" not in result.flows:
        return None  # the emulator's kernel flows do not report their window
    tcp = result.flows.dropna(subset=["cwnd_packets"])
    if tcp.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.5))
    for fid, g in tcp.groupby("flow", sort=True):
        ax.plot(g["time_s"], g["cwnd_packets"], lw=1.2, label=g["flow_name"].iloc[0])
    return _finish(fig, ax, path, result, "cwnd (packets, end of bin)", "congestion windows")


def plot_delay_detector(result: RunResult, path: Path) -> Path | None:
    """GCC flows: the detector's statistic against its (adaptive) threshold."""
    if "delay_gradient" not in result.flows:
        return None
    media = result.flows.dropna(subset=["delay_gradient"])
    if media.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 3.5))
    for fid, g in media.groupby("flow", sort=True):
        name = g["flow_name"].iloc[0]
        (line,) = ax.plot(g["time_s"], g["delay_gradient"], lw=1, label=f"{name} gradient statistic")
        ax.plot(g["time_s"], g["threshold"], lw=1, ls="--", color=line.get_color(), label=f"{name} ± threshold")
        ax.plot(g["time_s"], -g["threshold"], lw=1, ls="--", color=line.get_color())
    return _finish(fig, ax, path, result, "ms-equivalents", "GCC over-use detector (end of each bin)", ylim=(None, None))


def plot_fairness(result: RunResult, path: Path) -> Path | None:
    fr = result.fairness.dropna(subset=["jain"])
    fr = fr[fr["active_flows"] >= 2]
    if fr.empty:
        return None
    fig, ax = plt.subplots(figsize=(10, 2.8))
    ax.step(fr["time_s"], fr["jain"], where="pre", lw=1.2)
    what = f"fairness per {result.summary['fairness']['window_s']:g} s window (active flows)"
    return _finish(fig, ax, path, result, "Jain index", what, ylim=(0, 1.05), legend=False)


def plot_all(result: RunResult, out_dir: Path) -> list[Path]:
    """Writes every applicable plot; returns their paths in display order."""
    made = [
        plot_throughput(result, out_dir / "throughput.png"),
        plot_queuing_delay(result, out_dir / "queuing_delay.png"),
        plot_queue(result, out_dir / "queue.png"),
        plot_cwnd(result, out_dir / "cwnd.png"),
        plot_delay_detector(result, out_dir / "gcc_detector.png"),
        plot_fairness(result, out_dir / "fairness.png"),
    ]
    return [p for p in made if p is not None]

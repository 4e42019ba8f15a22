"""`rtclab realclient`: real WebRTC stacks through the emulator, next to our controllers.

Today: aiortc (PyPI; `pip install aiortc`, or `make realclient`), whose receiver runs
libwebrtc's receive-side REMB estimator (`aiortc/rate.py`, the paper's GCC) and whose sender
sets its VP8 encoder to the REMB. Each run starts a call between two aiortc peers in the
emulator's two namespaces (`rtclab emu shell`, needs root) over the scenario's link, logs the
sender's target and bytes sent, and reads the bottleneck's queue from the link series; the
same scenario then runs in the simulator with `gcc_paper` and `gcc`. Per phase of constant
capacity: mean target, sending rate, utilization (sending rate / capacity), queue p50/p95 (of
the 200 ms bin means), and at each capacity change the reaction time (drop: until the target
is at or below the new capacity) or recovery time (rise: until it reaches 80 % of it).

Not yet: pion's send-side GCC and Chromium's libwebrtc (the issue's other two anchors), the
capture-based composition of the real client's traffic.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

#: Built-in comparison scenarios: a step down and back up, and a Wi-Fi capacity trace.
SCENARIOS = {
    "step": """
name = "realclient-step"
description = "1.2 Mbit/s, 0.6 from 20 s, 1.2 again from 40 s; 300 ms buffer, 40 ms RTT"
duration = "60s"
[link]
capacity = { schedule = [ { at = "0s", rate = "1.2Mbps" }, { at = "20s", rate = "0.6Mbps" }, { at = "40s", rate = "1.2Mbps" } ] }
queue = { limit = "300ms" }
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "40ms"
""",
    "wifi": """
name = "realclient-wifi"
description = "office Wi-Fi bandwidth trace (pitree office-wifi_0) scaled by 1/25: mean 1.1 Mbit/s; 100 ms buffer, 40 ms RTT"
duration = "60s"
[link]
capacity = { trace = "{trace}", format = "bandwidth" }
queue = { limit = "100ms" }
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "40ms"
""",
}
#: The Wi-Fi trace is scaled down into aiortc's range (its VP8 sender stops at 1.5 Mbit/s).
WIFI_SCALE = 1 / 25


def _phases(link) -> list[tuple[float, float, float]]:
    """(start, end, capacity Mbit/s) of each stretch of constant capacity in the link series."""
    t = link["time_s"].to_numpy()
    c = np.round(link["capacity_mbps"].to_numpy(), 4)
    out: list[tuple[float, float, float]] = []
    start = 0.0
    for i in range(1, len(c) + 1):
        if i == len(c) or c[i] != c[i - 1]:
            end = float(t[i - 1])
            out.append((start, end, float(c[i - 1])))
            start = end
    return out


#: More capacity changes than this (a trace): one whole-run phase at the mean capacity.
MAX_PHASES = 6


def _metrics(series: dict[str, np.ndarray], link, duration_s: float | None = None) -> list[dict[str, Any]]:
    """Per-phase figures from a client's series (time_s, target_mbps, sending_mbps); the link
    series is cut at `duration_s` (the emulator's runs a little past the scenario's end)."""
    rows: list[dict[str, Any]] = []
    if duration_s is not None:
        link = link[link["time_s"] <= duration_s + 1e-9]
    lt = link["time_s"].to_numpy()
    q = link["queue_delay_ms_mean"].to_numpy()
    t, target, sending = series["time_s"], series["target_mbps"], series["sending_mbps"]
    phases = _phases(link)
    trace = len(phases) > MAX_PHASES
    if trace:
        phases = [(0.0, float(lt[-1]), float(link["capacity_mbps"].mean()))]
    for k, (a, b, cap) in enumerate(phases):
        name = f"whole run (mean capacity {cap:.3g} Mbit/s)" if trace else f"from {a:.0f} s at {cap:g} Mbit/s"
        m = (t > a) & (t <= b)
        lm = (lt > a) & (lt <= b)

        def mean(x: np.ndarray, m: np.ndarray = m) -> float:
            return float(np.nanmean(x[m])) if m.any() else math.nan

        rows += [
            {"phase": name, "metric": "target Mbit/s", "value": mean(target)},
            {"phase": name, "metric": "sending Mbit/s", "value": mean(sending)},
            {"phase": name, "metric": "utilization", "value": mean(sending) / cap if cap > 0 else math.nan},
            {"phase": name, "metric": "queue p50 ms", "value": float(np.percentile(q[lm], 50)) if lm.any() else math.nan},
            {"phase": name, "metric": "queue p95 ms", "value": float(np.percentile(q[lm], 95)) if lm.any() else math.nan},
        ]
        if k > 0:
            prev = phases[k - 1][2]
            after = (t > a) & (t <= b)
            if cap < prev:
                hit = t[after & (target <= cap)]
                rows.append({"phase": name, "metric": "reaction time s", "value": float(hit[0] - a) if len(hit) else math.nan})
            elif cap > prev:
                hit = t[after & (target >= 0.8 * cap)]
                rows.append({"phase": name, "metric": "recovery time s (80 %)", "value": float(hit[0] - a) if len(hit) else math.nan})
    return rows


def _aiortc_series(log: Path) -> dict[str, np.ndarray]:
    rows = list(csv.DictReader(log.open()))
    t = np.array([float(r["time_s"]) for r in rows])
    target = np.array([float(r["target_bps"]) for r in rows]) / 1e6
    sent = np.array([float(r["bytes_sent"]) for r in rows])
    sending = np.full_like(t, np.nan)
    sending[1:] = np.diff(sent) * 8 / np.diff(t) / 1e6
    return {"time_s": t, "target_mbps": target, "sending_mbps": sending}


def _sim_series(result) -> dict[str, np.ndarray]:
    f = result.timeseries
    f = f[f["flow"] == 0]
    return {"time_s": f["time_s"].to_numpy(), "target_mbps": f["target_mbps"].to_numpy(),
            "sending_mbps": f["sending_rate_mbps"].to_numpy()}


def available() -> str | None:
    """None when the aiortc comparison can run here, else why not."""
    try:
        import aiortc  # noqa: F401
    except ImportError:
        return "aiortc is not installed (pip install aiortc, or make realclient)"
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        return "the emulator needs root and /dev/net/tun"
    return None


def _scenario_text(scenario: str) -> str:
    if scenario in SCENARIOS:
        return SCENARIOS[scenario]
    p = Path(scenario)
    if not p.is_file():
        raise ValueError(f"unknown scenario {scenario!r}: give a file or one of {', '.join(SCENARIOS)}")
    return p.read_text()


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _duration_s(text: str) -> float:
    """The scenario's `duration` in seconds (the units rtclab's scenarios accept)."""
    import re
    import tomllib

    raw = str(tomllib.loads(text).get("duration", ""))
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s|min)\s*", raw)
    if not m:
        raise ValueError(f"the scenario's duration {raw!r} is not a duration like \"60s\"")
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def _with_cc(text: str, cc: str) -> str:
    import tomllib

    d = tomllib.loads(text)
    media = [f for f in d.get("flows", []) if f.get("kind") == "media"]
    if len(d.get("flows", [])) != 1 or len(media) != 1:
        raise ValueError("a realclient scenario has exactly one flow, of kind \"media\" (the call)")
    lines = text.splitlines()
    out = [(f'cc = "{cc}"' if ln.strip().startswith("cc =") else ln) for ln in lines]
    return "\n".join(out) + "\n"


def compare_aiortc(scenario: str = "step", runs: int = 3, out: str | os.PathLike | None = None,
                   progress: bool = True) -> list[dict[str, Any]]:
    """aiortc through the emulator `runs` times, and `gcc_paper` and `gcc` in the simulator,
    on `scenario` (a built-in name or a file); returns rows {client, run, phase, metric, value}."""
    import rtclab
    from rtclab.api import emu_shell

    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    text = _scenario_text(scenario)
    _with_cc(text, "gcc")  # checks the flows before anything starts
    why = available()
    if why:
        raise RuntimeError(f"cannot run the aiortc comparison: {why}")
    if out is not None:
        from rtclab.output import check_replaceable

        check_replaceable(Path(out).absolute(), str(out), [Path(scenario)] if Path(scenario).is_file() else [])
    duration = _duration_s(text)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rtclab-realclient-") as tmp:
        if scenario == "wifi":
            src = Path(__file__).parent.parent / "scenarios" / "traces" / "office-wifi_0.pitree-trace"
            scaled = Path(tmp) / "office-wifi_0-scaled.trace"
            lines = [ln.split() for ln in src.read_text().splitlines() if ln.strip()]
            scaled.write_text("".join(f"{t} {float(r) * WIFI_SCALE:.6f}\n" for t, r in lines))
            text = text.replace("{trace}", str(scaled))
        scen = Path(tmp) / "scenario.toml"
        scen.write_text(text)
        for k in range(runs):
            sig = Path(tmp) / f"run{k}"
            sig.mkdir()
            peer = [sys.executable, "-m", "rtclab.realclient.aiortc_peer"]
            if progress:
                print(f"aiortc run {k + 1}/{runs} ({duration:.0f} s) ...", file=sys.stderr, flush=True)
            rc, result = emu_shell(str(scen), [*peer, "offer", str(sig), "--duration", str(duration - 1)],
                                   receiver=" ".join([*peer, "answer", str(sig)]), seed=k + 1)
            log = sig / "sender.csv"
            if rc != 0 or not log.exists():
                raise RuntimeError(f"aiortc run {k + 1} failed (exit {rc}); see the peers' output above")
            rows += [{"client": "aiortc", "run": k + 1, **r} for r in _metrics(_aiortc_series(log), result.link, duration)]
        for cc in ("gcc_paper", "gcc"):
            res = rtclab.run(_with_cc(text, cc))
            rows += [{"client": cc, "run": 1, **r} for r in _metrics(_sim_series(res), res.link, duration)]
    if out is not None:
        from rtclab.output import write_atomically

        def fill(d: Path) -> None:
            (d / "realclient.json").write_text(json.dumps(rows, indent=1))
            (d / "scenario.toml").write_text(text)
            (d / "table.md").write_text(table(rows) + "\n")

        inputs = [scenario] if Path(scenario).is_file() else []
        write_atomically(out, fill, inputs, kind="realclient")
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Mean over runs per (phase, metric), one column per client."""
    from tabulate import tabulate

    clients = list(dict.fromkeys(r["client"] for r in rows))
    keys = list(dict.fromkeys((r["phase"], r["metric"]) for r in rows))
    body = []
    for ph, me in keys:
        line = [ph, me]
        for c in clients:
            v = [r["value"] for r in rows if r["client"] == c and r["phase"] == ph and r["metric"] == me]
            v = [x for x in v if not (isinstance(x, float) and math.isnan(x))]
            n = sum(1 for r in rows if r["client"] == c and r["phase"] == ph and r["metric"] == me)
            line.append("–" if not v else f"{np.mean(v):.3g}" + (f" ({len(v)}/{n})" if len(v) < n else ""))
        body.append(line)
    return tabulate(body, headers=["phase", "metric", *clients], tablefmt="github")

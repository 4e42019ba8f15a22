"""`rtclab realclient`: real WebRTC stacks through the emulator, next to our controllers.

Three clients (docs/realclient.md):

- `aiortc` (PyPI; `pip install aiortc`, or `make realclient`): its receiver runs libwebrtc's
  receive-side REMB estimator (`aiortc/rate.py`, the paper's GCC) and its sender sets its VP8
  encoder to the REMB (`aiortc_peer.py`);
- `pion` (Go; `pion_peer/main.go`, built on first use with the machine's `go` from the Go
  module proxy, or the binary named by `RTCLAB_PION_PEER`): pion/webrtc v4 with pion's
  send-side GCC interceptor (`pion/interceptor/pkg/gcc`) fed by TWCC feedback, and an ideal
  encoder that writes target/30 bytes every 1/30 s;
- `chromium` (Debian's `chromium` and `chromium-driver`, driven by Selenium): two headless
  Chromium instances, each driven in its namespace, so Chromium's own libwebrtc (send-side GCC
  with LossBasedBweV2, probing, pacing, VP8 rate control) carries a canvas video
  (`chromium_peer.py`).

Each run starts a call between two peers in the emulator's two namespaces (`rtclab emu shell`,
needs root) over the scenario's link, logs the sender's target and bytes sent, and reads the
bottleneck's queue from the link series; the same scenario then runs in the simulator with
`gcc_paper` and `gcc`. Per phase of constant capacity: mean target, sending rate, utilization
(sending rate / capacity), link utilization (the bottleneck's delivered wire bytes / capacity:
the clients count RTP payload, 4-5 % less), queue p50/p95 (of the 200 ms bin means), and at each capacity change
the reaction time (drop: until the target is at or below the new capacity) or recovery time
(rise: until it reaches 80 % of it). With `capture`, every run's packets are captured as sent
and classified (`rtclab.classify`, told the SDP's retransmission and FEC payload types): the
composition of the real client's traffic by bytes.
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

#: Built-in comparison scenarios: a step down and back up, a deep dip (how fast each recovers
#: from an outage-like drop), and a Wi-Fi capacity trace.
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
    "dip": """
name = "realclient-dip"
description = "1.5 Mbit/s, a deep dip to 0.1 Mbit/s for 5 s at 20 s, 1.5 again from 25 s; 300 ms buffer, 40 ms RTT"
duration = "60s"
[link]
capacity = { schedule = [ { at = "0s", rate = "1.5Mbps" }, { at = "20s", rate = "0.1Mbps" }, { at = "25s", rate = "1.5Mbps" } ] }
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
#: FhMN 2013's single-flow cells (De Cicco et al.): what a real stack's utilization and queue are
#: where the study measured "slightly above 0.8" and a median queue "very close to zero".
_FHMN2013 = """
name = "realclient-fhmn2013-{n}m"
description = "FhMN 2013 single-flow cell: {n} Mbit/s, 60 KB buffer, 50 ms RTT, 150 s"
duration = "150s"
[link]
capacity = "{n}Mbps"
queue = {{ limit = "60KB" }}
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "50ms"
"""
SCENARIOS.update({f"fhmn2013-{n}m": _FHMN2013.format(n=n) for n in (1, 2)})
#: Where VP8's frame-size floor is measured (docs/algorithms/encoder.md): a constant low rate,
#: none of the judged scenarios.
SCENARIOS["vp8-floor"] = """
name = "realclient-vp8-floor"
description = "constant 0.15 Mbit/s, 300 ms buffer, 40 ms RTT: VP8's frame size at its floor"
duration = "60s"
[link]
capacity = "0.15Mbps"
queue = { limit = "300ms" }
[[flows]]
kind = "media"
cc = "gcc_paper"
rtt = "40ms"
"""
#: The Wi-Fi trace is scaled down into aiortc's range (its VP8 sender stops at 1.5 Mbit/s).
WIFI_SCALE = 1 / 25
#: Two capacity traces judged by `rtclab calibrate` and never used to set a parameter: another
#: office Wi-Fi trace (scaled like `wifi`) and a 4G trace (abc4g_12 from the Zhuge release, its
#: first 60 s average 1.75 Mbit/s, with fades to 0.06) at its own scale.
def trace_scenario(name: str, description: str, trace: str, fmt: str = "bandwidth", buffer: str = "300ms",
                   duration_s: float = 60.0, cc: str = "gcc_paper") -> str:
    """A one-call scenario on a capacity trace (`fmt`: "bandwidth" or "mahimahi"), 40 ms RTT."""
    return f"""
name = "{name}"
description = "{description}; {buffer} buffer, 40 ms RTT"
duration = "{duration_s:g}s"
[link]
capacity = {{ trace = "{trace}", format = "{fmt}" }}
queue = {{ limit = "{buffer}" }}
[[flows]]
kind = "media"
cc = "{cc}"
rtt = "40ms"
"""


SCENARIOS["wifi1"] = trace_scenario(
    "realclient-wifi1", "office Wi-Fi bandwidth trace (pitree office-wifi_1) scaled by 1/25: mean 1.19 Mbit/s over 60 s",
    "{trace}", buffer="100ms")
SCENARIOS["4g"] = trace_scenario(
    "realclient-4g", "4G bandwidth trace (pitree abc4g_12): mean 1.75 Mbit/s over 60 s, fades to 0.06", "{trace}")
#: Built-in scenarios that replay a shipped trace: (file in rtclab/scenarios/traces, scale).
TRACES = {"wifi": ("office-wifi_0.pitree-trace", WIFI_SCALE), "wifi1": ("office-wifi_1.pitree-trace", WIFI_SCALE),
          "4g": ("abc4g_12.pitree-trace", 1.0)}


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
    # what crossed the bottleneck, headers and all (the client's own count is RTP payload)
    wire = link["delivered_mbps"].to_numpy() if "delivered_mbps" in link else np.full(len(lt), math.nan)
    t, target, sending = series["time_s"], series["target_mbps"], series["sending_mbps"]
    phases = _phases(link)
    trace = len(phases) > MAX_PHASES
    if trace:
        phases = [(0.0, float(lt[-1]), float(link["capacity_mbps"].mean()))]
    for k, (a, b, cap) in enumerate(phases):
        name = f"whole run (mean capacity {cap:.3g} Mbit/s)" if trace else f"from {a:.0f} s at {cap:g} Mbit/s"
        m = (t > a) & (t <= b)
        # the link over the span the client logged (a browser connects seconds after the start)
        lm = (lt > max(a, float(t[0]) - 0.2)) & (lt <= min(b, float(t[-1]))) if len(t) else lt < 0

        def mean(x: np.ndarray, m: np.ndarray = m) -> float:
            return float(np.nanmean(x[m])) if m.any() else math.nan

        rows += [
            {"phase": name, "metric": "target Mbit/s", "value": mean(target)},
            *([{"phase": name, "metric": "encoder target Mbit/s", "value": mean(series["encoder_target_mbps"])}]
              if "encoder_target_mbps" in series else []),
            {"phase": name, "metric": "sending Mbit/s", "value": mean(sending)},
            {"phase": name, "metric": "utilization", "value": mean(sending) / cap if cap > 0 else math.nan},
            {"phase": name, "metric": "link utilization (wire bytes)",
             "value": float(np.mean(wire[lm])) / cap if cap > 0 and lm.any() else math.nan},
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


def _number(text: str | None) -> float:
    """A logged number, NaN where the stack gave none ("", "nan", "None")."""
    try:
        return float(text) if text else math.nan
    except ValueError:
        return math.nan


def _client_series(log: Path) -> dict[str, np.ndarray]:
    """A real sender's log (time_s, target_bps, bytes_sent, ...) as Mbit/s series."""
    rows = list(csv.DictReader(log.open()))
    t = np.array([float(r["time_s"]) for r in rows])
    target = np.array([float(r["target_bps"]) for r in rows]) / 1e6
    sent = np.array([float(r["bytes_sent"]) for r in rows])
    sending = np.full_like(t, np.nan)
    sending[1:] = np.diff(sent) * 8 / np.diff(t) / 1e6
    out = {"time_s": t, "target_mbps": target, "sending_mbps": sending}
    if rows and rows[0].get("encoder_target_bps") not in (None, ""):
        # what the sender gives its encoder (Chromium: after libwebrtc's overhead, protection
        # and bitrate-adjuster cuts)
        out["encoder_target_mbps"] = np.array([_number(r["encoder_target_bps"]) for r in rows]) / 1e6
    return out


def _sim_series(result) -> dict[str, np.ndarray]:
    f = result.timeseries
    f = f[f["flow"] == 0]
    return {"time_s": f["time_s"].to_numpy(), "target_mbps": f["target_mbps"].to_numpy(),
            "sending_mbps": f["sending_rate_mbps"].to_numpy()}


#: The real clients, in the order the table shows them.
CLIENTS = ("aiortc", "pion", "chromium")
#: The pion peer's Go sources (built on first use).
PION_SOURCE = Path(__file__).parent / "pion_peer"


def available(client: str = "aiortc") -> str | None:
    """None when `client`'s comparison can run here, else why not."""
    if client not in CLIENTS:
        return f"unknown client {client!r}: one of {', '.join(CLIENTS)}"
    if client == "aiortc":
        try:
            import aiortc  # noqa: F401
        except ImportError:
            return "aiortc is not installed (pip install aiortc, or make realclient)"
    elif client == "chromium":
        from rtclab.realclient.chromium_peer import CHROMEDRIVER, CHROMIUM

        try:
            import selenium  # noqa: F401
        except ImportError:
            return "selenium is not installed (pip install selenium)"
        for exe, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
            if not os.access(exe, os.X_OK):
                return f"{exe} is missing (apt-get install {pkg}, or make chromium)"
    elif os.environ.get("RTCLAB_PION_PEER"):
        peer = Path(os.environ["RTCLAB_PION_PEER"])
        if not (peer.is_file() and os.access(peer, os.X_OK)):
            return f"RTCLAB_PION_PEER={peer} is not an executable file"
    elif _go() is None:
        return "the pion peer is built with Go, and `go` is not on PATH (or set RTCLAB_PION_PEER to a built pion-peer)"
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        return "the emulator needs root and /dev/net/tun"
    return None


def _go() -> str | None:
    """The Go command: on PATH, or where the official tarball puts it."""
    import shutil

    return shutil.which("go") or next((g for g in ("/usr/local/go/bin/go",) if os.access(g, os.X_OK)), None)


def pion_binary(progress: bool = True) -> Path:
    """The pion peer: `RTCLAB_PION_PEER`, or `go build` of `pion_peer/` into rtclab's cache
    (~/.cache/rtclab, keyed by the sources' hash; the modules come from the Go module proxy
    at the versions go.sum pins)."""
    import hashlib
    import subprocess

    if os.environ.get("RTCLAB_PION_PEER"):
        return Path(os.environ["RTCLAB_PION_PEER"])
    h = hashlib.sha256()
    for name in ("main.go", "go.mod", "go.sum"):
        h.update((PION_SOURCE / name).read_bytes())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rtclab"
    exe = cache / f"pion-peer-{h.hexdigest()[:16]}"
    if exe.is_file():
        return exe
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{exe.name}.{os.getpid()}.tmp"
    if progress:
        print("building the pion peer (go build; first use only) ...", file=sys.stderr, flush=True)
    try:
        r = subprocess.run([_go() or "go", "build", "-trimpath", "-o", str(tmp), "."], cwd=PION_SOURCE,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"building the pion peer failed (go build in {PION_SOURCE}):\n{r.stderr.strip()[-3000:]}")
        tmp.replace(exe)
    finally:
        tmp.unlink(missing_ok=True)
    return exe


def _peer_command(client: str, progress: bool) -> list[str]:
    if client == "pion":
        return [str(pion_binary(progress))]
    return [sys.executable, "-m", f"rtclab.realclient.{client}_peer"]


def _composition(pcap: Path, sig: Path) -> list[dict[str, Any]]:
    """Bytes shares of the sender's packets by class, the SDP's rtx/FEC payload types known."""
    from rtclab.classify import CLASSES, CaptureError, classify_capture, sdp_payload_types

    pts: dict[int, str] = {}
    for name in ("offer.json", "answer.json"):
        f = sig / name
        if f.exists():
            pts.update(sdp_payload_types(json.loads(f.read_text())["sdp"]))
    try:
        r = classify_capture(pcap, pts)
    except CaptureError:
        return [{"phase": "whole run", "metric": f"{c} bytes share", "value": math.nan} for c in CLASSES]
    return [{"phase": "whole run", "metric": f"{c} bytes share", "value": r["composition"][c]} for c in CLASSES]


def _scenario_text(scenario: str) -> str:
    if scenario in SCENARIOS:
        return SCENARIOS[scenario]
    p = Path(scenario)
    if not p.is_file():
        raise ValueError(f"unknown scenario {scenario!r}: give a file or one of {', '.join(SCENARIOS)}")
    return p.read_text()


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def with_trace(scenario: str, text: str, folder: Path) -> str:
    """`text` with a built-in's `{trace}` replaced by a copy of its shipped trace, scaled, written
    into `folder` (other scenarios unchanged)."""
    if scenario not in TRACES:
        return text
    name, scale = TRACES[scenario]
    scaled = scaled_trace(Path(__file__).parent.parent / "scenarios" / "traces" / name, scale, folder)
    return text.replace("{trace}", str(scaled))


def scaled_trace(src: Path, scale: float, folder: Path) -> Path:
    """A copy of the bandwidth trace `src` (`<time s> <Mbit/s>` lines, `#` comments) with every
    rate times `scale`, written into `folder` as <stem>-scaled.trace; a malformed line is a
    ValueError naming the file and line."""
    rows = []
    for n, line in enumerate(src.read_text().splitlines(), 1):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        try:
            rows.append(f"{f[0]} {float(f[1]) * scale:.6f}\n")
        except (ValueError, IndexError):
            raise ValueError(f"{src}:{n}: expected \"<time s> <bandwidth Mbit/s>\", found {line!r}") from None
    out = folder / f"{src.stem}-scaled.trace"
    out.write_text("".join(rows))
    return out


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


def compare(client: str, scenario: str = "step", runs: int = 3, out: str | os.PathLike | None = None,
            progress: bool = True, capture: bool = False) -> list[dict[str, Any]]:
    """`client` (one of `CLIENTS`) through the emulator `runs` times, and `gcc_paper` and `gcc`
    in the simulator, on `scenario` (a built-in name or a file); returns rows {client, run,
    phase, metric, value}. With `capture`, each run's sent packets are classified too (rows
    "<class> bytes share"), and the captures are kept in `out` beside each run's sender log,
    bottleneck series (`runN-link.csv`) and SDP offer."""
    import shutil

    import rtclab

    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    text = _scenario_text(scenario)
    _with_cc(text, "gcc")  # checks the flows before anything starts
    why = available(client)
    if why:
        raise RuntimeError(f"cannot run the {client} comparison: {why}")
    if out is not None:
        from rtclab.output import check_replaceable

        check_replaceable(Path(out).absolute(), str(out), [Path(scenario)] if Path(scenario).is_file() else [])
    duration = _duration_s(text)
    peer = _peer_command(client, progress)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rtclab-realclient-") as tmp:
        text = with_trace(scenario, text, Path(tmp))
        scen = Path(tmp) / "scenario.toml"
        scen.write_text(text)
        kept: list[tuple[int, Path | None, Path]] = []
        curves: list[tuple[str, dict[str, np.ndarray], Any]] = []
        for k, sig, link in real_runs(client, peer, scen, duration, runs, Path(tmp), progress, capture):
            series = _client_series(sig / "sender.csv")
            curves.append((f"{client} run {k}", series, link))
            rows += [{"client": client, "run": k, **r} for r in _metrics(series, link, duration)]
            pcap = sig / "sent.pcap" if capture else None
            if pcap is not None:
                rows += [{"client": client, "run": k, **r} for r in _composition(pcap, sig)]
            kept.append((k, pcap, sig))
        for cc in ("gcc_paper", "gcc"):
            res = rtclab.run(_with_cc(text, cc))
            series = _sim_series(res)
            curves.append((f"{cc} (simulator)", series, res.link))
            rows += [{"client": cc, "run": 1, **r} for r in _metrics(series, res.link, duration)]
        if out is not None:
            from rtclab.output import write_atomically

            def fill(d: Path) -> None:
                (d / "realclient.json").write_text(json.dumps(rows, indent=1))
                (d / "scenario.toml").write_text(text)
                (d / "table.md").write_text(table(rows) + "\n")
                plot(curves, d / "targets.png", f"{client} vs gcc_paper and gcc: {scenario}")
                for k, pcap, sig in kept:
                    shutil.copyfile(sig / "sender.csv", d / f"run{k}-sender.csv")
                    shutil.copyfile(sig / "link.csv", d / f"run{k}-link.csv")
                    shutil.copyfile(sig / "offer.json", d / f"run{k}-offer.json")
                    if (sig / "receiver.csv").exists():  # Chromium's receiver log
                        shutil.copyfile(sig / "receiver.csv", d / f"run{k}-receiver.csv")
                    if pcap is not None:
                        shutil.copyfile(pcap, d / f"run{k}-sent.pcap")

            inputs = [scenario] if Path(scenario).is_file() else []
            write_atomically(out, fill, inputs, kind="realclient")
    return rows


def real_runs(client: str, peer: list[str], scenario: Path, duration: float, runs: int, tmp: Path,
              progress: bool = True, capture: bool = False):
    """Runs the real client `runs` times through the emulator on `scenario` (a file); yields
    (run number from 1, the run's folder, the bottleneck's series) after each, the folder
    holding the peers' logs (sender.csv; Chromium's receiver.csv), offer.json, link.csv and,
    with `capture`, sent.pcap."""
    from rtclab.shell import run_shell

    for k in range(1, runs + 1):
        sig = tmp / f"run{k}"
        sig.mkdir()
        pcap = sig / "sent.pcap" if capture else None
        if progress:
            print(f"{client} run {k}/{runs} ({duration:.0f} s) ...", file=sys.stderr, flush=True)
        rc, result = run_shell(str(scenario), [*peer, "offer", str(sig), "--duration", str(duration - 1)],
                               receiver=" ".join([*peer, "answer", str(sig)]), seed=k,
                               capture=str(pcap) if pcap else None, capture_sent=True)
        if rc != 0 or not (sig / "sender.csv").exists():
            raise RuntimeError(f"{client} run {k} failed (exit {rc}); see the peers' output above")
        result.link.to_csv(sig / "link.csv", index=False)
        yield k, sig, result.link


def plot(curves: list[tuple[str, dict[str, np.ndarray], Any]], path: Path, title: str) -> None:
    """Targets over time (each real run and each simulated controller) on the link's capacity,
    and the bottleneck queue of each, in two panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, height_ratios=[2, 1])
    link0 = curves[0][2]
    top.step(link0["time_s"], link0["capacity_mbps"], where="post", color="black", lw=1.2, label="capacity")
    for i, (label, s, link) in enumerate(curves):
        color = f"C{i}"
        top.plot(s["time_s"], s["target_mbps"], color=color, lw=1, label=label)
        bottom.plot(link["time_s"], link["queue_delay_ms_mean"], color=color, lw=0.8)
    top.set_ylabel("target Mbit/s")
    bottom.set_yscale("symlog", linthresh=10)  # an outage's queue delay (bytes / a near-zero rate) is seconds
    bottom.set_ylabel("queue ms")
    bottom.set_xlabel("time s")
    top.set_title(title)
    top.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare_aiortc(scenario: str = "step", runs: int = 3, out: str | os.PathLike | None = None,
                   progress: bool = True) -> list[dict[str, Any]]:
    """`compare("aiortc", ...)` (kept for earlier callers)."""
    return compare("aiortc", scenario, runs, out, progress)


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

"""`rtclab calibrate`: the simulator's twin of a real WebRTC sender, judged second by second.

`rtclab realclient` puts a real stack (Chromium, pion, aiortc) through the emulator beside our
controllers and compares per phase. `calibrate` asks the finer question a researcher asks before
trusting the simulator with a controller meant for a browser: does the simulated sender, set up
as the real one is (`TWINS`: Chromium is send-side `gcc` with a 640x480 VP8 encoder under
libvpx's rate control, libwebrtc's encoder bitrate adjuster and libwebrtc's NACK/FEC protection,
each a documented option with the libwebrtc/libvpx source it follows; docs/algorithms/encoder.md),
do per second what the real one does on the same link?

It runs the real client N times through the emulator (or reads runs recorded earlier: `--from`,
or the recordings shipped with rtclab, `--recorded`), runs the twin in the simulator on the same
scenario (`TWIN_SEEDS_PER_RUN` runs per real run, each started when that run's call started on
the link's clock, seeds 1, 2, ...; the twin is their median, as the real client is its runs'),
and reports per second: sending rate, target, frame rate (frames completed at the
receiver; Chromium: inbound-rtp's framesDecoded), frame delay (capture to the arrival of the
frame's last packet; Chromium: `requestVideoFrameCallback`'s captureTime and receiveTime) and the
bottleneck's queue delay. Then the agreement statistics (`AGREEMENT`), each beside the real
client's own run-to-run spread (each run judged against the median of the others, the way the
twin is judged against the median of all):

- sending rate: the median over seconds of |twin - real| / the real client's mean rate;
- frame rate: the median over seconds of |twin - real| in fps;
- recovery after each rise of capacity (a schedule's step up): seconds until the target reaches
  80 % of the new capacity, the twin's against the real runs' median (a run that never gets
  there recovers "never", and two nevers agree).

Frame and queue delay errors are reported (median |twin - real|, ms) but not judged.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from rtclab import realclient

#: The canvas `rtclab realclient` sends, as Chromium 156's VP8 encodes it at its highest
#: quantizer (one captured call on the built-in `vp8-floor`, which no agreement table judges:
#: `recorded/chromium-floor-capture/`, `frame_sizes` in `rtclab.realclient.frames`): the
#: key frame is 1.05 times a floor frame (the picture changes whole from frame to frame, so a
#: key frame costs little more), and a floor frame varies by a robust 5.7 % from one to the next.
CANVAS_KEY_FRAME_SIZE = 1.05
CANVAS_FLOOR_JITTER = 0.057

#: The simulator's counterpart of each real client: the flow's `cc` and `media` settings.
TWINS: dict[str, dict[str, Any]] = {
    # Chromium's libwebrtc: send-side GCC; the libwebrtc sender (VP8 at the canvas's 640x480
    # under libvpx's one-pass CBR rate control, EncoderBitrateAdjuster on, a key frame every 3000
    # frames: `GetDefaultVp8Settings`'s keyFrameInterval, 100 s at 30 fps; Chromium's recordings
    # make one per call), key-frame size and floor spread as measured for the canvas; NACK with
    # the hybrid NACK/FEC method (FEC only on loss); a receiver that waits 3 s behind a missing
    # frame before it asks for a key frame (`kMaxWaitForFrame` with NACK's 1000 ms history).
    "chromium": {"cc": "gcc", "media": {"sender": "libwebrtc", "protection": {"kind": "webrtc", "rtx": True},
                                        "frame_wait": "3s", "key_frame_size": CANVAS_KEY_FRAME_SIZE,
                                        "floor_jitter": CANVAS_FLOOR_JITTER}},
    # pion's peer writes target/30 bytes every 1/30 s and a key frame of 3 frames every 3 s (the
    # ideal sender) behind pion's send-side GCC (pion/interceptor pkg/gcc), which has no probing
    # and no congestion-window pushback, and paces at 1.5 times its target from the start
    # (`LeakyBucketPacer`'s `f`, pion/interceptor v0.1.51).
    "pion": {"cc": "gcc", "media": {"sender": "ideal", "gcc": {"probing": False, "pushback": False, "pacing_factor": 1.5},
                                    "key_frame_interval": "3s", "key_frame_size": 3}},
    # aiortc: receive-side REMB (the paper's GCC) steering its VP8 encoder.
    "aiortc": {"cc": "gcc_paper", "media": {"sender": "ideal"}},
}

#: What `calibrate` calls agreement (issue 42): the sending rate's median absolute error at most
#: 15 % of the real client's rate, the frame rate's at most 3 fps, each recovery within 20 %.
AGREEMENT = {"send_rate_error": 0.15, "fps_error": 3.0, "recovery_error": 0.20}
#: Recovery: the target back at this share of the new capacity.
RECOVERY_SHARE = 0.8
#: The recordings shipped with rtclab (`--recorded`): recorded/<client>/<scenario>/.
RECORDED = Path(__file__).parent / "realclient" / "recorded"
#: Every peer logs its first sender row this long after its call starts sending (Chromium's and
#: aiortc's pages every 200 ms once the connection is up, pion's `logEvery`).
LOG_INTERVAL_S = 0.2
#: The twin's runs per real run (seeds 1, 2, ...: the encoder's frame-size draws), each started
#: when that real run's call started; the twin is their median second by second.
TWIN_SEEDS_PER_RUN = 5


class CalibrateError(ValueError):
    """A calibration that cannot run as asked (the message says why)."""


# --- the scenario ----------------------------------------------------------------------------


def _trace_format(path: Path) -> str:
    """"bandwidth" (`<time s> <Mbit/s>` lines) or "mahimahi" (one millisecond per line)."""
    for line in path.read_text(errors="replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return "bandwidth" if len(line.split()) == 2 else "mahimahi"
    raise CalibrateError(f"{path}: the trace has no samples")


def scenario_text(scenario: str, folder: Path, scale: float = 1.0, duration_s: float = 60.0,
                  buffer: str = "300ms") -> str:
    """The scenario to calibrate on, ready to run, its trace (if any) copied into `folder`: a
    `realclient` built-in, a scenario file (.toml), or a capacity trace file (bandwidth or
    mahimahi format; `scale` multiplies a bandwidth trace's rates) on a link with a `buffer`
    queue and 40 ms RTT for `duration_s`."""
    if scenario in realclient.SCENARIOS:
        if scale != 1.0 or duration_s != 60.0 or buffer != "300ms":
            raise CalibrateError(f"--scale, --duration and --buffer apply to a trace file, not to the built-in {scenario!r}")
        return realclient.with_trace(scenario, realclient.SCENARIOS[scenario], folder)
    p = Path(scenario)
    if not p.is_file():
        raise CalibrateError(f"no such scenario or trace {scenario!r}: give a built-in "
                             f"({', '.join(realclient.SCENARIOS)}), a scenario file (.toml) or a capacity trace file")
    if p.suffix == ".toml":
        if scale != 1.0 or duration_s != 60.0 or buffer != "300ms":
            raise CalibrateError("--scale, --duration and --buffer apply to a trace file; a scenario file sets its own")
        return p.read_text()
    if not (scale > 0 and math.isfinite(scale)):
        raise CalibrateError(f"--scale must be a positive number, got {scale}")
    if not (duration_s >= 5 and math.isfinite(duration_s)):
        raise CalibrateError(f"--duration must be at least 5 s, got {duration_s}")
    fmt = _trace_format(p)
    trace = p.resolve()
    if fmt == "bandwidth" and scale != 1.0:
        try:
            trace = realclient.scaled_trace(p, scale, folder)
        except ValueError as e:
            raise CalibrateError(str(e)) from None
    elif scale != 1.0:
        raise CalibrateError(f"{p} is a mahimahi trace (one delivery opportunity per line): --scale applies to "
                             "bandwidth traces only")
    what = f"{p.name}{f' scaled by {scale:g}' if scale != 1.0 else ''}"
    return realclient.trace_scenario(f"calibrate-{p.stem}", what, str(trace), fmt, buffer, duration_s, cc="gcc")


def parse_twin_settings(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` settings of the twin's flow (`media.bitrate_adjuster=false`, `cc="gcc"`), the
    value a TOML value; returned as a nested dict."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CalibrateError(f"--twin {item!r}: expected KEY=VALUE, e.g. media.bitrate_adjuster=false")
        try:
            v = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            v = value.strip()  # a bare word: a string (encoder_model=ideal)
        d = out
        parts = key.split(".")
        for part in parts[:-1]:
            d = d.setdefault(part, {})
            if not isinstance(d, dict):
                raise CalibrateError(f"--twin {item!r}: {part} is set to a value and a table at once")
        d[parts[-1]] = Whole(v) if isinstance(v, dict) else v
    return out


class Whole(dict):
    """A table given whole (`media.protection={kind="none"}`): it replaces the twin's table
    rather than merging into it, as dotted keys do."""


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        whole = isinstance(v, Whole) or not isinstance(v, dict) or not isinstance(out.get(k), dict)
        out[k] = dict(v) if isinstance(v, Whole) else (v if whole else _merge(out[k], v))
    return out


#: The field trial that switches libwebrtc's bitrate adjuster off (`media.bitrate_adjuster`).
_ADJUSTER_TRIAL = "--force-fieldtrials=WebRTC-VideoRateControl/bitrate_adjuster:false/"


def peer_twin_settings(client: str, environment: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The twin settings that mirror the peer switches of a run (`environment`: the
    RTCLAB_CHROMIUM_* variables it was recorded with), and the switches with no counterpart.
    Chromium's own degradation preference for the canvas track (`default`) is
    maintain-framerate, libwebrtc's resolution adaptation."""
    media: dict[str, Any] = {}
    unmatched = []
    if client == "chromium":
        deg = environment.get("RTCLAB_CHROMIUM_DEGRADATION", "maintain-resolution")
        if deg in ("maintain-framerate", "default"):
            media["degradation"] = "maintain_framerate"
        elif deg != "maintain-resolution":
            unmatched.append(f"RTCLAB_CHROMIUM_DEGRADATION={deg}")
        flags = environment.get("RTCLAB_CHROMIUM_FLAGS", "").split()
        if _ADJUSTER_TRIAL in flags:
            media["bitrate_adjuster"] = False
        if [f for f in flags if f != _ADJUSTER_TRIAL]:
            unmatched.append("RTCLAB_CHROMIUM_FLAGS=" + " ".join(f for f in flags if f != _ADJUSTER_TRIAL))
        if "RTCLAB_CHROMIUM_VIDEO" in environment:
            media["resolution"] = environment["RTCLAB_CHROMIUM_VIDEO"]
        if environment.get("RTCLAB_CHROMIUM_DRAW_HZ", "60") != "60":  # the canvas's beat (docs/realclient.md)
            unmatched.append(f"RTCLAB_CHROMIUM_DRAW_HZ={environment['RTCLAB_CHROMIUM_DRAW_HZ']}")
        for k in ("RTCLAB_CHROMIUM_NACK", "RTCLAB_CHROMIUM_DRIFT"):
            if k in environment:
                unmatched.append(f"{k}={environment[k]}")
    return ({"media": media} if media else {}), unmatched


def twin_scenario(text: str, client: str, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario as a dict with its one media flow set up as `client`'s twin (`TWINS`), plus
    `settings`."""
    d = tomllib.loads(text)
    flows = d.get("flows", [])
    if len(flows) != 1 or flows[0].get("kind") != "media":
        raise CalibrateError("a calibration scenario has exactly one flow, of kind \"media\" (the call)")
    flows[0] = _merge(_merge(flows[0], TWINS[client]), settings or {})
    return d


# --- per-second series -----------------------------------------------------------------------


def _bin_mean(t: np.ndarray, v: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean of v over each second (s - 1, s], s = 1..n; NaN where no finite sample falls."""
    out = np.full(n, np.nan)
    idx = np.ceil(t - 1e-9).astype(int) - 1
    w = np.ones_like(v) if weights is None else weights
    ok = (idx >= 0) & (idx < n) & np.isfinite(v) & (w > 0)
    num = np.bincount(idx[ok], weights=v[ok] * w[ok], minlength=n)[:n]
    den = np.bincount(idx[ok], weights=w[ok], minlength=n)[:n]
    out[den > 0] = num[den > 0] / den[den > 0]
    return out


def _per_second_counter(t: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    """A cumulative counter's increase over each second (s - 1, s], interpolated at the edges;
    NaN for seconds the log does not cover."""
    edges = np.arange(0, n + 1, dtype=float)
    at = np.interp(edges, t, c, left=np.nan, right=np.nan)
    return np.diff(at)


def _csv(path: Path) -> dict[str, np.ndarray]:
    rows = list(csv.DictReader(path.open()))
    if not rows:
        raise CalibrateError(f"{path}: no rows")
    return {k: np.array([realclient._number(r[k]) for r in rows]) for k in rows[0]}


#: Per-second series, in this order in per_second.csv (sim and real alike).
SERIES = ("send_mbps", "target_mbps", "fps", "frame_delay_ms", "queue_ms", "width", "encoder_target_mbps")


def real_per_second(s: dict[str, np.ndarray], receiver: Path | None, link: Path, n: int) -> dict[str, np.ndarray]:
    """One real run's per-second series from its logs (sender.csv as read by `_csv`, Chromium's
    receiver.csv, the emulator's link.csv)."""
    out = {"send_mbps": _per_second_counter(s["time_s"], s["bytes_sent"], n) * 8 / 1e6,
           "target_mbps": _bin_mean(s["time_s"], s["target_bps"] / 1e6, n)}
    if receiver is not None and receiver.exists():
        r = _csv(receiver)
        out["fps"] = _per_second_counter(r["time_s"], r["frames_decoded"], n)
        out["frame_delay_ms"] = _bin_mean(r["time_s"], r["frame_delay_ms_mean"], n, r["frames_displayed"])
    else:
        out["fps"] = _bin_mean(s["time_s"], s["fps"], n) if "fps" in s else np.full(n, np.nan)
        out["frame_delay_ms"] = np.full(n, np.nan)
    lk = _csv(link)
    out["queue_ms"] = _bin_mean(lk["time_s"], lk["queue_delay_ms_mean"], n)
    # the encoded picture's width (Chromium logs it; not judged)
    out["width"] = _bin_mean(s["time_s"], s["frame_width"], n) if "frame_width" in s else np.full(n, np.nan)
    # the encoder's target, libwebrtc's `targetBitrate`: after protection, headers and the bitrate
    # adjuster (Chromium logs it; not judged)
    out["encoder_target_mbps"] = (_bin_mean(s["time_s"], s["encoder_target_bps"] / 1e6, n) if "encoder_target_bps" in s
                                  else np.full(n, np.nan))
    return out


def sim_per_second(result, n: int, width: float = math.nan) -> dict[str, np.ndarray]:
    """The twin's per-second series from a simulator run (`width`: its picture's, where it does
    not adapt it)."""
    f = result.timeseries
    f = f[f["flow"] == 0]
    t = f["time_s"].to_numpy(dtype=float)
    fr = f["frame_rate"].to_numpy(dtype=float)
    lk = result.link
    w = (_bin_mean(t, f["frame_width"].to_numpy(dtype=float), n) if "frame_width" in f.columns
         else np.full(n, width))
    return {"send_mbps": _bin_mean(t, f["sending_rate_mbps"].to_numpy(dtype=float), n),
            "target_mbps": _bin_mean(t, f["target_mbps"].to_numpy(dtype=float), n),
            "fps": _bin_mean(t, fr, n),
            "frame_delay_ms": _bin_mean(t, f["frame_delay_ms_mean"].to_numpy(dtype=float), n, fr),
            "queue_ms": _bin_mean(lk["time_s"].to_numpy(dtype=float), lk["queue_delay_ms_mean"].to_numpy(dtype=float), n),
            "width": w,
            # the libvpx model's stream target, where the twin has one
            "encoder_target_mbps": (_bin_mean(t, f["encoder_target_mbps"].to_numpy(dtype=float), n)
                                    if "encoder_target_mbps" in f.columns else np.full(n, np.nan))}


def call_start_s(sender: dict[str, np.ndarray]) -> float:
    """When a real run's call started sending, on the emulation's clock (the trace's): its first
    sender-log row less `LOG_INTERVAL_S`. A browser connects seconds into the run (Chromium's
    calls start 2.7-4.5 s in in the shipped recordings), so the twin starts its runs there too."""
    t = sender["time_s"]
    return max(0.0, round(float(t[0]) - LOG_INTERVAL_S, 3)) if len(t) else 0.0


def twin_runs(twin_dict: dict[str, Any], starts: list[float],
              seeds_per_run: int = TWIN_SEEDS_PER_RUN) -> list[tuple[dict[str, Any], int]]:
    """The twin's runs as (scenario, seed): `seeds_per_run` per real run, each started when that
    run's call started (seeds 1, 2, ... in turn); as many runs at the given start when the
    twin's settings give their own `start`."""
    import copy

    fixed = "start" in twin_dict["flows"][0]
    out = []
    for s in starts[:1] if fixed else starts:
        d = copy.deepcopy(twin_dict)
        if not fixed:
            d["flows"][0]["start"] = f"{s:g}s"
        for _ in range(seeds_per_run):
            out.append((d, len(out) + 1))
    return out


def _twin_width(twin_dict: dict[str, Any]) -> float:
    """The twin's picture width as configured (the simulator's default picture is 1280x720)."""
    res = str(twin_dict["flows"][0].get("media", {}).get("resolution", "1280x720"))
    return float(res.lower().split("x")[0])


# --- agreement -------------------------------------------------------------------------------


def rises(link_t: np.ndarray, cap: np.ndarray) -> list[tuple[float, float]]:
    """(time, new capacity) of each step up of a schedule (none for a trace: more than
    `realclient.MAX_PHASES` phases)."""
    c = np.round(cap, 4)
    changes = [i for i in range(1, len(c)) if c[i] != c[i - 1]]
    if len(changes) + 1 > realclient.MAX_PHASES:
        return []
    return [(float(link_t[i - 1]), float(c[i])) for i in changes if c[i] > c[i - 1]]


def recovery_s(t: np.ndarray, target: np.ndarray, at: float, cap: float, end: float) -> float:
    """Seconds from `at` until the target first reaches RECOVERY_SHARE of `cap`; inf if never
    before `end`."""
    hit = t[(t > at) & (t <= end) & (target >= RECOVERY_SHARE * cap)]
    return float(hit[0] - at) if len(hit) else math.inf


def _median_abs(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    ok = np.isfinite(a) & np.isfinite(b)
    return (float(np.median(np.abs(a[ok] - b[ok]))) if ok.any() else math.nan), int(ok.sum())


def _recovery_error(sim: float, ref: float) -> float:
    """|sim - ref| / ref; 0 when both never recover, inf when only one does."""
    if math.isinf(sim) and math.isinf(ref):
        return 0.0
    if math.isinf(sim) or math.isinf(ref):
        return math.inf
    return abs(sim - ref) / ref if ref > 0 else (0.0 if sim == 0 else math.inf)


def agreement(candidate: dict[str, np.ndarray], reference: dict[str, np.ndarray],
              cand_recovery: list[float], ref_recovery: list[float]) -> dict[str, Any]:
    """The statistics of one candidate (the twin, or one real run) against a reference (the
    real runs' median, or the other runs')."""
    send_err, n = _median_abs(candidate["send_mbps"], reference["send_mbps"])
    ok = np.isfinite(candidate["send_mbps"]) & np.isfinite(reference["send_mbps"])
    ref_rate = float(np.mean(reference["send_mbps"][ok])) if ok.any() else math.nan
    out: dict[str, Any] = {
        "seconds": n,
        "send_rate_error": send_err / ref_rate if ref_rate > 0 else math.nan,
        "send_rate_error_mbps": send_err,
        "target_error": _median_abs(candidate["target_mbps"], reference["target_mbps"])[0] / ref_rate
        if ref_rate > 0 else math.nan,
        "fps_error": _median_abs(candidate["fps"], reference["fps"])[0],
        "frame_delay_error_ms": _median_abs(candidate["frame_delay_ms"], reference["frame_delay_ms"])[0],
        "queue_error_ms": _median_abs(candidate["queue_ms"], reference["queue_ms"])[0],
        "recovery_s": cand_recovery,
        "reference_recovery_s": ref_recovery,
        "recovery_error": [_recovery_error(a, b) for a, b in zip(cand_recovery, ref_recovery)],
    }
    return out


def _over_runs(reduce, runs: list[dict[str, np.ndarray]], key: str) -> np.ndarray:
    """`reduce` (np.nanmedian, np.nanmin, ...) across the runs, second by second."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN second stays NaN
        return reduce(np.vstack([r[key] for r in runs]), axis=0)


def _median_series(runs: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: _over_runs(np.nanmedian, runs, k) for k in SERIES}


def verdict(stats: dict[str, Any]) -> dict[str, bool | None]:
    """Which of `AGREEMENT`'s criteria the statistics meet (None: not measured)."""
    def meets(v: float, limit: float) -> bool | None:
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v <= limit)

    rec = stats["recovery_error"]
    return {"send_rate": meets(stats["send_rate_error"], AGREEMENT["send_rate_error"]),
            "fps": meets(stats["fps_error"], AGREEMENT["fps_error"]),
            "recovery": None if not rec else all(e <= AGREEMENT["recovery_error"] for e in rec)}


# --- the whole calibration -------------------------------------------------------------------


def _run_files(folder: Path) -> list[int]:
    ks = sorted(int(p.name[3:-len("-sender.csv")]) for p in folder.glob("run*-sender.csv")
                if p.name[3:-len("-sender.csv")].isdigit())
    return ks


def calibrate(client: str, scenario: str = "dip", runs: int = 3, out: str | os.PathLike | None = None,
              progress: bool = True, from_dir: str | os.PathLike | None = None, recorded: bool | str = False,
              twin: dict[str, Any] | None = None, scale: float = 1.0, duration_s: float = 60.0,
              buffer: str = "300ms", twin_seeds: int = TWIN_SEEDS_PER_RUN) -> dict[str, Any]:
    """Calibrates the simulator's twin of `client` on `scenario` (module doc): the real runs
    come from the emulator, from `from_dir`, or with `recorded` from rtclab's recordings
    (`RECORDED`/client/scenario, or /client/<recorded> when it is a name); returns
    {client, scenario, twin, runs, per_second, twin_stats, spread, verdict, ...} and, with `out`,
    writes calibrate.json, per_second.csv, agreement.md, calibrate.png, scenario.toml and the
    real runs' logs there."""
    import shutil

    import rtclab

    if client not in realclient.CLIENTS:
        raise CalibrateError(f"unknown client {client!r}: one of {', '.join(realclient.CLIENTS)}")
    if from_dir is not None and recorded:
        raise CalibrateError("--from and --recorded both name the real runs: give one")
    if runs < 1:
        raise CalibrateError(f"runs must be at least 1, got {runs}")
    if twin_seeds < 1:
        raise CalibrateError(f"twin_seeds must be at least 1, got {twin_seeds}")
    if recorded:
        from_dir = RECORDED / client / (recorded if isinstance(recorded, str) else scenario)
        if not from_dir.is_dir():
            have = sorted(f"{p.parent.name}/{p.name}" for p in RECORDED.glob("*/*")
                          if p.is_dir() and p.parent.name in realclient.CLIENTS)
            raise CalibrateError(f"no recording {from_dir.name!r} of {client} ships with rtclab; recorded: {', '.join(have)}")
    if out is not None:
        from rtclab.output import check_replaceable

        inputs = [Path(scenario)] if Path(scenario).is_file() else []
        if from_dir is not None:
            inputs.append(Path(from_dir))
        check_replaceable(Path(out).absolute(), str(out), inputs)
    with tempfile.TemporaryDirectory(prefix="rtclab-calibrate-") as tmp_s:
        tmp = Path(tmp_s)
        text = scenario_text(scenario, tmp, scale, duration_s, buffer)
        twin_dict = twin_scenario(text, client, twin)  # checks the scenario and the settings first
        duration = realclient._duration_s(text)
        n = int(math.floor(duration + 1e-9))
        real_dir = tmp / "real"
        real_dir.mkdir()
        if from_dir is not None:
            src = Path(from_dir)
            ks = _run_files(src) if src.is_dir() else []
            if not ks:
                raise CalibrateError(f"--from {from_dir}: no runN-sender.csv there (a `rtclab calibrate` or "
                                     "`rtclab realclient` result folder)")
            for k in ks:
                if not (src / f"run{k}-link.csv").exists():
                    raise CalibrateError(f"--from {from_dir}: run{k}-sender.csv has no run{k}-link.csv beside it")
                for kind in ("sender", "receiver", "link"):
                    if (src / f"run{k}-{kind}.csv").exists():
                        shutil.copyfile(src / f"run{k}-{kind}.csv", real_dir / f"run{k}-{kind}.csv")
            meta = json.loads((src / "meta.json").read_text()) if (src / "meta.json").exists() else {}
            if meta.get("scenario") not in (None, scenario) or meta.get("client") not in (None, client):
                raise CalibrateError(f"--from {from_dir}: these are {meta.get('client')} runs on {meta.get('scenario')!r}, "
                                     f"not {client} on {scenario!r}")
        else:
            why = realclient.available(client)
            if why:
                raise RuntimeError(f"cannot run {client}: {why}")
            scen = tmp / "scenario.toml"
            scen.write_text(text)
            peer = realclient._peer_command(client, progress)
            ks = []
            for k, sig, _link in realclient.real_runs(client, peer, scen, duration, runs, tmp, progress):
                for kind in ("sender", "receiver", "link"):
                    if (sig / f"{kind}.csv").exists():
                        shutil.copyfile(sig / f"{kind}.csv", real_dir / f"run{k}-{kind}.csv")
                ks.append(k)
            meta = {"client": client, "scenario": scenario, "recorded": _today(), "version": _client_version(client),
                    # the peers' settings from the environment (field trials, video size, ...)
                    "environment": {k: v for k, v in sorted(os.environ.items())
                                    if k.startswith(("RTCLAB_CHROMIUM_", "RTCLAB_PION_"))}}
        # The twin mirrors the peer switches the runs were made with; --twin settings win.
        mirrored, unmatched = peer_twin_settings(client, meta.get("environment") or {})
        twin_dict = twin_scenario(text, client, _merge(mirrored, twin or {}))
        if progress and unmatched:
            print(f"note: the twin has no counterpart for {', '.join(unmatched)}", file=sys.stderr, flush=True)
        senders = [_csv(real_dir / f"run{k}-sender.csv") for k in ks]
        real = [real_per_second(sd, real_dir / f"run{k}-receiver.csv", real_dir / f"run{k}-link.csv", n)
                for k, sd in zip(ks, senders)]
        if progress:
            print(f"the {client} twin in the simulator ...", file=sys.stderr, flush=True)
        # The twin as the real client is judged: `twin_seeds` runs per real run, each started
        # when that run's call did, and their median second by second (a single run on a
        # knife-edge trace such as 4g lands on one side of it; a median of runs does not).
        starts = [call_start_s(sd) for sd in senders]
        sims, sim_recs = [], []
        for d, seed in twin_runs(twin_dict, starts, twin_seeds):
            res = rtclab.run(d, seed=seed)
            sims.append(sim_per_second(res, n, _twin_width(d)))
            lt, cap = res.link["time_s"].to_numpy(dtype=float), res.link["capacity_mbps"].to_numpy(dtype=float)
            ups = rises(lt, cap)
            f0 = res.timeseries[res.timeseries["flow"] == 0]
            st, sv = f0["time_s"].to_numpy(dtype=float), f0["target_mbps"].to_numpy(dtype=float)
            sim_recs.append([recovery_s(st, sv, a, c, duration) for a, c in ups])
        sim = _median_series(sims) if len(sims) > 1 else sims[0]
        sim_rec = [float(np.median([r[i] for r in sim_recs])) for i in range(len(ups))]
        run_rec = [[recovery_s(sd["time_s"], sd["target_bps"] / 1e6, a, c, duration) for a, c in ups]
                   for sd in senders]
        ref = _median_series(real)
        ref_rec = [float(np.median([r[i] for r in run_rec])) for i in range(len(ups))]
        twin_stats = agreement(sim, ref, sim_rec, ref_rec)
        spread = []
        for i in range(len(ks)):
            if len(ks) < 2:
                break
            others = [r for j, r in enumerate(real) if j != i]
            o_rec = [float(np.median([r[m] for j, r in enumerate(run_rec) if j != i])) for m in range(len(ups))]
            spread.append({"run": ks[i], **agreement(real[i], _median_series(others), run_rec[i], o_rec)})
        capacity = _bin_mean(lt, cap, n)
        per_second = {"time_s": np.arange(1, n + 1, dtype=float), "capacity_mbps": capacity}
        for key in SERIES:
            per_second[f"real_{key}"] = ref[key]
            per_second[f"real_{key}_min"] = _over_runs(np.nanmin, real, key)
            per_second[f"real_{key}_max"] = _over_runs(np.nanmax, real, key)
            per_second[f"twin_{key}"] = sim[key]
        result = {"client": client, "scenario": scenario, "runs": ks, "twin": twin_dict["flows"][0],
                  "twin_starts_s": ([] if "start" in twin_dict["flows"][0] else starts),
                  "twin_settings": twin or {}, "mirrored": mirrored, "unmatched": unmatched, "real": meta,
                  "rises": [{"at_s": a, "capacity_mbps": c} for a, c in ups],
                  "twin_stats": twin_stats, "spread": spread, "verdict": verdict(twin_stats),
                  "agreement": AGREEMENT, "per_second": {k: v.tolist() for k, v in per_second.items()}}
        if out is not None:
            from rtclab.output import write_atomically

            def fill(d: Path) -> None:
                (d / "calibrate.json").write_text(json.dumps(_jsonable(result), indent=1))
                (d / "meta.json").write_text(json.dumps(meta, indent=1))
                (d / "scenario.toml").write_text(text)
                (d / "twin.json").write_text(json.dumps(twin_dict, indent=1))
                _write_per_second(d / "per_second.csv", per_second)
                (d / "agreement.md").write_text(report(result) + "\n")
                plot(result, real, d / "calibrate.png")
                for p in real_dir.iterdir():
                    shutil.copyfile(p, d / p.name)

            inputs = [scenario] if Path(scenario).is_file() else []
            if from_dir is not None:
                inputs.append(str(from_dir))
            write_atomically(out, fill, inputs, kind="calibrate")
    return result


def _today() -> str:
    import datetime

    return datetime.date.today().isoformat()


def _client_version(client: str) -> str:
    """The real stack's version, as far as it says."""
    import subprocess

    try:
        if client == "chromium":
            from rtclab.realclient.chromium_peer import CHROMIUM

            return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
        if client == "aiortc":
            import aiortc

            return f"aiortc {aiortc.__version__}"
        return "pion/webrtc v4 (rtclab/realclient/pion_peer/go.sum)"
    except Exception as e:  # the version is a label; a failure to read it is not a failed run
        return f"unknown ({e})"


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _write_per_second(path: Path, cols: dict[str, np.ndarray]) -> None:
    keys = list(cols)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for i in range(len(cols["time_s"])):
            w.writerow([f"{cols[k][i]:.6g}" if math.isfinite(cols[k][i]) else "" for k in keys])


# --- reporting -------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:.0f} %"


def _num(x: float, unit: str = "") -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.1f}{unit}"


def _rec(xs: list[float]) -> str:
    return ", ".join("never" if math.isinf(x) else f"{x:.1f} s" for x in xs) or "–"


def _spread(spread: list[dict[str, Any]], key: str, fmt) -> str:
    v = [s[key] for s in spread if s[key] is not None and math.isfinite(s[key])]
    if not v:
        return "–"
    return f"{fmt(float(np.median(v)))} ({fmt(min(v))}-{fmt(max(v))})" if len(v) > 1 else fmt(v[0])


def summary_row(result: dict[str, Any]) -> dict[str, str]:
    """One line of the agreement table: the twin's statistics beside the real runs' spread."""
    s, sp, v = result["twin_stats"], result["spread"], result["verdict"]

    def mark(ok: bool | None) -> str:
        return "" if ok is None else (" ✓" if ok else " ✗")

    rec_sp = [max(e for e in x["recovery_error"]) for x in sp if x["recovery_error"]]
    return {
        "scenario": result["scenario"],
        "runs": str(len(result["runs"])),
        "send rate error (twin)": _pct(s["send_rate_error"]) + mark(v["send_rate"]),
        "send rate error (runs)": _spread(sp, "send_rate_error", _pct),
        "fps error (twin)": _num(s["fps_error"]) + mark(v["fps"]),
        "fps error (runs)": _spread(sp, "fps_error", _num),
        "recovery real / twin": (f"{_rec(s['reference_recovery_s'])} / {_rec(s['recovery_s'])}" + mark(v["recovery"])
                                 if s["recovery_s"] else "–"),
        "recovery error (runs)": (_pct(float(np.median(rec_sp))) if rec_sp else "–"),
        "frame delay error ms (twin / runs)": f"{_num(s['frame_delay_error_ms'])} / {_spread(sp, 'frame_delay_error_ms', _num)}",
        "queue error ms (twin / runs)": f"{_num(s['queue_error_ms'])} / {_spread(sp, 'queue_error_ms', _num)}",
    }


def report(result: dict[str, Any]) -> str:
    """The agreement table of one calibration, and the criteria."""
    from tabulate import tabulate

    row = summary_row(result)
    a = AGREEMENT
    real = result.get("real") or {}
    return (f"{result['client']} ({real.get('version', 'version not recorded')}, recorded {real.get('recorded', '?')}) "
            f"vs its simulator twin on {result['scenario']}\n\n"
            + tabulate([list(row.values())], headers=list(row), tablefmt="github")
            + f"\n\nAgreement: send rate within {100 * a['send_rate_error']:.0f} % of the real rate (median over seconds), "
            f"frame rate within {a['fps_error']:g} fps, each recovery (target at {100 * RECOVERY_SHARE:.0f} % of the new "
            f"capacity) within {100 * a['recovery_error']:.0f} %. (runs): each real run against the median of the others, "
            "median (range).")


def plot(result: dict[str, Any], real: list[dict[str, np.ndarray]], path: Path) -> None:
    """Per second: sending rate (and targets) on the capacity, frame rate, frame delay and queue
    delay; each real run thin, their median and the twin bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = {k: np.asarray(v, dtype=float) for k, v in result["per_second"].items()}
    t = ps["time_s"] - 0.5
    fig, axes = plt.subplots(5, 1, figsize=(9, 10.5), sharex=True, height_ratios=[2, 1, 1, 1, 1])
    client = result["client"]
    axes[0].step(ps["time_s"] - 1, ps["capacity_mbps"], where="post", color="black", lw=1.2, label="capacity")
    panels = (("send_mbps", "send Mbit/s", False), ("fps", "frames/s", False), ("frame_delay_ms", "frame delay ms", True),
              ("queue_ms", "queue ms", True), ("width", "picture width", False))
    for ax, (key, label, log) in zip(axes, panels):
        for i, r in enumerate(real):
            ax.plot(t, r[key], color="C0", lw=0.6, alpha=0.45, label=f"{client} runs" if i == 0 else None)
        ax.plot(t, ps[f"real_{key}"], color="C0", lw=1.6, label=f"{client} median")
        ax.plot(t, ps[f"twin_{key}"], color="C3", lw=1.6, label="simulator twin")
        ax.set_ylabel(label)
        top = np.nanmax([np.nanmax(np.append(r[key], 0.0)) for r in [*real, {key: ps[f"twin_{key}"]}]])
        if log and top > 1000:  # an outage's delays are seconds
            ax.set_yscale("symlog", linthresh=100)
    axes[0].plot(t, ps["real_target_mbps"], color="C0", lw=1, ls="--", label=f"{client} target (median)")
    axes[0].plot(t, ps["twin_target_mbps"], color="C3", lw=1, ls="--", label="twin target")
    if np.isfinite(ps["real_encoder_target_mbps"]).any() or np.isfinite(ps["twin_encoder_target_mbps"]).any():
        axes[0].plot(t, ps["real_encoder_target_mbps"], color="C0", lw=1, ls=":", label=f"{client} encoder target")
        axes[0].plot(t, ps["twin_encoder_target_mbps"], color="C3", lw=1, ls=":", label="twin encoder target")
    axes[0].legend(fontsize=7, ncol=3)
    axes[-1].set_xlabel("time s")
    s = result["twin_stats"]
    axes[0].set_title(f"{client} vs its simulator twin: {result['scenario']} (send rate error {_pct(s['send_rate_error'])}, "
                      f"fps error {_num(s['fps_error'])})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: The scenarios the agreement table judges (docs/realclient.md), in its order.
JUDGED = ("step", "dip", "wifi", "wifi1", "4g")


def recorded_table(client: str = "chromium", scenarios: tuple[str, ...] = JUDGED,
                   twin: dict[str, Any] | None = None) -> str:
    """The agreement table of the twin on rtclab's recordings of `client` (docs/realclient.md
    holds Chromium's; `python -m rtclab.calibrate chromium` prints it)."""
    from tabulate import tabulate

    rows = [summary_row(calibrate(client, s, progress=False, recorded=True, twin=twin)) for s in scenarios]
    return tabulate([list(r.values()) for r in rows], headers=list(rows[0]), tablefmt="github")


def recorded_variants_table(client: str = "chromium") -> str:
    """The agreement table of the twin on rtclab's other recordings of `client` (a judged
    scenario run with a peer switch: a field trial, Chromium's own degradation preference); the
    twin mirrors each recording's switches (`peer_twin_settings`)."""
    from tabulate import tabulate

    rows = []
    for d in sorted(p for p in (RECORDED / client).iterdir() if p.is_dir() and p.name not in JUDGED):
        scenario = json.loads((d / "meta.json").read_text())["scenario"]
        r = calibrate(client, scenario, progress=False, recorded=d.name)
        row = summary_row(r)
        mirrored = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                             for k, v in r["mirrored"].get("media", {}).items())
        row["scenario"] = f"{scenario} ({d.name}; twin: {mirrored or 'as judged'})"
        rows.append(row)
    return tabulate([list(r.values()) for r in rows], headers=list(rows[0]), tablefmt="github") if rows else ""


if __name__ == "__main__":
    client = sys.argv[1] if len(sys.argv) > 1 else "chromium"
    print(recorded_table(client))
    variants = recorded_variants_table(client)
    if variants:
        print("\n" + variants)

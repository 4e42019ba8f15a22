"""`rtclab repro zhuge`: Zhuge's simulator experiments (dissertation ch. 4; Meng et al.,
SIGCOMM 2022). Set-ups and published numbers from `shared/specs/zhuge-metis.md` A.8-A.9.

- S3, bandwidth drop: 30 Mbit/s -> 30/k at one of `runs` instants, base RTT 50 ms, a
  250-packet FIFO (the released code's wired "p2p" mode; Zhuge with its defaults, qShort on:
  the head-of-line wait is what reacts at once to a drop in the dequeue rate); the RTT
  degradation duration (from the first RTT sample > 200 ms after the drop to the last, inside
  20 s) for GCC (libwebrtc's send-side, media) and Copa (δ = 0.5, default mode only, an ACK
  per segment), each over FIFO, CoDel and Zhuge. GCC is also run without its congestion-window
  pushback, the experiment that explains why the published gain does not appear with it.
- S1, trace-driven RTP: GCC on the five trace sets (W1 restaurant Wi-Fi, W2 office Wi-Fi,
  C1 indoor 4G/5G, C2 urban 4G, C3 urban 5G; `runs` traces each, 300 s) over FIFO, CoDel and
  Zhuge: ratio of RTT > 200 ms, ratio of frames > 400 ms, low-fps ratio.

RTT = the base RTT + the flow's largest queuing delay in each 50 ms bin (the sender's RTT
samples see the same queue). Not run: S2 (needs the FastAck and ABC baselines), S4/S5 (need
the Wi-Fi access point link with contention), S6 (a real testbed), S7 (prediction-error logs).
The trace values are used as given (the released code multiplies them by 15/13).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from rtclab.repro import Job, Reproduction, Row

KS = (2, 5, 10, 20, 50)
DROP_S = 30.0
WINDOW_S = 20.0
TRACE_SETS = {"W1": "rest-wifi", "W2": "office-wifi", "C1": "pitree4g", "C2": "xu4g", "C3": "xu5g"}
ZHUGE = {"kind": "zhuge", "at": "bottleneck"}
QUEUES = {"fifo": {"limit": "250pkt"}, "codel": {"kind": "codel", "limit": "250pkt"}}


def trace_dir() -> Path | None:
    """The Zhuge trace sets: $RTCLAB_ZHUGE_TRACES, else shared/traces beside the checkout."""
    env = os.environ.get("RTCLAB_ZHUGE_TRACES")
    cands = [Path(env)] if env else []
    here = Path(__file__).resolve()
    cands += [p / "shared" / "traces" / "wireless-zhuge" for p in here.parents]
    return next((c for c in cands if c.is_dir()), None)


def flow(cc: str) -> dict:
    if cc.startswith("gcc"):
        media: dict = {"max_bitrate": "100Mbps", "min_bitrate": "500kbps", "start_bitrate": "1Mbps"}
        if cc == "gcc-no-pushback":
            media["gcc"] = {"pushback": False}
        return {"name": cc, "kind": "media", "cc": "gcc", "rtt": "50ms", "media": media}
    return {"name": cc, "kind": "tcp", "cc": "copa", "rtt": "50ms", "delayed_ack": False, "copa": {"mode_switch": False}}


def scenario(name: str, duration: float, capacity, cc: str, aqm: str) -> dict:
    sc = {"name": name, "duration": f"{duration}s",
          "link": {"capacity": capacity, "queue": dict(QUEUES["codel" if aqm == "codel" else "fifo"])},
          "flows": [flow(cc)], "metrics": {"bin": "50ms"}}
    if aqm == "zhuge":
        sc["middleboxes"] = [dict(ZHUGE)]
    return sc


def rtt_ms(res) -> tuple[np.ndarray, np.ndarray]:
    f = res.flows[res.flows["flow"] == 0]
    return f["time_s"].to_numpy(), 50.0 + f["queuing_delay_ms_max"].fillna(0.0).to_numpy()


def degradation_s(res, drop: float) -> float:
    t, r = rtt_ms(res)
    bad = t[(t >= drop) & (t < drop + WINDOW_S) & (r > 200.0)]
    return float(bad.max() - bad.min() + 0.05) if len(bad) else 0.0


def frames_over(res, ms: float) -> float | None:
    """Share of frames with a delay above `ms`, from the frame-delay distribution."""
    d = res.distributions
    d = d[(d["flow"] == 0) & (d["metric"] == "frame_delay")].sort_values("percentile")
    if d.empty:
        return None
    p = np.interp(ms, d["value_ms"].to_numpy(), d["percentile"].to_numpy(), left=0.0, right=100.0)
    return float(1.0 - p / 100.0)


def low_fps_ratio(res) -> float:
    f = res.flows[res.flows["flow"] == 0]
    sec = (f["time_s"] - 1e-9).astype(int)
    fps = f.groupby(sec)["rendered_fps"].mean()
    fps = fps.iloc[1:-1]  # the first and last second are dropped
    return float((fps < 10).mean()) if len(fps) else float("nan")


def build(runs: int = 10) -> Reproduction:
    jobs: list[Job] = []
    instants = [DROP_S + 1.7 * i for i in range(min(runs, 10))]
    s3_variants = [(cc, aqm) for cc in ("gcc", "gcc-no-pushback", "copa") for aqm in ("fifo", "codel", "zhuge")]
    for k in KS:
        for cc, aqm in s3_variants:
            for i, drop in enumerate(instants):
                cap = {"schedule": [{"at": "0s", "rate": "30Mbps"}, {"at": f"{drop}s", "rate": f"{30 / k:.4f}Mbps"}]}
                jobs.append(Job(("s3", cc, aqm, k, i), scenario(f"s3-{cc}-{aqm}-{k}", drop + WINDOW_S, cap, cc, aqm)))
    traces = trace_dir()
    if traces is not None:
        for tid, prefix in TRACE_SETS.items():
            files = sorted(traces.glob(f"{prefix}_*.pitree-trace"), key=lambda p: int(p.stem.split("_")[-1]))
            for j, path in enumerate(files[:runs]):
                cap = {"trace": str(path), "format": "bandwidth"}
                for aqm in ("fifo", "codel", "zhuge"):
                    jobs.append(Job(("s1", tid, aqm, j), scenario(f"s1-{tid}-{aqm}-{j}", 300, cap, "gcc", aqm)))

    def evaluate(res) -> list[Row]:
        rows: list[Row] = []
        n = len(instants)
        for k in KS:
            for cc in ("gcc", "gcc-no-pushback", "copa"):
                d = {aqm: float(np.mean([degradation_s(res[("s3", cc, aqm, k, i)], instants[i]) for i in range(n)]))
                     for aqm in ("fifo", "codel", "zhuge")}
                for aqm in ("fifo", "codel", "zhuge"):
                    rows.append(Row("S3 bandwidth drop", f"{cc}+{aqm} k={k}", "RTT>200ms duration (s)", d[aqm], ""))
                best = min(d["fifo"], d["codel"])
                change = (d["zhuge"] - best) / best if best > 0 else None
                paper = ("<= -50% (RTP, Fig 4.13)" if cc.startswith("gcc")
                         else "-14% to -64% vs Copa/Copa+FastAck for k<30 (Fig 4.14)")
                rows.append(Row("S3 bandwidth drop", f"{cc} k={k}", "Zhuge vs best baseline", change, paper,
                                "no FastAck baseline" if cc == "copa" else ""))
        if traces is None:
            return rows
        for tid in TRACE_SETS:
            keys = sorted({k[3] for k in res if k[0] == "s1" and k[1] == tid})
            if not keys:
                continue
            m = {}
            for aqm in ("fifo", "codel", "zhuge"):
                rr = [res[("s1", tid, aqm, j)] for j in keys]
                tail = float(np.mean([np.mean(rtt_ms(r)[1] > 200.0) for r in rr]))
                fr = [frames_over(r, 400.0) for r in rr]
                fr400 = float(np.mean([x for x in fr if x is not None])) if any(x is not None for x in fr) else None
                low = float(np.mean([low_fps_ratio(r) for r in rr]))
                m[aqm] = (tail, fr400, low)
                rows.append(Row(f"S1 trace {tid}", f"gcc+{aqm}", "ratio RTT>200ms", tail, ""))
                rows.append(Row(f"S1 trace {tid}", f"gcc+{aqm}", "ratio frames>400ms", fr400, ""))
                rows.append(Row(f"S1 trace {tid}", f"gcc+{aqm}", "low-fps ratio", low, ""))
            for i, (metric, paper) in enumerate([("ratio RTT>200ms", "-45% to -75% (Fig 4.10)"),
                                                 ("ratio frames>400ms", "-38% to -92% (Fig 4.10)"),
                                                 ("low-fps ratio", ">= -50% on W1, C1 (Fig 4.12)")]):
                vals = [m[a][i] for a in ("fifo", "codel")]
                vals = [v for v in vals if v is not None]
                best = min(vals) if vals else None
                z = m["zhuge"][i]
                change = (z - best) / best if best and z is not None else None
                rows.append(Row(f"S1 trace {tid}", "gcc+zhuge vs best baseline", metric, change, paper))
        return rows

    notes = [
        f"S3: {len(instants)} drop instants per k from {DROP_S:g} s, 1.7 s apart (the paper: 21); "
        "durations are means over instants.",
        "gcc is libwebrtc's send-side GCC with its congestion-window pushback; Zhuge acknowledges packets as they "
        "enter the AP's queue, so the sender's data in flight stays small, the pushback never binds and the "
        "pacer drains the frames encoded before the drop into the queue: gcc-no-pushback shows the gain the paper's "
        "GCC (no pushback) sees. docs/algorithms/zhuge.md.",
        "Not run: S2 (FastAck, ABC), S4/S5 (Wi-Fi AP with contention), S6 (testbed), S7 (prediction error).",
    ]
    if traces is None:
        notes.append("S1 skipped: the Zhuge trace sets were not found (set RTCLAB_ZHUGE_TRACES).")
    else:
        notes.append(f"S1: the first {runs} traces of each set from {traces}, 300 s each, values as given (no 15/13).")
    return Reproduction("zhuge", "Zhuge (Meng et al., SIGCOMM 2022; dissertation ch. 4)", jobs, evaluate, [], notes)

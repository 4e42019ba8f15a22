"""NADA in rtclab against its reference implementation (cisco/ns3-rmcat) on ns3-rmcat's own wired
test cases (RFC 8867 §5 as its `rmcat-wired` suite builds them).

    python bench/ns3-rmcat/compare.py NS3_LOG_DIR [CASE ...]

NS3_LOG_DIR holds `run-wired`'s logs (bench/ns3-rmcat/README.md). Each case is rebuilt in rtclab
as ns3-rmcat builds it, which differs from `rtclab suite rfc8867` in stated ways: Mbit/s are 2^20
bit/s; the bottleneck keeps its full capacity and a variable "available capacity" is UDP CBR
cross traffic at capacity − available (1000-byte payloads), as ns3-rmcat's `SetUpPath` does; the
drop-tail queue holds 300 ms at the full capacity, in bytes; media packets carry 1000 bytes of
payload at a fixed 30 fps, frames sized to the target exactly; feedback every 100 ms
(`RMCAT_FEEDBACK_PERIOD_US`); NADA's R_min and R_init 153.6 kbit/s and R_max 1536 kbit/s
(ns3-rmcat's 150 and 1500 "Kbps" of 1024 bit/s); the long TCP flow of 5.6
runs from 40 to 80 s (`RMCAT_TC_BG_TSTART`, `_TFINIS`), NewReno, 1000-byte segments, no
delayed ACKs. Case 5.7's short downloads are drawn by rtclab's generator with ns3-rmcat's
parameters, not ns-3's random stream.

Not mirrored: rate shaping. ns3-rmcat's test cases turn it off (BETA_V = BETA_S = 0) and its
sender paces *payload* bytes at r_ref, the 40 bytes of headers per packet going out on top;
rtclab's pacer paces wire bytes, so with `beta_v = beta_s = 0` it falls 4 % behind the encoder
and its queue grows to the 1 s the pacer holds (`python bench/ns3-rmcat/compare.py DIR 5.4
--beta 0`). rtclab runs NADA with RFC 8698's shaping (0.1), which drains it.

Per case and flow: the receive rate NADA measures (ns3-rmcat `rrate`; rtclab's receiver
throughput, as payload), NADA's queuing delay estimate (`qdel`; `nada_queue_delay_ms`) and its reference
rate r_ref (`srate`; `target_mbps` with shaping off), averaged over the flow's active time.
"""

import re
import sys
from collections import defaultdict

import numpy as np
import pandas as pd

MBPS = float(1 << 20)
KBPS = float(1 << 10)
NADA_PARAMS = {"rmin_kbps": 150 * KBPS / 1e3, "rinit_kbps": 150 * KBPS / 1e3, "rmax_kbps": 1500 * KBPS / 1e3}
MEDIA = {"fps": 30, "frame_size_jitter": 0, "encoder_lag": "0ms", "key_frame_interval": "0s",
         "min_bitrate": f"{150 * KBPS:.0f}bps", "start_bitrate": f"{150 * KBPS:.0f}bps",
         "max_bitrate": f"{1500 * KBPS:.0f}bps", "feedback": "twcc", "feedback_interval": "100ms"}
MEDIA_PACKET = "1040B"  # ns3-rmcat: 1000 B payload + RTP 12 + IPv4/UDP 28
#: rtclab's throughput counts whole packets (48 B of headers on 992 B of payload); ns3-rmcat's
#: `rrate` counts payload: rtclab's figure is shown as payload.
PAYLOAD_SHARE = 992 / 1040
CBR_PACKET = 1028       # UdpClient: 1000 B payload + 28


def media(name, rtt_ms=100, start=0.0, stop=None, direction=None, pauses=None):
    f = {"name": name, "kind": "media", "cc": "nada", "rtt": f"{rtt_ms}ms", "packet_size": MEDIA_PACKET,
         "start": f"{start}s", "params": dict(NADA_PARAMS), "media": dict(MEDIA)}
    if stop is not None:
        f["stop"] = f"{stop}s"
    if direction:
        f["direction"] = direction
    if pauses:
        f["pauses"] = pauses
    return f


def cbr_for(times, avail, capacity, sim_t, direction=None):
    """ns3-rmcat's SetUpPath: CBR at capacity − available from each change to the next."""
    flows = []
    for i, (t, a) in enumerate(zip(times, avail)):
        rate = capacity - a
        if rate <= 0:
            continue
        end = times[i + 1] if i + 1 < len(times) else sim_t
        f = {"name": f"cbr{'-rev' if direction else ''}-{i}", "kind": "cbr",
             "rate": f"{rate * CBR_PACKET / 1000:.0f}bps", "packet_size": f"{CBR_PACKET}B",
             "rtt": "100ms", "start": f"{t}s", "stop": f"{end}s"}
        if direction:
            f["direction"] = direction
        flows.append(f)
    return flows


def link(capacity):
    return {"capacity": f"{capacity:.0f}bps", "queue": {"limit": f"{int(capacity * 0.3 / 8)}B"}}


def case(cid: str) -> dict:
    bw, sim = 4 * MBPS, 120
    if cid == "5.1":
        sim = 100
        flows = [media("rmcat_0", stop=sim - 1),
                 *cbr_for([0, 40, 60, 80], [MBPS, 2.5 * MBPS, .6 * MBPS, MBPS], bw, sim)]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.2":
        sim, m2 = 125, float(1 << 21)
        flows = [media("rmcat_0", stop=sim - 1), media("rmcat_1", stop=sim - 1),
                 *cbr_for([0, 25, 50, 75, 100], [2 * m2, m2, 1.75 * m2, .5 * m2, m2], bw, sim)]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.3":
        sim = 100
        flows = [media("rmcat_fwd", stop=sim - 1), media("rmcat_bwd", stop=sim - 1, direction="reverse"),
                 *cbr_for([0, 20, 40, 60], [2 * MBPS, MBPS, .5 * MBPS, 2 * MBPS], bw, sim),
                 *cbr_for([0, 35, 70], [2 * MBPS, .8 * MBPS, 2 * MBPS], bw, sim, direction="reverse")]
        return {"duration": f"{sim}s", "link": link(bw), "reverse_link": link(bw), "flows": flows}
    if cid == "5.4":
        bw = 3.5 * MBPS
        flows = [media(f"rmcat_{i}", start=s, stop=119) for i, s in enumerate((0, 20, 40))]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.5":
        sim = 300
        flows = [media(f"rmcat_{i}", rtt_ms=2 * d, start=10 * i, stop=299)
                 for i, d in enumerate((10, 25, 50, 100, 150))]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.6":
        bw = 2 * MBPS
        flows = [media("rmcat_0", start=5, stop=119),
                 {"name": "tcp_0", "kind": "tcp", "cc": "newreno", "rtt": "100ms", "packet_size": "1040B",
                  "delayed_ack": False, "start": "40s", "stop": "80s"}]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.7":
        from rtclab.suites import rfc8867
        sim, bw = 300, 2 * MBPS
        short = rfc8867.short_tcp_flows(float(sim))
        for f in short:
            f.update(packet_size="1040B", delayed_ack=False)
        flows = [media("rmcat_0", start=5, stop=299), media("rmcat_1", start=5, stop=299), *short]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    if cid == "5.8":
        bw = 3.5 * MBPS
        flows = [media("rmcat_0", stop=119), media("rmcat_1", stop=119, pauses=[{"at": "40s", "until": "60s"}]),
                 media("rmcat_2", stop=119)]
        return {"duration": f"{sim}s", "link": link(bw), "flows": flows}
    raise SystemExit(f"unknown case {cid} (5.1 to 5.8)")


LINE = re.compile(r"algo:nada (\S+) ts: (\d+) .*qdel: ([\d.]+) rtt: ([\d.]+) .*rrate: ([\d.]+) srate: ([\d.]+)")


def reference(log: str) -> dict[str, pd.DataFrame]:
    rows = defaultdict(list)
    with open(log) as f:
        for line in f:
            m = LINE.search(line)
            if m:
                name, ts, qdel, rtt, rrate, srate = m.groups()
                rows[name].append((int(ts) / 1e3, float(qdel), float(rtt), float(rrate), float(srate)))
    return {k: pd.DataFrame(v, columns=["t", "qdel", "rtt", "rrate", "srate"]) for k, v in rows.items()}


def main() -> None:
    import rtclab

    args = sys.argv[1:]
    beta = None
    if "--beta" in args:
        i = args.index("--beta")
        beta = float(args[i + 1])
        del args[i:i + 2]
    logdir, cases = args[0], args[1:] or ["5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7", "5.8"]
    print(f"{'case':<5} {'flow':<10} | {'ns3 Mbit/s':>10} {'qdel ms':>8} {'p95':>6} {'r_ref':>6} | "
          f"{'rtclab Mbit/s':>13} {'qdel ms':>8} {'p95':>6} {'r_ref':>6} {'pacer ms':>8}")
    for cid in cases:
        ref = reference(f"{logdir}/rmcat-test-case-{cid}-fixfps.log")
        scn = {"name": f"ns3-rmcat-{cid}", **case(cid)}
        if beta is not None:
            for f in scn["flows"]:
                if f["kind"] == "media":
                    f["params"].update(beta_v=beta, beta_s=beta)
        res = rtclab.run(scn)
        series = res.flows if isinstance(res.flows, pd.DataFrame) else pd.DataFrame(res.flows)
        media_flows = [f for f in scn["flows"] if f["kind"] == "media"]
        names = sorted(ref)
        for k, f in enumerate(media_flows):
            r = ref[names[k]] if k < len(names) else None
            mine = series[series.flow_name == f["name"]]
            start = float(f["start"][:-1])
            stop = float(f.get("stop", scn["duration"])[:-1])
            mine = mine[(mine.time_s >= start + 1) & (mine.time_s < stop)]
            r = r[(r.t >= start + 1) & (r.t < stop)] if r is not None else None
            print(f"{cid:<5} {f['name']:<10} | {r.rrate.mean() / 1e6:10.3f} {r.qdel.mean():8.1f} "
                  f"{np.percentile(r.qdel, 95):6.0f} {r.srate.mean() / 1e6:6.3f} | "
                  f"{mine.throughput_mbps.mean() * PAYLOAD_SHARE:13.3f} {mine.nada_queue_delay_ms.mean():8.1f} "
                  f"{np.nanpercentile(mine.nada_queue_delay_ms, 95):6.0f} {mine.target_mbps.mean():6.3f} "
                  f"{mine.stage_pacing_ms.mean():8.1f}")


if __name__ == "__main__":
    main()

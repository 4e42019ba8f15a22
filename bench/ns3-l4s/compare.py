"""TCP Prague and DualPI2 in rtclab against CableLabs' ns-3 L4S models (bench/ns3-l4s/prague-cubic.cc).

    python bench/ns3-l4s/compare.py NS3_OUTPUT [RTT_MS ...]

NS3_OUTPUT: the lines `prague-cubic --rtt=<r>ms` printed, one run per RTT (README.md). Each case
is rebuilt in rtclab as the ns-3 program builds it: 100 Mbit/s, DualPI2 with the ns-3 model's
settings (alpha 0.15 Hz, beta 3 Hz, 15 ms update and target, the L queue marking on a ramp from
0.8 ms over 0.4 ms, 1,562,500 bytes of limit), Prague (ECT(1), every CE fed back) and CUBIC 50 ms
later without ECN (the ns-3 model's CUBIC packets go Not-ECT: its classic queue drops, 63 packets in
60 s at 20 ms, and marks none), 1448-byte segments (1500 bytes a packet), 60 s, the first 10 s left
out.
Prints both: each flow's goodput, their ratio, and the L and C queues' sojourn p50/p99.
"""

import re
import sys


def scenario(rtt_ms: int) -> dict:
    return {
        "name": f"ns3-l4s-{rtt_ms}ms", "duration": "60s",
        "link": {"capacity": "100Mbps",
                 "queue": {"kind": "dualpi2", "limit": "1562500B", "alpha": 0.15, "beta": 3.0, "tupdate_ms": 15,
                           "target_ms": 15, "step_thresh_ms": 0.8, "ramp_range_ms": 0.4}},
        "metrics": {"warmup": "10s"},
        "flows": [
            {"name": "prague", "kind": "tcp", "cc": "prague", "rtt": f"{rtt_ms}ms", "packet_size": "1500B"},
            {"name": "cubic", "kind": "tcp", "cc": "cubic", "rtt": f"{rtt_ms}ms", "packet_size": "1500B",
             "start": "0.05s"},
        ],
    }


LINE = re.compile(r"rtt (\d+)ms .* prague_mbps ([\d.]+) cubic_mbps ([\d.]+) ratio ([\d.]+) "
                  r"l_sojourn_ms_p50 ([\d.]+) p99 ([\d.]+) c_sojourn_ms_p50 ([\d.]+) p99 ([\d.]+)")


def main() -> None:
    import rtclab

    ref = {}
    for line in open(sys.argv[1]):
        m = LINE.search(line)
        if m:
            ref[int(m.group(1))] = [float(x) for x in m.groups()[1:]]
    rtts = [int(x) for x in sys.argv[2:]] or sorted(ref)
    print(f"{'RTT':>5} | {'ns-3 Prague':>11} {'CUBIC':>6} {'ratio':>5} {'L p50/p99 ms':>13} {'C p50/p99 ms':>13} | "
          f"{'rtclab Prague':>13} {'CUBIC':>6} {'ratio':>5} {'L p50/p99 ms':>13} {'C p50/p99 ms':>13}")
    for rtt in rtts:
        s = rtclab.run(scenario(rtt)).summary
        p, c = s["flows"]
        mine = [p["goodput_mbps"], c["goodput_mbps"], p["goodput_mbps"] / c["goodput_mbps"],
                p["queuing_delay_ms"]["p50"], p["queuing_delay_ms"]["p99"],
                c["queuing_delay_ms"]["p50"], c["queuing_delay_ms"]["p99"]]
        r = ref.get(rtt)
        left = (f"{r[0]:11.1f} {r[1]:6.1f} {r[2]:5.2f} {r[3]:6.2f}/{r[4]:<6.2f} {r[5]:6.1f}/{r[6]:<6.1f}"
                if r else f"{'(not run)':>11}")
        print(f"{rtt:>4}ms | {left} | {mine[0]:13.1f} {mine[1]:6.1f} {mine[2]:5.2f} {mine[3]:6.2f}/{mine[4]:<6.2f} "
              f"{mine[5]:6.1f}/{mine[6]:<6.1f}")


if __name__ == "__main__":
    main()

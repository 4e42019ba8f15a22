"""One run of the FhMN 2013 two-flow experiment, printed as a time series of both flows'
estimator state: what `docs/algorithms/gcc.md` cites to show why a split stays or evens out.

    python -m rtclab.repro.gcc2013_trace --capacity 2 --seed 1 --start 76 --end 110

Columns per flow and step: received rate, REMB, loss-based rate (Mbit/s), reported loss, mean
queuing delay (ms), mean detector state (-1 under-use, 0 normal, 1 over-use), the detector
statistic's maximum and the threshold it was compared with.
"""

from __future__ import annotations

import argparse
import sys

from rtclab.repro.gcc import CONTROLLERS, OLD_VARIANTS, two_flows_2013


def trace(capacity_mbps: int, seed: int, label: str, start: float, end: float, step: float) -> list[str]:
    from rtclab.runner import run

    res = run(two_flows_2013("2013-trace", label, capacity_mbps, {"tfrc_floor": True}), seed, False)
    f = res.flows
    lines = [f"{label}, {capacity_mbps} Mbit/s, seed {seed}: first flow | second flow (second starts at 30 s)"]
    t = start
    while t < end:
        cells = []
        for flow in (0, 1):
            x = f[(f["flow"] == flow) & (f["time_s"] > t) & (f["time_s"] <= t + step)]
            if len(x) == 0:
                cells.append("not running")
                continue
            cells.append(f"rate {x['throughput_mbps'].mean():.2f} remb {x['remb_mbps'].mean():.2f} "
                         f"loss-based {x['loss_based_mbps'].mean():.2f} loss {x['loss'].mean():.2f} "
                         f"queue {x['queuing_delay_ms_mean'].mean():4.0f} ms state {x['detector_state'].mean():+.2f} "
                         f"statistic max {x['delay_gradient'].max():5.1f} threshold {x['threshold'].mean():4.1f}")
        lines.append(f"{t:5.0f} s  " + " | ".join(cells))
        t += step
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtclab.repro.gcc2013_trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("--capacity", type=int, default=2, choices=(1, 2, 3), help="bottleneck, Mbit/s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="gcc_paper 2013 Chrome", choices=OLD_VARIANTS)
    ap.add_argument("--start", type=float, default=0.0, help="s")
    ap.add_argument("--end", type=float, default=300.0, help="s")
    ap.add_argument("--step", type=float, default=2.0, help="s per line")
    a = ap.parse_args(argv)
    if not (0 <= a.start < a.end <= 300) or a.step <= 0:
        ap.error("need 0 <= --start < --end <= 300 and --step > 0")
    assert a.variant in CONTROLLERS
    print("\n".join(trace(a.capacity, a.seed, a.variant, a.start, a.end, a.step)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One run of an FhMN 2013 experiment (two flows, GCC vs CUBIC, one flow, the 400 -> 3000 kbit/s
step), printed as a time series of the flows' estimator state: what `docs/algorithms/gcc.md`
cites to show why a split stays or evens out, or which controller governs a ramp.

    python -m rtclab.repro.gcc2013_trace --capacity 2 --seed 1 --start 76 --end 110
    python -m rtclab.repro.gcc2013_trace --experiment "vs CUBIC" --order "GCC first" --capacity 3
    python -m rtclab.repro.gcc2013_trace --experiment step --start 56 --end 110

Columns per flow and step: received rate, target, REMB, loss-based rate (Mbit/s), reported loss, mean
queuing delay (ms), mean detector state (-1 under-use, 0 normal, 1 over-use), the detector
statistic's maximum, the threshold it was compared with and the filter's noise variance (ms²,
which 2013's increase factor reads); a CUBIC flow's received rate.
"""

from __future__ import annotations

import argparse
import sys

from rtclab.scenarios import with_sender
from rtclab.repro.gcc import (
    CAUSES_2013,
    CONTROLLERS,
    OLD_VARIANTS,
    ONE_FLOW_CAUSES_2013,
    ORDERS_2013,
    constant_2013,
    step_2013,
    two_flows_2013,
    vs_cubic_2013,
)

EXPERIMENTS = ("two flows", "vs CUBIC", "one flow", "step")
#: Every "2013 cause" change by name, as the repro applies it to `gcc_paper`: the two-flow
#: causes' media and flow changes, the single-flow causes' media changes.
ALL_CAUSES = {**CAUSES_2013, **{k: {"media": v} for k, v in ONE_FLOW_CAUSES_2013.items()}}


def trace(capacity_mbps: int, seed: int, label: str, start: float, end: float, step: float,
          cause: str | None = None, queue: str | None = None, experiment: str = "two flows",
          order: str = "GCC first", groups: str | None = None) -> list[str]:
    """`cause`: one of the repro's "2013 cause" changes, applied to `gcc_paper` as the repro does.
    `experiment` "vs CUBIC": flow 0 is GCC, flow 1 CUBIC, the later joining at 100 s (`order`).
    `groups` "frame" or "burst" (5 ms abs-send-time groups): the receiver's arrival grouping
    instead of the variant's; its filter (`detector_2013`) stays the variant's."""
    from rtclab.runner import run

    change = ALL_CAUSES[cause] if cause else {}
    if cause:
        label = "gcc_paper"
    extra = {"tfrc_floor": True, **change.get("media", {})}
    if groups is not None:
        # by RTP timestamp (a frame: 2013's OveruseDetector) or by 5 ms abs-send-time bursts (2014+)
        base = extra.get("gcc", CONTROLLERS[label][1].get("gcc", {}))
        extra["gcc"] = {**base, "frame_groups": groups == "frame"}
    if experiment == "one flow":
        sc = constant_2013(label, capacity_mbps * 1000, extra, flow=change.get("flow"))
        flows = "the flow"
    elif experiment == "step":
        sc = step_2013(label, extra, change.get("flow"))
        flows = "the flow (400 -> 3000 kbit/s at 60 s)"
    elif experiment == "vs CUBIC":
        sc = vs_cubic_2013(label, capacity_mbps, order, extra, change.get("flow"))
        flows = f"GCC | CUBIC ({order}, the other from 100 s)"
    else:
        sc = two_flows_2013("2013-trace", label, capacity_mbps, extra, change.get("flow"))
        flows = "first flow | second flow (second starts at 30 s)"
    if queue:
        sc["link"]["queue"] = {"limit": queue}
    f = run(with_sender(sc), seed, False).flows
    name = (f"gcc_paper, {cause}" if cause else label) + (f", {groups} groups" if groups else "")
    link = "400 -> 3000 kbit/s" if experiment == "step" else f"{capacity_mbps} Mbit/s"
    lines = [f"{name}, {link}, {queue or '60KB'} buffer, seed {seed}: {flows}"]
    t = start
    while t < end:
        cells = []
        for flow in ((0,) if experiment in ("one flow", "step") else (0, 1)):
            x = f[(f["flow"] == flow) & (f["time_s"] > t) & (f["time_s"] <= t + step)]
            if len(x) == 0:
                cells.append("not running")
                continue
            if experiment == "vs CUBIC" and flow == 1:
                cells.append(f"rate {x['throughput_mbps'].mean():.2f}")
                continue
            cells.append(f"rate {x['throughput_mbps'].mean():.2f} target {x['target_mbps'].mean():.2f} "
                         f"remb {x['remb_mbps'].mean():.2f} "
                         f"loss-based {x['loss_based_mbps'].mean():.2f} loss {x['loss'].mean():.2f} "
                         f"queue {x['queuing_delay_ms_mean'].mean():4.0f} ms state {x['detector_state'].mean():+.2f} "
                         f"statistic max {x['delay_gradient'].max():5.1f} threshold {x['threshold'].mean():4.1f} "
                         f"noise {x['noise_var'].mean():5.1f}")
        lines.append(f"{t:5.0f} s  " + " | ".join(cells))
        t += step
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rtclab.repro.gcc2013_trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", default="two flows", choices=EXPERIMENTS)
    ap.add_argument("--order", default="GCC first", choices=ORDERS_2013, help="vs CUBIC: which flow starts at 0 s")
    ap.add_argument("--capacity", type=int, default=2, choices=(1, 2, 3), help="bottleneck, Mbit/s")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="gcc_paper 2013 Chrome", choices=OLD_VARIANTS)
    ap.add_argument("--cause", choices=list(ALL_CAUSES), help="a '2013 cause' row's change instead of --variant")
    ap.add_argument("--groups", choices=("frame", "burst"),
                    help="the receiver groups arrivals by frame (RTP timestamp, as 2013's OveruseDetector did and "
                         "the 2013 variants do) or in 5 ms abs-send-time groups (libwebrtc since 2014; the "
                         "filter stays the variant's); default: the variant's")
    ap.add_argument("--queue", help="bottleneck buffer instead of the study's 60KB (e.g. 240KB)")
    ap.add_argument("--start", type=float, default=0.0, help="s")
    ap.add_argument("--end", type=float, default=300.0, help="s")
    ap.add_argument("--step", type=float, default=2.0, help="s per line")
    a = ap.parse_args(argv)
    if not (0 <= a.start < a.end <= 300) or a.step <= 0:
        ap.error("need 0 <= --start < --end <= 300 and --step > 0")
    if a.experiment == "step" and a.end > 200:
        a.end = 200.0  # the step experiment lasts 200 s
    from rtclab import ConfigError

    try:
        lines = trace(a.capacity, a.seed, a.variant, a.start, a.end, a.step, a.cause, a.queue, a.experiment, a.order,
                      a.groups)
    except ConfigError as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

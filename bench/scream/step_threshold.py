"""SCReAM v2 on RFC 8867 5.2 and 5.4 through DualPI2 with ECT(1) (`rtclab suite rmcat-l4s`): utilization,
queue and marks against the L queue's step threshold (Linux default 1 ms). A 1248-byte packet takes
2.5-10 ms to serialize at 1-4 Mbit/s. Run: python bench/scream/step_threshold.py"""
import rtclab
from rtclab.suites import rmcat_l4s
for sec in ("5.2-l4s", "5.4-l4s"):
    case = next(c for c in rmcat_l4s.CASES if c.section == sec)
    for step in (1, 5, 10, 20):
        scn = case.build("scream")
        scn["link"]["queue"]["step_thresh_ms"] = step
        s = rtclab.run(scn).summary
        f = s["flows"]
        print(f"{sec} step {step:>2} ms: utilization {s['link']['utilization']:.3f}, media qdelay p95 "
              f"{sum(x['queuing_delay_ms']['p95'] for x in f) / len(f):.1f} ms, CE fraction "
              f"{sum(x['ecn_marks'] for x in f) / sum(x['packets_received'] for x in f):.3f}")

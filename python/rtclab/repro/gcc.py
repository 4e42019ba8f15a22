"""`rtclab repro gcc`: the GCC papers' experiments, with both controllers.

Carlucci, De Cicco, Holmer, Mascolo, ACM TOMM 2017 (the receiver-side Kalman GCC evaluated on
Chromium over NetEm/TBF): RTT_min 50 ms, drop-tail queues sized by their maximum queuing
time T_q. Published numbers from `shared/specs/gcc.md` §6.1. Each experiment runs with
`gcc_paper` (the algorithm the paper evaluated) and `gcc` (libwebrtc today, which the paper
did not evaluate: its "paper" column is the same target for comparison).
Also De Cicco, Carlucci, Mascolo, "Experimental Investigation of the Google Congestion Control
for Real-Time Flows" (FhMN 2013): 60 KB buffer, two GCC flows at 1/2/3 Mbit/s, and a
400 -> 3000 kbit/s step; run with `gcc_paper` plus the 2013 TFRC floor.
"""

from __future__ import annotations

import numpy as np

from rtclab.repro import Job, Reproduction, Row

VARIANTS = ("gcc_paper", "gcc")
DURATION_GRID_S = 300
CAPACITIES = (500, 1000, 1500, 2000)
QUEUES = (150, 350, 700)


def media_flow(cc: str, name: str | None = None, start: str = "0s", extra: dict | None = None) -> dict:
    f = {"name": name or cc, "kind": "media", "cc": cc, "rtt": "50ms", "start": start,
         "media": {"start_bitrate": "300kbps", "max_bitrate": "2500kbps", **(extra or {})}}
    return f


def scenario(name: str, duration: int, capacity, queue_ms: int, flows: list[dict], warmup: int = 0) -> dict:
    return {"name": name, "duration": f"{duration}s", "link": {"capacity": capacity, "queue": {"limit": f"{queue_ms}ms"}},
            "flows": flows, "metrics": {"warmup": f"{warmup}s"}}


def window_mean(res, flow: int, t0: float, t1: float) -> float:
    f = res.flows[(res.flows["flow"] == flow) & (res.flows["time_s"] > t0) & (res.flows["time_s"] <= t1)]
    return float(f["throughput_mbps"].mean()) if len(f) else 0.0


def build(runs: int = 10) -> Reproduction:
    jobs: list[Job] = []
    # Figs. 6-7: static vs adaptive threshold, one flow at 1 Mbit/s.
    for variant, cc, adaptive in [("gcc_paper static", "gcc_paper", False), ("gcc_paper adaptive", "gcc_paper", True), ("gcc", "gcc", True)]:
        jobs.append(Job(("threshold", variant), scenario(f"threshold-{variant}", 300, "1Mbps", 350,
                                                         [media_flow(cc, extra={"adaptive_threshold": adaptive})], warmup=30)))
    staircase = {"schedule": [{"at": f"{50 * i}s", "rate": f"{r}kbps"} for i, r in enumerate([500, 1000, 1500, 2000, 1500, 1000, 500])]}
    for cc in VARIANTS:
        jobs.append(Job(("staircase", cc), scenario(f"staircase-{cc}", 350, staircase, 350, [media_flow(cc)])))
        for c in CAPACITIES:
            for q in QUEUES:
                for r in range(runs):
                    jobs.append(Job(("constant", cc, c, q, r), scenario(f"constant-{cc}-{c}-{q}", DURATION_GRID_S, f"{c}kbps", q,
                                                                        [media_flow(cc)], warmup=30), seed=r + 1))
        for q in QUEUES:
            tcp = {"name": "cubic", "kind": "tcp", "cc": "cubic", "rtt": "50ms", "start": "100s", "stop": "300s"}
            jobs.append(Job(("vs-cubic", cc, q), scenario(f"vs-cubic-{cc}-{q}", 400, "2Mbps", q, [media_flow(cc), tcp])))
        for n in (2, 3, 4):
            flows = [media_flow(cc, f"{cc}-{i}", start=f"{20 * i}s") for i in range(n)]
            jobs.append(Job(("n-flows", cc, n), scenario(f"n-flows-{cc}-{n}", 200, f"{n}Mbps", 350, flows)))

    # FhMN 2013: 60 KB "home gateway" buffer, RTT 50 ms, TFRC floor in the loss rule.
    old = {"tfrc_floor": True}
    for c in (1, 2, 3):
        for r in range(min(runs, 5)):
            flows = [media_flow("gcc_paper", "first", extra=old), media_flow("gcc_paper", "second", start="30s", extra=old)]
            sc = scenario(f"2013-two-flows-{c}", 300, f"{c}Mbps", 0, flows)
            sc["link"]["queue"] = {"limit": "60KB"}
            jobs.append(Job(("2013-two-flows", c, r), sc, seed=r + 1))
    step = {"schedule": [{"at": "0s", "rate": "400kbps"}, {"at": "60s", "rate": "3000kbps"}]}
    sc = scenario("2013-step", 200, step, 0, [media_flow("gcc_paper", extra={**old, "max_bitrate": "3500kbps"})])
    sc["link"]["queue"] = {"limit": "60KB"}
    jobs.append(Job(("2013-step",), sc))

    def evaluate(res) -> list[Row]:
        rows: list[Row] = []
        for variant in ("gcc_paper static", "gcc_paper adaptive", "gcc"):
            s = res[("threshold", variant)].summary
            q = s["link"]["queuing_delay_ms"]
            rtt95 = None if q["p95"] is None else 50.0 + q["p95"]
            paper = {"gcc_paper static": "130 (p95 RTT, ms)", "gcc_paper adaptive": "90"}.get(variant, "–")
            rows.append(Row("threshold 1 Mbit/s (Figs. 6-7)", variant, "RTT p95 ms", rtt95, paper))
            rows.append(Row("threshold 1 Mbit/s (Figs. 6-7)", variant, "utilization", s["link"]["utilization"], "–"))
            rows.append(Row("threshold 1 Mbit/s (Figs. 6-7)", variant, "loss", s["link"]["loss_ratio"],
                            "0" if "adaptive" in variant else "–"))
        for cc in VARIANTS:
            s = res[("staircase", cc)].summary
            rows.append(Row("staircase 500-2000 kbit/s (Fig. 10)", cc, "utilization", s["link"]["utilization"], "0.86"))
            rows.append(Row("staircase 500-2000 kbit/s (Fig. 10)", cc, "median queuing ms", s["link"]["queuing_delay_ms"]["p50"], "≈ 0"))
            cells = [(k, r) for k, r in res.items() if k[0] == "constant" and k[1] == cc]
            utils = [r.summary["link"]["utilization"] for _, r in cells]
            medians = [r.summary["link"]["queuing_delay_ms"]["p50"] or 0.0 for _, r in cells]
            loss_big_queue = [r.summary["link"]["loss_ratio"] for k, r in cells if k[3] >= 350]
            rows.append(Row("constant capacity grid (Fig. 11)", cc, "utilization, min over runs", float(np.min(utils)), "> 0.90 every case"))
            rows.append(Row("constant capacity grid (Fig. 11)", cc, "utilization, mean", float(np.mean(utils)), "> 0.90"))
            rows.append(Row("constant capacity grid (Fig. 11)", cc, "median queuing ms, max over runs", float(np.max(medians)), "< 3"))
            rows.append(Row("constant capacity grid (Fig. 11)", cc, "loss, T_q >= 350 ms, max", float(np.max(loss_big_queue)), "0"))
            for q in QUEUES:
                r = res[("vs-cubic", cc, q)]
                g, t = window_mean(r, 0, 110, 300), window_mean(r, 1, 110, 300)
                rows.append(Row("vs CUBIC, 2 Mbit/s, 100-300 s (Fig. 12)", f"{cc} T_q={q} ms", "GCC share of throughput",
                                g / (g + t) if g + t > 0 else None, "≈ 0.5 for two of three T_q"))
            for n in (2, 3, 4):
                s = res[("n-flows", cc, n)].summary
                last_start = 20 * (n - 1)
                fr = res[("n-flows", cc, n)].fairness
                fr = fr[(fr["time_s"] > last_start + 20) & (fr["active_flows"] == n)]
                rows.append(Row(f"{n} flows, started 20 s apart (Figs. 13-14)", cc, "Jain (all active, mean)",
                                float(fr["jain"].mean()) if len(fr) else None, "> 0.9"))
                rows.append(Row(f"{n} flows, started 20 s apart (Figs. 13-14)", cc, "utilization", s["link"]["utilization"], "> 0.85"))
                rows.append(Row(f"{n} flows, started 20 s apart (Figs. 13-14)", cc, "median queuing ms", s["link"]["queuing_delay_ms"]["p50"], "< 3"))
        for c in (1, 2, 3):
            js = []
            for k, r in res.items():
                if k[0] == "2013-two-flows" and k[1] == c:
                    a, b = window_mean(r, 0, 60, 300), window_mean(r, 1, 60, 300)
                    js.append((a + b) ** 2 / (2 * (a * a + b * b)) if a + b > 0 else float("nan"))
            paper = "poor (unpredictable)" if c < 3 else "roughly fair, first ahead"
            rows.append(Row(f"2013: two GCC flows, {c} Mbit/s, 60 KB buffer", "gcc_paper + TFRC", "Jain, min over runs", float(np.nanmin(js)), paper))
            rows.append(Row(f"2013: two GCC flows, {c} Mbit/s, 60 KB buffer", "gcc_paper + TFRC", "Jain, mean over runs", float(np.nanmean(js)), paper))
        step = res[("2013-step",)]
        f = step.flows[(step.flows["flow"] == 0) & (step.flows["time_s"] > 60) & (step.flows["target_mbps"] >= 2.0)]
        reach = float(f["time_s"].iloc[0] - 60) if len(f) else None
        rows.append(Row("2013: step 400 -> 3000 kbit/s at 60 s", "gcc_paper + TFRC", "s to reach 2 Mbit/s", reach, "≈ 30"))
        return rows

    figures = [
        ("Figs. 6-7, threshold", [("threshold", v) for v in ("gcc_paper static", "gcc_paper adaptive", "gcc")]),
        ("Fig. 10, staircase", [("staircase", cc) for cc in VARIANTS]),
        ("Fig. 11, constant 1000 kbit/s, T_q 350 ms", [("constant", cc, 1000, 350, 0) for cc in VARIANTS]),
        ("Fig. 12, vs CUBIC, T_q 350 ms", [("vs-cubic", cc, 350) for cc in VARIANTS]),
        ("Figs. 13-14, 4 flows", [("n-flows", cc, 4) for cc in VARIANTS]),
        ("2013, two flows at 1 Mbit/s", [("2013-two-flows", 1, 0)]),
        ("2013, step 400 -> 3000 kbit/s", [("2013-step",)]),
    ]
    notes = [
        "Queuing delay is the ground-truth time packets spent in the bottleneck queue; the paper "
        "measured RTT - RTT_min from RTCP, so 'RTT p95' here is 50 ms + the one-way queuing p95.",
        "2013 two-flow runs: the second flow starts 30 s after the first (the study does not give the offset); "
        "Jain over 60-300 s of the two flows' mean rates, 5 runs per capacity.",
    ]
    return Reproduction("gcc", "Google Congestion Control (Carlucci et al., ACM TOMM 2017)", jobs, evaluate, figures, notes)

"""`rtclab repro confucius`: Confucius' simulator experiments (dissertation ch. 8; Meng et
al., arXiv 2310.18030). Set-ups and published numbers from
`shared/specs/afr-hairpin-confucius.md` §4.11-4.12.

A 20 Mbit/s bottleneck, RTT 40 ms, a 1000-packet buffer. The real-time flow is a video call
over GCC (libwebrtc's send-side; the dissertation runs Copa, GCC and BBR and reports GCC "behaves
similarly"; rtclab's video over Copa keeps a standing sender-side backlog, frame delays of
1.5 s before any competition, so it is not used here); at 10 s a burst of
web flows (CUBIC, finite transfers, `size`) starts. Queues: FIFO (drop-tail), FQ (FQ-CoDel
with a 500 ms target, i.e. without AQM drops, as the prototype scripts), CBQ 1:1 and 1:5 and
strict priority (the real-time flow in class 0; `drr`), and Confucius.
- Load sweep: 5-100 web flows of 15 KB (Fig 8.14).
- Size sweep: 5 web flows of 15 KB - 9 MB (Fig 8.15).
- Heterogeneous CCs: one flow each of CUBIC, BBR, GCC (video) and Copa (video), 100 s: JFI
  (Fig 8.16).
Metrics: stall duration = time in the 20 s after the burst with the video's frame delay above
190 ms (50 ms bins); page load time (PLT) = the burst's last completion; its degradation
against FQ. Not run: the Alexa web-page replay (the HAR flow lists are unreleased; a page
generator is future work), the Linux testbed.
"""

from __future__ import annotations

from rtclab.repro import Job, Reproduction, Row

QUEUES = {
    "FIFO": {"limit": "1000pkt"},
    "FQ": {"kind": "fq_codel", "limit": "1000pkt", "target_ms": 500},
    "CBQ 1:1": {"kind": "drr", "limit": "1000pkt", "weight0": 1, "weight1": 1},
    "CBQ 1:5": {"kind": "drr", "limit": "1000pkt", "weight0": 1, "weight1": 5},
    "StrictPriority": {"kind": "drr", "limit": "1000pkt", "strict": True},
    "Confucius": {"kind": "confucius", "limit": "1000pkt"},
}
LOADS = (5, 20, 40, 60, 100)
SIZES = ("15KB", "150KB", "1.5MB", "9MB")
BURST_S = 10.0
WINDOW_S = 20.0


def rt_flow(cc: str = "gcc", name: str = "video") -> dict:
    f = {"name": name, "kind": "media", "cc": cc, "rtt": "40ms",
         "media": {"start_bitrate": "2Mbps", "max_bitrate": "20Mbps"}}
    return f


def web_flows(n: int, size: str) -> dict:
    return {"name": "web", "kind": "tcp", "cc": "cubic", "rtt": "40ms", "start": f"{BURST_S}s", "size": size,
            "count": n}


def scenario(name: str, queue: str, flows: list[dict], duration: float) -> dict:
    return {"name": name, "duration": f"{duration}s", "link": {"capacity": "20Mbps", "queue": dict(QUEUES[queue])},
            "flows": flows, "metrics": {"bin": "50ms"}}


def stall_s(res) -> float:
    f = res.flows[(res.flows["flow"] == 0) & (res.flows["time_s"] > BURST_S)
                  & (res.flows["time_s"] <= BURST_S + WINDOW_S)]
    return float((f["frame_delay_ms_max"] > 190.0).sum() * 0.05)


def plt_s(res) -> float | None:
    fcts = [f["completion_time_s"] for f in res.summary["flows"][1:]]
    if not fcts or any(x is None for x in fcts):
        return None
    return float(max(fcts))


def build(runs: int = 10) -> Reproduction:
    jobs: list[Job] = []
    for n in LOADS:
        for q in QUEUES:
            jobs.append(Job(("load", q, n), scenario(f"load-{n}-{q}", q, [rt_flow(), web_flows(n, "15KB")], 40)))
    for size in SIZES:
        for q in QUEUES:
            jobs.append(Job(("size", q, size), scenario(f"size-{size}-{q}", q, [rt_flow(), web_flows(5, size)], 40)))
    hetero = [rt_flow("copa", "copa"), rt_flow("gcc", "gcc"),
              {"name": "bbr", "kind": "tcp", "cc": "bbr", "rtt": "40ms"},
              {"name": "cubic", "kind": "tcp", "cc": "cubic", "rtt": "40ms"}]
    for q in ("FIFO", "FQ", "Confucius"):
        jobs.append(Job(("hetero", q), scenario(f"hetero-{q}", q, hetero, 100)))

    def evaluate(res) -> list[Row]:
        rows: list[Row] = []
        for exp, values, label in (("load", LOADS, "web flows"), ("size", SIZES, "size")):
            title = ("Load sweep (15 KB web flows)" if exp == "load" else "Size sweep (5 web flows)")
            for v in values:
                fq_plt = plt_s(res[(exp, "FQ", v)])
                for q in QUEUES:
                    r = res[(exp, q, v)]
                    paper = ""
                    if q == "Confucius":
                        paper = "0 s stall (Fig 8.14/8.15)"
                    elif q in ("FQ", "FIFO") and exp == "load" and v == 60:
                        paper = "> 0.5 s stall at 60 flows"
                    rows.append(Row(title, f"{q}, {label} {v}", "stall duration (s)", stall_s(r), paper))
                    p = plt_s(r)
                    deg = None if p is None or fq_plt is None else p - fq_plt
                    rows.append(Row(title, f"{q}, {label} {v}", "PLT - PLT(FQ) (s)", deg,
                                    "bounded by log2(e)/λ = 0.361 s" if q == "Confucius" else ""))
        f = res[("hetero", "Confucius")].flows
        expected = {"copa": 1, "gcc": 1, "bbr": 2, "cubic": 3}
        for i, name in enumerate(("copa", "gcc", "bbr", "cubic")):
            cls = f[(f["flow"] == i) & (f["time_s"] > 5)]["queue_class"].dropna()
            mode = float(cls.mode().iloc[0]) if len(cls) else None
            rows.append(Row("Heterogeneous CCs (Copa, GCC, BBR, CUBIC; 100 s)", f"Confucius, {name}",
                            "most frequent class", mode, f"Q{expected[name]}",
                            f"share of time in Q{expected[name]}: {float((cls == expected[name]).mean()):.2f}"))
        for q in ("FIFO", "FQ", "Confucius"):
            s = res[("hetero", q)].summary
            rates = [f["throughput_mbps"] for f in s["flows"]]
            jfi = float(sum(rates) ** 2 / (len(rates) * sum(x * x for x in rates)))
            rows.append(Row("Heterogeneous CCs (Copa, GCC, BBR, CUBIC; 100 s)", q, "JFI", jfi,
                            "0.98" if q == "Confucius" else ""))
            for f in s["flows"][:2]:
                fd = f["media"]["frame_delay_ms"]["p95"] if f.get("media") else None
                rows.append(Row("Heterogeneous CCs (Copa, GCC, BBR, CUBIC; 100 s)", f"{q}, {f['name']}",
                                "frame delay p95 (ms)", fd, "low (Q1)" if q == "Confucius" else ""))
        return rows

    notes = [
        "The video runs over GCC: rtclab's video over Copa shows 1.5 s frame delays before the burst (a sender-side "
        "backlog of frame bursts against Copa's window), so the stall metric would not measure the queue.",
        "Web flows are finite CUBIC transfers (`size`), all starting together at 10 s; the paper replays Alexa "
        "page loads (median 27 flows) that are not released.",
        "FQ is FQ-CoDel with a 500 ms target (the prototype scripts' 'FQ'); CBQ and StrictPriority put the video "
        "flow (flow 0) in class 0.",
        "Classes come from flows.parquet's queue_class (the class Confucius holds each flow in at each bin's end).",
    ]
    return Reproduction("confucius", "Confucius (Meng et al., arXiv 2310.18030; dissertation ch. 8)", jobs, evaluate,
                        [], notes)

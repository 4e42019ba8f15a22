"""`rtclab repro qlibra`: QLibra's four experiments from the fairness study (seed
`001_91b98b49efd2e704.txt` §4.2; set-ups and numbers from `shared/specs/copa-qlibra-tcp.md` §2.6).

QLibra and "native Reno" are the study's video application over QUIC Reno (here a media flow
whose encoder follows 0.9 × cwnd/srtt up to 900 kbit/s); the competitors are behavioural models
(`zoom_like`; Bilibili-like = a BBR-driven media flow capped at 1.9 Mbit/s, 10 ms from its
server), not the real products. The study's phases (1000 kbit/s cap, then 10 % loss) run as
separate 240 s runs whose first 60 s are discarded; the loss phase has no cap (the study's
loss-phase sums exceed 1000 kbit/s several times). Rates are measured at the bottleneck
ingress (sending rate), as the study captured before its emulator. Base RTT 40 ms, buffer
25 KB (1 BDP of 1000 kbit/s at 200 ms).
"""

from __future__ import annotations

import numpy as np

from rtclab.repro import Job, Reproduction, Row

PHASES = {"cap": "1000 kbit/s cap", "loss": "10 % loss"}

QLIBRA = {"name": "qlibra", "kind": "media", "cc": "qlibra", "rtt": "40ms",
          "media": {"max_bitrate": "900kbps", "start_bitrate": "300kbps"}}
RENO = {"name": "reno", "kind": "media", "cc": "reno", "rtt": "40ms",
        "media": {"max_bitrate": "900kbps", "start_bitrate": "300kbps"}}
ZOOM = {"name": "zoom", "kind": "media", "cc": "zoom_like", "rtt": "40ms",
        "media": {"max_bitrate": "900kbps", "start_bitrate": "600kbps"}}
BILIBILI = {"name": "bilibili", "kind": "media", "cc": "bbr", "rtt": "10ms",
            "media": {"max_bitrate": "1900kbps", "start_bitrate": "1000kbps"}}

# (experiment, flows, published kbit/s per flow for each phase)
EXPERIMENTS = [
    ("1: QLibra vs Zoom (Fig. 12)", [QLIBRA, ZOOM], {"cap": [590, 570], "loss": [1160, 1180]}),
    ("2: QLibra vs Bilibili (Fig. 13)", [QLIBRA, BILIBILI], {"cap": [560, 500], "loss": [1160, 1960]}),
    ("3: QLibra vs native Reno (Fig. 14)", [QLIBRA, RENO], {"cap": [540, 470], "loss": [1120, 640]}),
    ("4: QLibra / Zoom / native Reno (Fig. 15)", [QLIBRA, ZOOM, RENO], {"cap": [540, 470, 60], "loss": [1130, 1010, 640]}),
]


def scenario(name: str, phase: str, flows: list[dict]) -> dict:
    link: dict = {"capacity": "1000kbps" if phase == "cap" else "100Mbps", "queue": {"limit": "25KB"}}
    if phase == "loss":
        link["loss"] = {"model": "iid", "rate": 0.10}
    return {"name": name, "duration": "240s", "link": link, "flows": flows, "metrics": {"warmup": "60s"}}


def jain(xs) -> float:
    xs = np.asarray(xs, dtype=float)
    s2 = float((xs * xs).sum())
    return float(xs.sum() ** 2 / (len(xs) * s2)) if s2 > 0 else float("nan")


def build(runs: int = 10) -> Reproduction:
    jobs = []
    for i, (title, flows, _) in enumerate(EXPERIMENTS):
        for phase in PHASES:
            for r in range(max(1, min(runs, 3))):
                jobs.append(Job((i, phase, r), scenario(f"qlibra-exp{i + 1}-{phase}", phase, flows), seed=r + 1))

    def evaluate(res) -> list[Row]:
        rows = []
        for i, (title, flows, paper) in enumerate(EXPERIMENTS):
            for phase, label in PHASES.items():
                runs_ = [v for k, v in res.items() if k[0] == i and k[1] == phase]
                rates = np.mean([[f["sending_rate_mbps"] * 1000 for f in r.summary["flows"]] for r in runs_], axis=0)
                for f, ours, pub in zip(flows, rates, paper[phase]):
                    rows.append(Row(f"exp {title}", f"{label}: {f['name']}", "sending rate kbit/s", float(ours), str(pub)))
                rows.append(Row(f"exp {title}", f"{label}", "Jain", jain(rates), f"{jain(paper[phase]):.3f}"))
        return rows

    figures = [(f"exp {t}, {PHASES[p]}", [(i, p, 0)]) for i, (t, _, _) in enumerate(EXPERIMENTS) for p in PHASES]
    notes = [
        "Phases are separate runs (240 s, first 60 s discarded); the loss phase has no cap.",
        "Competitors are behavioural models: zoom_like (FEC with loss, no loss back-off) is not yet calibrated "
        "against the study's shares; Bilibili-like = BBR-driven media capped at 1.9 Mbit/s, RTT 10 ms.",
        "Published 'Jain' is derived from the published rates (spec §2.6).",
    ]
    return Reproduction("qlibra", "QLibra (fairness/QoE study, §4)", jobs, evaluate, figures, notes)

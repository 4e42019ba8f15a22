"""`rtclab repro afr`: AFR's trace-driven decoder-queue simulation (dissertation ch. 6; Meng
et al., NSDI 2023). Set-ups, constants and published numbers from
`shared/specs/afr-hairpin-confucius.md` §2.

The chapter replays production decoder-queue traces of four client categories (Windows/macOS ×
wired/Wi-Fi); they are not public, so each category is a synthetic client
(`rtclab_media::afr::clients`: a log-normal decoder with slow episodes around the 16.7 ms frame
interval and rare 60-100 ms stalls; a per-session RTT with jitter and, on Wi-Fi, bursts),
calibrated so that category (1) under DropTail lands near the dataset means (network 15.48 ms,
decode 2.83 ms, queue 0.96 ms). Every policy meets the same sessions (same seeds). The
frame-level simulator (`decoder_queue.rs`) follows the released `sim/env.py`: frames generated
at the controller's rate, a 16-frame pre-decoder queue that drops the arriving frame when full,
the controller's answer at the encoder one RTT later.

Policies (spec §2.7): DropTail (60 fps), QLen-S and QWait-S (pause encoding), AFR-QLen,
AFR-QWait, AFR-TX (ρ = 0.95, the code's default; 0.8 in the sweep), AFR-Kingman, AFR (released
code's rules; the dissertation's rules as a variant).
"""

from __future__ import annotations

import statistics

from rtclab import _core
from rtclab.repro import Cause, Reproduction, Row

CATEGORIES = ("windows-wired", "windows-wifi", "macos-wired", "macos-wifi")
POLICIES = {"DropTail": "droptail", "QLen-S": "qlen-s", "QWait-S": "qwait-s", "AFR-QLen": "afr-qlen",
            "AFR-QWait": "afr-qwait", "AFR-TX": "afr-tx", "AFR-Kingman": "afr-kingman", "AFR": "afr"}
QUEUE_BASELINES = ("DropTail", "QLen-S", "QWait-S")
SECONDS = 60.0
#: Tab 6.2, DropTail rows (deployment A/B): Q99 ms, Q>50 ms, T99 ms, T>100 ms.
DEPLOYED = {"windows-wired": (54, 0.0111, 101, 0.0103), "windows-wifi": (64, 0.0183, 174, 0.0300)}


_SYNTHETIC = ("open: the production decoder-queue traces are not public (spec §2), so the categories are synthetic "
              "clients (rtclab_media::afr::clients)")
#: Where the dissertation and the released code (transys-project/afr) differ, which one the rows
#: follow (spec §2.12; `rtclab.repro.note_follows`). The "Rules" rows run both.
TEXT_OR_CODE = [
    Cause("(Category|Calibration|Sweep|All)", "follows the released code: outlier = absolute decode time ≥ 50 ms (text: "
          "a jump > 50 ms), Q1 16 ms and Q2 64 / 14 ms by RTT (text: 14 ms and a deadline formula), AFR-TX ρ 0.95 "
          "(text 0.8), DropTail drops the arriving frame (text: flush and wait for a key frame); the text's rules are "
          "the 'Rules' rows"),
]
#: What explains the rows that are not reproduced (`rtclab.repro.explain`).
GAP_CAUSES = [
    Cause("Calibration", _SYNTHETIC + "; calibrated on the network and decode means, the queue mean follows from "
          "the synthetic slow episodes (docs/algorithms/afr.md, 'Measured')"),
    Cause("Category", _SYNTHETIC + ": every controller keeps the frames queued behind single 60-100 ms decoder "
          "stalls, which no frame rate prevents (they are in flight), and the synthetic slow episodes are mild enough "
          "for the pause baselines to drain the queue too (docs/algorithms/afr.md, 'Measured')",
          variant=r"AFR / (QLen-S|QWait-S)"),
    Cause("Category", _SYNTHETIC + ": their decoders are slow about 2 % of the time, so the median frame rate "
          "stays at 60 fps for every policy (docs/algorithms/afr.md)", metric="median frame rate"),
]


def build(runs: int = 10) -> Reproduction:
    sessions = max(4, 4 * min(runs, 10))

    def evaluate(_results) -> list[Row]:
        rows: list[Row] = []
        res = {(c, p): _core.afr_run(c, code, sessions=sessions, seconds=SECONDS)
               for c in CATEGORIES for p, code in POLICIES.items()}
        d = res[("windows-wired", "DropTail")]
        t = "Calibration: category (1) under DropTail vs the dataset means (ms)"
        for k, paper in (("network_mean_ms", 15.48), ("decode_mean_ms", 2.83), ("queue_mean_ms", 0.96),
                         ("total_mean_ms", 22.72)):
            rows.append(Row(t, "windows-wired", k, d[k], f"{paper}",
                            "ours: RTT + queue + decode" if k == "total_mean_ms" else ""))
        for c in CATEGORIES:
            t = f"Category {c} ({sessions} synthetic sessions of {SECONDS:.0f} s)"
            for p in POLICIES:
                r = res[(c, p)]
                stall = r["stall_ratios"]
                note = (f"T99 {r['total_p99_ms']:.1f} ms, T>100 {r['total_over_100ms']:.4%}, "
                        f"median fps {r['fps_median']:.0f}, dropped {r['dropped']}, "
                        f"stalled sessions >5 % {sum(s > 0.05 for s in stall) / len(stall):.0%}")
                paper = ""
                if c in DEPLOYED and p == "DropTail":
                    q, q50, t99, t100 = DEPLOYED[c]
                    paper = f"deployed DropTail: Q99 {q} ms, Q>50 {q50:.2%}, T99 {t99} ms, T>100 {t100:.2%}"
                if p == "AFR":
                    paper = "Q99 as low as 6.9 ms"
                rows.append(Row(t, p, "queue p99 (ms)", r["queue_p99_ms"], paper, note))
                rows.append(Row(t, p, "P(queue > 50 ms)", r["queue_over_50ms"], ""))
            afr = res[(c, "AFR")]
            for b in QUEUE_BASELINES:
                base = res[(c, b)]
                # AFR's figure over the baseline's (the paper's "N× lower" read as AFR at 1/N of
                # it): measurable when AFR's queue vanishes, as it often does (p99 0 ms).
                for key, metric, paper in (
                        ("queue_over_50ms", "frames with queue > 50 ms, AFR / baseline", "0.038-0.48 (2.1-26× lower)"),
                        ("queue_p99_ms", "queue p99, AFR / baseline", "0.135-0.53 (1.9-7.4× lower)"),
                        ("total_over_100ms", "frames with total > 100 ms, AFR / baseline",
                         "0.45-0.63 (1.6-2.2× lower)")):
                    ratio = afr[key] / base[key] if base[key] > 0 else None
                    why = None
                    if ratio is None:
                        what = ("a p99 of 0 ms: fewer than 1 % of frames waited" if key == "queue_p99_ms" else
                                f"no such frame in {base['frames']:,} frames")
                        why = (f"open: {b} has {what}, so no ratio at this run count ({sessions} sessions; "
                               f"`rtclab repro afr --runs 10` has {4 * 10} per category)")
                    rows.append(Row(t, f"AFR / {b}", metric, ratio, paper, f"AFR {afr[key]:.4g}, {b} {base[key]:.4g}",
                                    better="lower", cause=why))
            fps = 1 - afr["fps_median"] / res[(c, "DropTail")]["fps_median"]
            rows.append(Row(t, "AFR vs DropTail", "median frame rate reduction", fps, "0.03-0.09",
                            f"10th percentile of per-second frame counts: AFR {afr['fps_p10']:.0f}, "
                            f"DropTail {res[(c, 'DropTail')]['fps_p10']:.0f}", better="lower"))

        t = "Sweep on category (1) (Fig 6.16): P(queue > 50 ms) against the p99 inter-frame time"
        for w0 in (1, 2, 4, 8, 16):
            for p, code in (("AFR", "afr"), ("AFR-Kingman", "afr-kingman")):
                r = _core.afr_run("windows-wired", code, sessions=sessions, seconds=SECONDS, w0_ms=w0)
                rows.append(Row(t, f"{p}, W0 = {w0} ms", "P(queue > 50 ms)", r["queue_over_50ms"], "",
                                f"p99 inter-frame {r['interframe_p99_ms']:.1f} ms, median fps {r['fps_median']:.0f}"))
        for rho in (0.8, 0.9, 0.95):
            r = _core.afr_run("windows-wired", "afr-tx", sessions=sessions, seconds=SECONDS, rho=rho)
            rows.append(Row(t, f"AFR-TX, ρ = {rho}", "P(queue > 50 ms)", r["queue_over_50ms"], "",
                            f"p99 inter-frame {r['interframe_p99_ms']:.1f} ms, median fps {r['fps_median']:.0f}"))
        t = "Rules: released code (outlier ≥ 50 ms, Q1 16 / Q2 64 ms) vs dissertation (jump > 50 ms, Q2 from the deadline)"
        for c in ("windows-wired", "windows-wifi"):
            code_r = res[(c, "AFR")]
            diss = _core.afr_run(c, "afr", sessions=sessions, seconds=SECONDS, dissertation=True)
            for name, r in (("code", code_r), ("dissertation", diss)):
                rows.append(Row(t, f"{c}, {name}", "P(queue > 50 ms)", r["queue_over_50ms"], "",
                                f"queue p99 {r['queue_p99_ms']:.1f} ms, T>100 {r['total_over_100ms']:.4%}"))
        means = [res[(c, "AFR")]["queue_over_50ms"] for c in CATEGORIES]
        rows.append(Row("All categories", "AFR", "P(queue > 50 ms), mean over categories", statistics.fmean(means), ""))
        return rows

    notes = [
        "Synthetic client categories stand in for the production traces (rtclab_media::afr::clients documents them); "
        "category (1) under DropTail is calibrated to the dataset means (first rows).",
        "Total delay = RTT + queue + decode (the chapter's simulator accounting); the dataset's 22.72 ms total "
        "includes stages the simulator does not model.",
        "Not run yet: AFR inside the packet-level pipeline (receiver decoder -> encoder frame-rate requests), the "
        "encoder-response micro-benchmarks.",
    ]
    return Reproduction("afr", "AFR (Meng et al., NSDI 2023; dissertation ch. 6)", [], evaluate, [], notes)

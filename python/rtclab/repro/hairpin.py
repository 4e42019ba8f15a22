"""`rtclab repro hairpin`: Hairpin's experiments (dissertation ch. 7; Meng et al., NSDI 2024).
Set-ups, constants and published numbers from `shared/specs/afr-hairpin-confucius.md` §3.

- Offline table: our solver against the published tables (every cell), the spec's golden
  vectors, the time to solve a table and to look a cell up.
- Acceptance (§3.10): Bernoulli 20 % loss, RTT 20 ms, deadline 100 ms, 25-packet frames.
- Grid: i.i.d. loss 1-20 % × RTT 10-40 ms, and bursty (Gilbert-Elliott) loss; deadline
  (50/100/200 ms), λ (1e-1…1e-7) and loss-window (1-8 frames) sensitivity; mean latency.

The edge-streaming set-up of the released simulator (§3.8): frames at 60 fps sent at once, no
congestion control, an unconstrained link with the path's RTT and packet loss (forward only),
each packet acknowledged. Frames here are 25 data packets (≈ 14 Mbit/s). Trace-driven runs
replay per-16 ms RTT and loss (`conditions` on the link) from synthetic wired/Wi-Fi/cellular
session sets (`hairpin_traces.py`; the production traces are not public). Baselines:
retransmission only (dup-ACK holes or PTO), a fixed 50 % FEC, Bolot's and USF's adaptive FEC,
WebRTC_NOW and WebRTC14 (WebRTC's table-driven FEC, `edge_webrtc`/`edge_awebrtc`, with PTO).
Hairpin-lin (eq. 7.2) runs with k = 0.5-4 on the grid. The paper's comparison (67-80 % below the
lowest-DMR baseline) is against WebRTC_NOW + PTO on production traces.

GCC integration (§7.4.5.4, Fig 7.16; released `generate_conf_cc.sh`): send-side GCC sets the
encoder to half its target, the rest caps parity (`gcc = true`, `edge_stream/rate.rs`); Wi-Fi
sessions whose bandwidth moves within 2-30 Mbit/s, the link at 1.5 × that bandwidth with a
1000-packet DropTail queue; RTX, Bolot, USF, WebRTC_NOW and WebRTC14 with dup-ACK and PTO, and
Hairpin (dup-ACK, λ = 1e-7) as the released script runs them.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from rtclab.repro import Cause, Job, Reproduction, Row

DURATION_S = 30
POLICIES = {
    "Hairpin": ("edge_hairpin", {}),
    "Hairpin-one": ("edge_hairpinone", {}),
    "RTX (dup-ACK)": ("edge_rtx", {}),
    "RTX (PTO)": ("edge_rtx", {"pto": True}),
    "FEC 50 % + RTX": ("edge_fixed", {"beta": 0.5, "pto": True}),
    "Bolot + PTO": ("edge_bolot", {"pto": True}),
    "USF + PTO": ("edge_usf", {"pto": True}),
    "WebRTC_NOW + PTO": ("edge_webrtc", {"pto": True}),
    "WebRTC14 + PTO": ("edge_awebrtc", {"pto": True}),
}
BASELINES = ("RTX (dup-ACK)", "RTX (PTO)", "FEC 50 % + RTX", "Bolot + PTO", "USF + PTO", "WebRTC_NOW + PTO",
             "WebRTC14 + PTO")
LOSSES = (0.01, 0.05, 0.10, 0.20)
RTTS = (10, 20, 40)
#: Hairpin-lin's coefficients (Fig 7.13).
LIN_K = (0.5, 1, 2, 4)
BURSTY = {"model": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.2, "loss_in_bad": 1.0}
#: The GCC-integration runs (released `generate_conf_cc.sh`): five redundancy baselines × dup-ACK/PTO, and
#: Hairpin with dup-ACK at λ = 1e-7.
CC_POLICIES = {
    **{f"{name}{' + PTO' if pto else ''}": (kind, {"pto": True} if pto else {})
       for name, kind in (("RTX", "edge_rtx"), ("Bolot", "edge_bolot"), ("USF", "edge_usf"),
                          ("WebRTC_NOW", "edge_webrtc"), ("WebRTC14", "edge_awebrtc"))
       for pto in (False, True)},
    "Hairpin (λ = 1e-7)": ("edge_hairpin", {"lambda_exp": 7}),
    "Hairpin (λ = 1e-4)": ("edge_hairpin", {"lambda_exp": 4}),
}
#: Run again on a link 10 × the bandwidth: with no self-inflicted queue, what is left is loss.
CC_WIDE = ("USF", "RTX", "Hairpin (λ = 1e-7)")


def scenario(name: str, kind: str, params: dict, loss: dict, rtt_ms: float) -> dict:
    p = {"frame_packets": 25, "deadline_ms": 100, **params}
    return {"name": name, "duration": f"{DURATION_S}s",
            "link": {"capacity": "1Gbps", "loss": loss},
            "flows": [{"name": "game", "kind": kind, "rtt": f"{rtt_ms}ms", "params": p}]}


def iid(rate: float) -> dict:
    return {"model": "iid", "rate": rate}


def metric(res, name: str) -> float:
    return float(res.summary["flows"][0]["metrics"][name])


TRACE_SECONDS = 60


def trace_scenario(name: str, kind: str, params: dict, trace: Path) -> dict:
    p = {"frame_packets": 25, "deadline_ms": 100, **params}
    return {"name": name, "duration": f"{TRACE_SECONDS}s",
            "link": {"capacity": "1Gbps", "queue": {"limit": "1000pkt"},
                     "conditions": {"trace": str(trace), "format": "hairpin"}},
            "flows": [{"name": "game", "kind": kind, "rtt": "0.1ms", "params": p}]}


def cc_scenario(name: str, kind: str, params: dict, trace: Path, capacity: Path) -> dict:
    p = {"gcc": True, "deadline_ms": 100, **params}
    return {"name": name, "duration": f"{TRACE_SECONDS}s",
            "link": {"capacity": {"trace": str(capacity), "format": "bandwidth"}, "queue": {"limit": "1000pkt"},
                     "conditions": {"trace": str(trace), "format": "hairpin"}},
            "flows": [{"name": "game", "kind": kind, "rtt": "0.1ms", "params": p}]}


def mean_rtt_ms(trace: Path) -> float:
    rtts = [float(line.split()[1][:-2]) for line in trace.read_text().splitlines() if line and not line.startswith("#")]
    return statistics.fmean(rtts)


_DOC = "docs/algorithms/hairpin.md"
#: The cause of a reduction row whose baseline missed no deadline: there is nothing to reduce.
NO_MISS = ("no deadline missed by the baseline on these sessions (DMR 0), so there is no reduction to compare; "
           "`rtclab repro hairpin --runs 3` runs more sessions")
#: Where the dissertation and the released code (hkust-spark/hairpin) differ, which one the rows
#: follow (spec §3.12; `rtclab.repro.note_follows`).
TEXT_OR_CODE = [
    Cause(".*", "follows the released code: λ = 1e-7 unless the variant names 1e-4 (the text's), opportunities "
          "L = ⌊(left − RTT)/RTT⌋ with RTT = ⌈srtt + rttvar⌉ (text, eq. 7.3: one layer more, L = left/RTT), tables over L 1-15 × F 5-55 "
          "(text: 1-10 × 5-60), block-size optimisation off as shipped"),
]
#: What explains the rows that are not reproduced (`rtclab.repro.explain`), first match wins.
GAP_CAUSES = [
    Cause(r"Grid", f"Hairpin's frame delay is 6.8 ms below retransmission only: its FEC saves retransmission rounds; the "
          f"paper's +0.1-1.5 ms was measured against baselines that include FEC-heavy WebRTC ({_DOC}, 'Measured'; "
          f"`rtclab repro hairpin`)", metric=r"mean frame delay"),
    Cause(r"Trace set", "open: the production traces are not public; the synthetic sessions (hairpin_traces.py) give "
          "too few losses at the wired set for a reduction (no baseline miss) and the others differ in burstiness",
          metric="DMR reduction"),
    Cause(r"Loss-window sensitivity", "open: the published 0.47-0.49 % is Hairpin's DMR on the production Wi-Fi traces, "
          "which are not public; this sweep runs Gilbert-Elliott bursty loss at RTT 40 ms instead (its own DMR scale)"),
]


def build(runs: int = 10) -> Reproduction:
    import atexit
    import shutil
    import tempfile

    from rtclab.repro.hairpin_traces import write_cc_set, write_sets

    seeds = range(1, min(runs, 3) + 1)
    jobs: list[Job] = []
    tdir = Path(tempfile.mkdtemp(prefix="rtclab-hairpin-traces-"))
    atexit.register(shutil.rmtree, tdir, True)
    traces = write_sets(tdir, sessions=2 * len(seeds), seconds=TRACE_SECONDS)
    for set_name, paths in traces.items():
        for pol, (kind, params) in POLICIES.items():
            for i, path in enumerate(paths):
                jobs.append(Job(("trace", set_name, pol, i), trace_scenario(f"{set_name}-{i}-{pol}", kind, params, path)))
    cc_traces = write_cc_set(tdir, sessions=2 * len(seeds), seconds=TRACE_SECONDS)
    for pol, (kind, params) in CC_POLICIES.items():
        for i, (path, cap, wide) in enumerate(cc_traces):
            jobs.append(Job(("cc", pol, i), cc_scenario(f"gcc-wifi-{i}-{pol}", kind, params, path, cap)))
            if pol in CC_WIDE:
                jobs.append(Job(("ccwide", pol, i), cc_scenario(f"gcc-wifi-wide-{i}-{pol}", kind, params, path, wide)))

    def add(key: tuple, kind: str, params: dict, loss: dict, rtt: float) -> None:
        for s in seeds:
            jobs.append(Job(key + (s,), scenario("-".join(map(str, key)), kind, params, loss, rtt), seed=s))

    for pol in ("Hairpin", "RTX (dup-ACK)", "RTX (PTO)", "WebRTC_NOW + PTO"):
        add(("accept", pol), *POLICIES[pol], iid(0.2), 20)
    add(("accept", "FEC 100 % + RTX"), "edge_fixed", {"beta": 1.0, "pto": True}, iid(0.2), 20)
    for loss in LOSSES:
        for rtt in RTTS:
            for pol, (kind, params) in POLICIES.items():
                add(("grid", pol, loss, rtt), kind, params, iid(loss), rtt)
    for pol, (kind, params) in POLICIES.items():
        add(("bursty", pol), kind, params, BURSTY, 20)
    for k in LIN_K:
        for loss in LOSSES:
            for rtt in RTTS:
                add(("lin", k, loss, rtt), "edge_lin", {"k": k, "pto": True}, iid(loss), rtt)
    for ddl in (50, 100, 200):
        for pol in ("Hairpin", "RTX (PTO)", "FEC 50 % + RTX"):
            kind, params = POLICIES[pol]
            add(("ddl", pol, ddl), kind, {**params, "deadline_ms": ddl}, iid(0.20), 20)
    for pol in ("Hairpin", "FEC 50 % + RTX"):
        kind, params = POLICIES[pol]
        add(("corner", pol), kind, {**params, "deadline_ms": 50}, iid(0.20), 40)
    for exp in range(1, 8):
        add(("lambda", exp), "edge_hairpin", {"lambda_exp": exp}, iid(0.20), 40)
    for frames in (1, 2, 4, 8):
        add(("window", frames), "edge_hairpin", {"window_ms": round(frames * 1000 / 60, 3)}, BURSTY, 40)

    def mean(res, key: tuple, name: str) -> float:
        return statistics.fmean(metric(res[key + (s,)], name) for s in seeds)

    def evaluate(res) -> list[Row]:
        from rtclab import hairpin

        rows: list[Row] = []
        t = "Offline table (462,825 cells per λ)"
        for lam in (1e-4, 1e-7):
            table, info = hairpin.table_report(lam, None)
            pub = info.get("published")
            rows.append(Row(t, f"λ = {lam:g}", "cells equal to the published table",
                            None if pub is None else float(pub["matching"]), "462825 (bit-identical, §3.10)",
                            "" if pub else f"no published table for λ = {lam:g} in {hairpin.published_dir()}"))
            g = info["golden_vectors"]
            rows.append(Row(t, f"λ = {lam:g}", "spec §3.11 golden cells matching", float(g["matching"]),
                            f"{g['checked']}"))
            rows.append(Row(t, f"λ = {lam:g}", "solve time (s)", info["solve_seconds"], "< 10 s (issue)",
                            "all cores"))
        rows.append(Row(t, "λ = 1e-07", "lookup time (ms, from Python)", hairpin.lookup_time(table) * 1e3, "< 1 ms"))

        t = "Acceptance (§3.10): Bernoulli 20 %, RTT 20 ms, deadline 100 ms, 25-packet frames"
        acc = {p: (mean(res, ("accept", p), "dmr"), mean(res, ("accept", p), "bwc"))
               for p in ("Hairpin", "RTX (dup-ACK)", "RTX (PTO)", "WebRTC_NOW + PTO", "FEC 100 % + RTX")}
        for p, (dmr, bwc) in acc.items():
            rows.append(Row(t, p, "DMR", dmr, "Hairpin < RTX" if p == "Hairpin" else ""))
            rows.append(Row(t, p, "BWC", bwc, "Hairpin ≪ WebRTC_NOW" if p == "Hairpin" else "",
                            "a fixed 100 % FEC for scale" if p.startswith("FEC 100") else ""))

        t = "Grid: i.i.d. loss × RTT (deadline 100 ms), mean over cells"
        avg = {p: (statistics.fmean(mean(res, ("grid", p, lo, r), "dmr") for lo in LOSSES for r in RTTS),
                   statistics.fmean(mean(res, ("grid", p, lo, r), "bwc") for lo in LOSSES for r in RTTS))
               for p in POLICIES}
        for p, (dmr, bwc) in avg.items():
            rows.append(Row(t, p, "DMR", dmr, ""))
            rows.append(Row(t, p, "BWC", bwc, "comparable to RTX" if p == "Hairpin" else ""))
        best = min(BASELINES, key=lambda p: avg[p][0])
        red = None if avg[best][0] == 0 else 1 - avg["Hairpin"][0] / avg[best][0]
        rows.append(Row(t, f"Hairpin vs {best}", "DMR reduction vs lowest-DMR baseline", red,
                        "0.67-0.80 (vs WebRTC_NOW+PTO)", f"BWC {avg['Hairpin'][1]:.3f} vs {avg[best][1]:.3f}",
                        better="higher"))
        w = avg["WebRTC_NOW + PTO"]
        rows.append(Row(t, "Hairpin vs WebRTC_NOW + PTO", "DMR reduction", None if w[0] == 0 else 1 - avg["Hairpin"][0] / w[0],
                        "0.67-0.80", f"BWC {avg['Hairpin'][1]:.3f} vs {w[1]:.3f}", better="higher"))
        lat = statistics.fmean(mean(res, ("grid", "Hairpin", lo, r), "frame_delay_ms_mean")
                               - mean(res, ("grid", "RTX (PTO)", lo, r), "frame_delay_ms_mean")
                               for lo in LOSSES for r in RTTS)
        rows.append(Row(t, "Hairpin − RTX (PTO)", "mean frame delay difference (ms)", lat, "+0.1 to +1.5 ms",
                        "negative: FEC saves retransmission rounds", better="lower"))
        for lo in LOSSES:
            for r in RTTS:
                for p in ("Hairpin", "RTX (PTO)"):
                    rows.append(Row("Grid cells", f"{p}, loss {lo:.0%}, RTT {r} ms", "DMR / BWC",
                                    mean(res, ("grid", p, lo, r), "dmr"), "",
                                    f"BWC {mean(res, ('grid', p, lo, r), 'bwc'):.3f}"))

        for set_name, paths in traces.items():
            t = f"Trace set {set_name} ({len(paths)} synthetic sessions of {TRACE_SECONDS} s)"
            per = {p: [metric(res[("trace", set_name, p, i)], "dmr") for i in range(len(paths))] for p in POLICIES}
            bwc = {p: statistics.fmean(metric(res[("trace", set_name, p, i)], "bwc") for i in range(len(paths)))
                   for p in POLICIES}
            for p in POLICIES:
                worst = max(range(len(paths)), key=lambda i: per[p][i])
                est = metric(res[("trace", set_name, p, worst)], "loss_estimate_mean")
                rows.append(Row(t, p, "DMR (mean over sessions)", statistics.fmean(per[p]), "",
                                f"BWC {bwc[p]:.3f}; worst session {worst}: DMR {per[p][worst]:.5f}, mean RTT "
                                f"{mean_rtt_ms(paths[worst]):.0f} ms, loss estimate {est:.3f}"))
            best = min(BASELINES, key=lambda p: statistics.fmean(per[p]))
            b = statistics.fmean(per[best])
            rows.append(Row(t, f"Hairpin vs {best}", "DMR reduction vs lowest-DMR baseline",
                            None if b == 0 else 1 - statistics.fmean(per["Hairpin"]) / b,
                            "0.67-0.80 (vs WebRTC_NOW+PTO, production traces)",
                            f"BWC Hairpin {bwc['Hairpin']:.3f}, RTX (PTO) {bwc['RTX (PTO)']:.3f}", better="higher",
                            cause=NO_MISS if b == 0 else None))
            w = statistics.fmean(per["WebRTC_NOW + PTO"])
            rows.append(Row(t, "Hairpin vs WebRTC_NOW + PTO", "DMR reduction",
                            None if w == 0 else 1 - statistics.fmean(per["Hairpin"]) / w, "0.67-0.80 (production traces)",
                            f"BWC Hairpin {bwc['Hairpin']:.3f}, WebRTC_NOW {bwc['WebRTC_NOW + PTO']:.3f}",
                            better="higher", cause=NO_MISS if w == 0 else None))

        t = (f"GCC integration (Fig 7.16): Wi-Fi sessions, bandwidth 2-30 Mbit/s, link 1.5 × bandwidth "
             f"({len(cc_traces)} sessions of {TRACE_SECONDS} s)")
        n = range(len(cc_traces))

        def cc_means(exp: str, pols) -> dict:
            out = {}
            for p in pols:
                m = {k: statistics.fmean(metric(res[(exp, p, i)], k) for i in n)
                     for k in ("dmr", "bwc", "cc_target_mbps", "encoder_mbps_mean", "frame_delay_ms_mean")}
                m["queue_p99"] = statistics.fmean(res[(exp, p, i)].summary["link"]["queuing_delay_ms"]["p99"] for i in n)
                m["worst"] = max(metric(res[(exp, p, i)], "dmr") for i in n)
                out[p] = m
            return out

        cc = cc_means("cc", CC_POLICIES)
        hairpins = [p for p in CC_POLICIES if p.startswith("Hairpin")]
        for p, m in cc.items():
            rows.append(Row(t, p, "DMR (mean over sessions)", m["dmr"],
                            "Hairpin below every baseline" if p in hairpins else "",
                            f"BWC {m['bwc']:.3f}; worst session {m['worst']:.4f}; link queue p99 {m['queue_p99']:.0f} ms; "
                            f"encoder {m['encoder_mbps_mean']:.1f} Mbit/s, GCC target at the end "
                            f"{m['cc_target_mbps']:.1f} Mbit/s"))
        base = [p for p in CC_POLICIES if p not in hairpins]
        best = min(base, key=lambda p: cc[p]["dmr"])
        for hp in hairpins:
            rows.append(Row(t, f"{hp} vs {best}", "DMR reduction vs lowest-DMR baseline",
                            None if cc[best]["dmr"] == 0 else 1 - cc[hp]["dmr"] / cc[best]["dmr"],
                            "\"significant advantages over all baselines\" (no number printed)",
                            f"BWC {cc[hp]['bwc']:.3f} vs {cc[best]['bwc']:.3f}" + (
                                "; the released script's λ" if "1e-7" in hp else "; the dissertation's λ")))
        t = "GCC integration, cause: the same sessions on a link 10 × the bandwidth (no self-inflicted queue)"
        wide = cc_means("ccwide", CC_WIDE)
        for p, m in wide.items():
            rows.append(Row(t, p, "DMR (mean over sessions)", m["dmr"], "",
                            f"BWC {m['bwc']:.3f}; link queue p99 {m['queue_p99']:.0f} ms (1.5 × link: "
                            f"{cc[p]['queue_p99']:.0f} ms, DMR {cc[p]['dmr']:.5f})"))

        t = "Hairpin-lin (eq. 7.2, WebRTC_NOW × k·RTT/t on every round, PTO): grid mean"
        for k in LIN_K:
            dmr = statistics.fmean(mean(res, ("lin", k, lo, r), "dmr") for lo in LOSSES for r in RTTS)
            bwc = statistics.fmean(mean(res, ("lin", k, lo, r), "bwc") for lo in LOSSES for r in RTTS)
            rows.append(Row(t, f"k = {k:g}", "DMR", dmr, "closes about half the gap (Fig 7.13)" if k == 1 else "",
                            f"BWC {bwc:.3f}; WebRTC_NOW {avg['WebRTC_NOW + PTO'][0]:.5f} / "
                            f"{avg['WebRTC_NOW + PTO'][1]:.3f}, Hairpin {avg['Hairpin'][0]:.5f} / {avg['Hairpin'][1]:.3f}"))

        t = "Bursty loss (Gilbert-Elliott, 4.8 % mean, bursts of 5), RTT 20 ms"
        for p in POLICIES:
            rows.append(Row(t, p, "DMR", mean(res, ("bursty", p), "dmr"), ""))
            rows.append(Row(t, p, "BWC", mean(res, ("bursty", p), "bwc"), ""))

        t = "Deadline sensitivity (loss 20 %, RTT 20 ms)"
        for ddl in (50, 100, 200):
            for p in ("Hairpin", "RTX (PTO)", "FEC 50 % + RTX"):
                rows.append(Row(t, f"{p}, deadline {ddl} ms", "DMR", mean(res, ("ddl", p, ddl), "dmr"),
                                "gain shrinks at 50 ms, grows at 200 ms" if p == "Hairpin" and ddl == 50 else "",
                                f"BWC {mean(res, ('ddl', p, ddl), 'bwc'):.3f}"))

        t = "No retransmission fits: RTT 40 ms, deadline 50 ms, loss 20 %"
        for p in ("Hairpin", "FEC 50 % + RTX"):
            rows.append(Row(t, p, "DMR", mean(res, ("corner", p), "dmr"), "",
                            f"loss estimate {mean(res, ('corner', p), 'loss_estimate_mean'):.3f}: the released "
                            "estimator counts retransmitted packets, none fit before this deadline"))

        t = "λ sensitivity (loss 20 %, RTT 40 ms)"
        for exp in range(1, 8):
            rows.append(Row(t, f"λ = 1e-{exp}", "DMR", mean(res, ("lambda", exp), "dmr"),
                            "falls as λ falls" if exp == 7 else "",
                            f"BWC {mean(res, ('lambda', exp), 'bwc'):.3f} (rises as λ falls)"))

        t = "Loss-window sensitivity (bursty loss, RTT 40 ms)"
        for frames in (1, 2, 4, 8):
            rows.append(Row(t, f"{frames} frame(s)", "DMR", mean(res, ("window", frames), "dmr"),
                            "0.47-0.49 % on the Wi-Fi traces",
                            f"BWC {mean(res, ('window', frames), 'bwc'):.3f} (paper: 6.94-7.19 %)"))
        return rows

    def plots(res, out: Path) -> list[tuple[str, Path]]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        def finish(fig, ax, title: str, name: str, legend: int = 8) -> Path:
            """DMR-vs-BWC axes, the legend, and the file `name` under `out`."""
            ax.set_xlabel("bandwidth cost (BWC)")
            ax.set_ylabel("deadline miss rate (DMR)")
            ax.set_yscale("symlog", linthresh=1e-4)
            ax.set_title(title)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=legend)
            path = out / name
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            plt.close(fig)
            return path

        fig, ax = plt.subplots(figsize=(6, 4.2))
        for p in POLICIES:
            xs = [statistics.fmean(mean(res, ("grid", p, lo, r), "bwc") for r in RTTS) for lo in LOSSES]
            ys = [statistics.fmean(mean(res, ("grid", p, lo, r), "dmr") for r in RTTS) for lo in LOSSES]
            ax.plot(xs, ys, marker="o", label=p)
        out_plots = [("DMR vs BWC (Pareto)",
                      finish(fig, ax, "DMR vs BWC, loss 1-20 % (mean over RTT 10-40 ms)", "pareto.png"))]
        fig, axes = plt.subplots(1, len(traces), figsize=(4 * len(traces), 3.6), sharey=True)
        for ax, (set_name, paths) in zip(axes, traces.items()):
            for p in POLICIES:
                xs = [metric(res[("trace", set_name, p, i)], "bwc") for i in range(len(paths))]
                ys = [metric(res[("trace", set_name, p, i)], "dmr") for i in range(len(paths))]
                ax.scatter(xs, ys, label=p, s=18)
            ax.set_title(f"{set_name} sessions")
            ax.set_xlabel("BWC")
            ax.set_yscale("symlog", linthresh=1e-4)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("DMR")
        axes[-1].legend(fontsize=7)
        fig.tight_layout()
        p2 = out / "pareto-traces.png"
        fig.savefig(p2, dpi=110)
        plt.close(fig)
        out_plots.append(("DMR vs BWC per synthetic trace set (one point per session)", p2))
        fig, ax = plt.subplots(figsize=(6, 4.2))
        for p in CC_POLICIES:
            xs = [metric(res[("cc", p, i)], "bwc") for i in range(len(cc_traces))]
            ys = [metric(res[("cc", p, i)], "dmr") for i in range(len(cc_traces))]
            ax.scatter([statistics.fmean(xs)], [statistics.fmean(ys)], label=p, s=30,
                       marker="*" if p.startswith("Hairpin") else "o")
        out_plots.append(("DMR vs BWC with GCC setting the rate (Fig 7.16)",
                          finish(fig, ax, "With GCC: Wi-Fi sessions, 2-30 Mbit/s (mean over sessions)",
                                 "pareto-gcc.png", legend=7)))
        # The synthetic sessions the runs replayed, for inspection and reuse.
        shutil.copytree(tdir, out / "traces", dirs_exist_ok=True)
        return out_plots

    notes = [
        "Frames of 25 data packets at 60 fps sent at once over an unconstrained link with forward i.i.d. or "
        "Gilbert-Elliott loss; every packet acknowledged; deadline 100 ms unless stated (spec §3.8 set-up).",
        "The paper's 67-80 % is against WebRTC_NOW + PTO on the production traces (ours: synthetic trace sets).",
        "GCC integration: Hairpin at the released script's λ = 1e-7 sends the most parity; where capacity dips "
        "it fills the 1000-packet queue (retransmissions are not held to the quota, as released) and misses "
        "deadlines by queueing, not loss: the rows on a 10 × link show it (docs/algorithms/hairpin.md).",
        "GCC integration: ours is today's send-side GCC (libwebrtc goog_cc) with periodic ALR probing, where the "
        "released simulator ran the RMCAT ns-3 GCC; libwebrtc caps increases at 1.5 × the acknowledged rate, and "
        "this sender leaves half the target to FEC, so without ALR probes GCC stays where its first probes put it "
        "(params gcc_alr_probing = false shows it). NADA is not implemented.",
        "WebRTC_NOW/WebRTC14 read WebRTC's kFecRateTable and VCMNackFecTable, vendored as data "
        "(crates/rtclab-transport/data/, BSD notice); the FEC logic is ours (edge_stream/webrtc.rs).",
        "The solver is ours; the published tables are only compared against (docs/algorithms/hairpin.md).",
        "Trace sets are synthetic (rtclab/repro/hairpin_traces.py documents how); the sessions replayed are in "
        "traces/ of the output.",
    ]
    return Reproduction("hairpin", "Hairpin (Meng et al., NSDI 2024; dissertation ch. 7)", jobs, evaluate, [], notes,
                        extra_plots=plots)
